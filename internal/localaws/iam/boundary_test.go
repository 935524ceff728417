package iam_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// A permissions boundary caps the role's policies: an action its inline
// policy allows is denied unless the boundary allows it too, and removing
// the boundary lifts the cap.
func TestPermissionsBoundaryCapsTheRole(t *testing.T) {
	t.Parallel()
	e := start(t, 0)
	ctx := t.Context()
	onlyLogs := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"logs:*","Resource":"*"}]}`
	boundary := aws.ToString(e.createPolicy(t, "only-logs", onlyLogs).Arn)
	if _, err := e.iam.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("x"), AssumeRolePolicyDocument: aws.String(lambdaTrust),
		PermissionsBoundary: aws.String("arn:aws:iam::000000000000:policy/missing")}); err == nil {
		t.Fatal("CreateRole accepted a boundary that does not exist")
	} else {
		localawstest.WantCode(t, err, "NoSuchEntity", "CreateRole with a missing boundary")
	}
	out, err := e.iam.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("bounded"), Path: aws.String("/outbox/"),
		AssumeRolePolicyDocument: aws.String(lambdaTrust), PermissionsBoundary: aws.String(boundary)})
	if err != nil {
		t.Fatal(err)
	}
	roleArn := aws.ToString(out.Role.Arn)
	if !strings.Contains(roleArn, ":role/outbox/bounded") {
		t.Errorf("role ARN %s does not carry the path", roleArn)
	}
	putTable := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"dynamodb:PutItem","Resource":"` + tableArn + `"}]}`
	e.putRolePolicy(t, "bounded", "p", putTable)
	got, err := e.iam.GetRole(ctx, &awsiam.GetRoleInput{RoleName: aws.String("bounded")})
	if err != nil || got.Role.PermissionsBoundary == nil || aws.ToString(got.Role.PermissionsBoundary.PermissionsBoundaryArn) != boundary {
		t.Fatalf("GetRole does not report the boundary: %+v (%v)", got, err)
	}
	ddb, _ := e.roleClients(t, roleArn)
	err = putItem(ctx, ddb)
	// The denial names the boundary.
	wantMessage(t, err, "AccessDeniedException", "no permissions boundary allows the dynamodb:PutItem action")
	if _, err := e.iam.DeletePolicy(ctx, &awsiam.DeletePolicyInput{PolicyArn: aws.String(boundary)}); err == nil {
		t.Error("DeletePolicy deleted a policy in use as a boundary")
	}
	if _, err := e.iam.DeleteRolePermissionsBoundary(ctx, &awsiam.DeleteRolePermissionsBoundaryInput{RoleName: aws.String("bounded")}); err != nil {
		t.Fatal(err)
	}
	if err := putItem(ctx, ddb); err != nil {
		t.Fatalf("PutItem without the boundary: %v", err)
	}
	if _, err := e.iam.PutRolePermissionsBoundary(ctx, &awsiam.PutRolePermissionsBoundaryInput{RoleName: aws.String("bounded"), PermissionsBoundary: aws.String(boundary)}); err != nil {
		t.Fatal(err)
	}
	if err := putItem(ctx, ddb); err == nil {
		t.Fatal("PutItem allowed again after the boundary was put back")
	}
}
