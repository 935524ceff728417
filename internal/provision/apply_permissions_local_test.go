package provision

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// applierAs returns a Provisioner with the credentials of a new role that
// may perform only actions (on every resource: the test checks the list of
// actions, not their scoping).
func applierAs(t *testing.T, ctx context.Context, stack *localaws.Stack, admin *Provisioner, role string, actions []string) *Provisioner {
	t.Helper()
	created, err := admin.IAM.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(role),
		AssumeRolePolicyDocument: aws.String(TrustPolicy("lambda.amazonaws.com", "").JSON())})
	if err != nil {
		t.Fatal(err)
	}
	policy, err := json.Marshal(PolicyDocument{Version: policyVersion, Statement: []Statement{allow("Apply", actions, "*")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.IAM.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: created.Role.RoleName, PolicyName: aws.String("apply"), PolicyDocument: aws.String(string(policy))}); err != nil {
		t.Fatal(err)
	}
	c := New(localawstest.RoleConfig(stack, aws.ToString(created.Role.Arn)), admin.Code)
	c.PropagationTimeout = 10 * time.Second
	c.WaitTimeout, c.PollInterval = admin.WaitTimeout, admin.PollInterval
	return c
}

// applyActions are the documented actions for the settings named.
func applyActions(with ...string) []string {
	var out []string
	for _, p := range ApplyPermissions() {
		if p.With == "" || slices.Contains(with, p.With) {
			out = append(out, p.Actions...)
		}
	}
	return out
}

// An identity holding exactly the documented actions creates, reads,
// updates and destroys a pipeline with a reconciler, and one without
// dynamodb:UpdateContinuousBackups cannot: the stack enforces the list.
func TestLocalApplyWithTheDocumentedPermissions(t *testing.T) {
	t.Parallel()
	stack, admin, ctx := startStack(t, append(coreServices, "scheduler", "cloudwatch")...)
	c := applierAs(t, ctx, stack, admin, "applier", applyActions("`alarms`"))
	spec := Spec{Name: "exact", Alarms: AlarmsSpec{Enabled: true}}
	st := must.Create(t, ctx, c, spec)
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Errorf("Read after Create reports drift: %s", drift)
	}
	spec.Tags = map[string]string{"team": "payments"}
	st = must.Update(t, ctx, c, spec, st, "tagging")
	must.Delete(t, ctx, c, st, "Delete")

	short := slices.DeleteFunc(applyActions(), func(a string) bool { return a == "dynamodb:UpdateContinuousBackups" })
	_, err := applierAs(t, ctx, stack, admin, "short", short).Create(ctx, Spec{Name: "short"})
	if err == nil || !strings.Contains(err.Error(), "UpdateContinuousBackups") {
		t.Errorf("Create without dynamodb:UpdateContinuousBackups: %v, want it denied", err)
	}
}

// The claim check's bucket, the permissions boundary and the VPC need
// exactly their documented actions besides the pipeline's.
func TestLocalApplyWithTheDocumentedPermissionsOfSettings(t *testing.T) {
	t.Parallel()
	stack, admin, ctx := startStack(t, append(coreServices, "scheduler", "s3")...)
	boundary, err := admin.IAM.CreatePolicy(ctx, &iam.CreatePolicyInput{PolicyName: aws.String("boundary"),
		PolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	c := applierAs(t, ctx, stack, admin, "applier", applyActions("`claim_check`", "`iam.permissions_boundary`", "`relay.vpc_config`"))
	spec := Spec{Name: "settings", ClaimCheck: ClaimCheckSpec{Enabled: true},
		Controls: LambdaControls{SubnetIDs: []string{"subnet-0a1"}, SecurityGroupIDs: []string{"sg-0c3"}}}
	st := must.Create(t, ctx, c, spec)
	spec.IAM.PermissionsBoundary = aws.ToString(boundary.Policy.Arn)
	st = must.Update(t, ctx, c, spec, st, "setting the boundary")
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Errorf("Read after setting the boundary reports drift: %s", drift)
	}
	spec.IAM.PermissionsBoundary = ""
	st = must.Update(t, ctx, c, spec, st, "removing the boundary")
	must.Delete(t, ctx, c, st, "Delete")
}
