package operate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// runAs runs the command line with the credentials of a new role that may
// perform only actions.
func (d *deployed) runAs(role string, actions []string, args ...string) (stdout, stderr string, code int) {
	d.t.Helper()
	return d.runWithPolicy(role, []map[string]any{{"Effect": "Allow", "Action": actions, "Resource": "*"}}, args...)
}

// runWithPolicy runs the command line with the credentials of a new role
// whose policy has the statements.
func (d *deployed) runWithPolicy(role string, statements []map[string]any, args ...string) (stdout, stderr string, code int) {
	d.t.Helper()
	client := iam.NewFromConfig(d.cfg)
	trust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000000:root"},"Action":"sts:AssumeRole"}]}`
	created, err := client.CreateRole(d.ctx, &iam.CreateRoleInput{RoleName: aws.String(role), AssumeRolePolicyDocument: aws.String(trust)})
	if err != nil {
		d.t.Fatal(err)
	}
	policy, err := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": statements})
	if err != nil {
		d.t.Fatal(err)
	}
	if _, err := client.PutRolePolicy(d.ctx, &iam.PutRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String("outbox"), PolicyDocument: aws.String(string(policy))}); err != nil {
		d.t.Fatal(err)
	}
	out, err := sts.NewFromConfig(d.cfg).AssumeRole(d.ctx, &sts.AssumeRoleInput{RoleArn: created.Role.Arn, RoleSessionName: aws.String("ops")})
	if err != nil {
		d.t.Fatal(err)
	}
	c := out.Credentials
	cfg := localawstest.ConfigWithCredentials(d.stack, aws.ToString(c.AccessKeyId), aws.ToString(c.SecretAccessKey), aws.ToString(c.SessionToken))
	var o, e bytes.Buffer
	cli := &CLI{Stdout: &o, Stderr: &e, Config: func(context.Context, Settings) (aws.Config, error) { return cfg, nil }}
	code = cli.Run(d.ctx, args)
	d.t.Logf("$ outbox %s (as %s)\n%s%s(exit %d)", strings.Join(args, " "), role, o.String(), e.String(), code)
	return o.String(), e.String(), code
}

// An operator allowed to find the pipeline but not to query its index is
// told which permission to grant, on what.
func TestLocalDeniedCallNamesThePermission(t *testing.T) {
	t.Parallel()
	d := deploy(t, provision.Spec{Name: "denied", Reconciler: provision.ReconcilerSpec{Disabled: true}})
	_, stderr, code := d.runAs("find-only", findPermissions, "status", "denied")
	want := "dynamodb:Query on index outbox-pending of table denied-outbox was denied: grant dynamodb:Query on it"
	if code != ExitFailed || !strings.Contains(stderr, want) {
		t.Errorf("status without dynamodb:Query: exit %d, want the error %q", code, want)
	}
}

// Each subcommand runs with exactly the permissions its help and the
// operations guide list.
func TestLocalSubcommandsNeedOnlyTheirPermissions(t *testing.T) {
	t.Parallel()
	d := deploy(t, provision.Spec{Name: "perms"})
	d.putFailed(2, "com.example.perms", func(int) string { return "EventBridge: AccessDeniedException" })
	perms := map[string][]string{}
	for _, c := range commands() {
		perms[c.name] = append(findPermissions, c.permissions...)
	}
	for i, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"status", "perms"}, ExitStuck},
		{[]string{"failed", "perms"}, ExitOK},
		{[]string{"requeue", "perms", "--now"}, ExitOK},
		{[]string{"drain", "perms", "--timeout", "1m", "--interval", "200ms"}, ExitOK},
		{[]string{"replay", "perms", "--since", "1h"}, ExitOK},
		{[]string{"redrive", "perms"}, ExitOK},
		{[]string{"status", "perms"}, ExitOK},
	} {
		role := fmt.Sprintf("%s-%d", tc.args[0], i)
		if _, stderr, code := d.runAs(role, perms[tc.args[0]], tc.args...); code != tc.code || strings.Contains(stderr, "outbox: ") && tc.code == ExitOK {
			t.Errorf("outbox %s with its permissions: exit %d, want %d; %s", strings.Join(tc.args, " "), code, tc.code, stderr)
		}
	}
}

// skip needs exactly its listed permissions, and a denied transaction
// names the IAM action that authorises its updates, not the operation.
func TestLocalSkipNeedsOnlyItsPermissions(t *testing.T) {
	t.Parallel()
	d := deployQueueTarget(t, "skipperm-target.fifo", provision.Spec{Name: "skipperm", Ordered: true})
	table := d.writer.Table()
	events := d.putFailedOrdered("com.example.skip", "acct-1", 2)
	var perms []string
	for _, c := range commands() {
		if c.name == "skip" {
			perms = append(slices.Clone(findPermissions), c.permissions...)
		}
	}
	without := slices.DeleteFunc(slices.Clone(perms), func(a string) bool { return a == "dynamodb:UpdateItem" })
	_, stderr, code := d.runAs("skip-denied", without, "skip", "skipperm", "--event-id", events[0].EventID, "--yes")
	if want := "grant dynamodb:UpdateItem on it"; code != ExitFailed || !strings.Contains(stderr, want) {
		t.Errorf("skip without dynamodb:UpdateItem: exit %d, want the error %q; %s", code, want, stderr)
	}
	if _, stderr, code := d.runAs("skip-allowed", perms, "skip", "skipperm", "--event-id", events[0].EventID, "--yes"); code != ExitOK {
		t.Errorf("skip with its permissions %v: exit %d; %s", perms, code, stderr)
	}
	if got := d.status(table, events[0]); got != string(outbox.StatusSkipped) {
		t.Errorf("the event is %s after skip, want SKIPPED", got)
	}
}
