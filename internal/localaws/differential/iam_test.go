package differential_test

import (
	"sort"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

const (
	relayPolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["events:PutEvents"],"Resource":"*"}]}`
	boundary    = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["events:*","logs:*"],"Resource":"*"}]}`
)

func TestDifferentialIAM(t *testing.T) {
	compareOn(t, "iam/roles", iam.NewFromConfig, func(r *run, c *iam.Client) {
		pol, err := c.CreatePolicy(r.ctx, &iam.CreatePolicyInput{PolicyName: aws.String("diff-boundary"), PolicyDocument: aws.String(boundary), Path: aws.String("/diff/")})
		r.rec("CreatePolicy", pol, err)
		var boundaryARN *string
		if pol != nil {
			boundaryARN = pol.Policy.Arn
		}
		role, err := c.CreateRole(r.ctx, &iam.CreateRoleInput{RoleName: aws.String("diff-relay"), AssumeRolePolicyDocument: aws.String(localawstest.TrustPolicy("lambda.amazonaws.com")),
			Path: aws.String("/diff/"), PermissionsBoundary: boundaryARN, Description: aws.String("relay")})
		r.rec("CreateRole", role, err)
		again, err := c.CreateRole(r.ctx, &iam.CreateRoleInput{RoleName: aws.String("diff-relay"), AssumeRolePolicyDocument: aws.String(localawstest.TrustPolicy("lambda.amazonaws.com"))})
		r.rec("CreateRole again", again, err)
		bad, err := c.CreateRole(r.ctx, &iam.CreateRoleInput{RoleName: aws.String("diff-bad-trust"), AssumeRolePolicyDocument: aws.String(`{"not":"a policy"}`)})
		r.rec("CreateRole with a malformed trust policy", bad, err)
		_, err = c.PutRolePolicy(r.ctx, &iam.PutRolePolicyInput{RoleName: aws.String("diff-relay"), PolicyName: aws.String("publish"), PolicyDocument: aws.String(relayPolicy)})
		r.rec("PutRolePolicy", nil, err)
		_, err = c.PutRolePolicy(r.ctx, &iam.PutRolePolicyInput{RoleName: aws.String("diff-relay"), PolicyName: aws.String("broken"), PolicyDocument: aws.String(`not json`)})
		r.rec("PutRolePolicy malformed", nil, err)
		get, err := c.GetRole(r.ctx, &iam.GetRoleInput{RoleName: aws.String("diff-relay")})
		r.rec("GetRole", get, err)
		gp, err := c.GetRolePolicy(r.ctx, &iam.GetRolePolicyInput{RoleName: aws.String("diff-relay"), PolicyName: aws.String("publish")})
		r.rec("GetRolePolicy", gp, err)
		lp, err := c.ListRolePolicies(r.ctx, &iam.ListRolePoliciesInput{RoleName: aws.String("diff-relay")})
		r.rec("ListRolePolicies", lp, err)
		if boundaryARN != nil {
			_, err = c.AttachRolePolicy(r.ctx, &iam.AttachRolePolicyInput{RoleName: aws.String("diff-relay"), PolicyArn: boundaryARN})
			r.rec("AttachRolePolicy", nil, err)
		}
		la, err := c.ListAttachedRolePolicies(r.ctx, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String("diff-relay")})
		r.rec("ListAttachedRolePolicies", la, err)
		gpv, err := c.GetPolicyVersion(r.ctx, &iam.GetPolicyVersionInput{PolicyArn: boundaryARN, VersionId: aws.String("v1")})
		r.rec("GetPolicyVersion", gpv, err)
		_, err = c.DeleteRole(r.ctx, &iam.DeleteRoleInput{RoleName: aws.String("diff-relay")})
		r.rec("DeleteRole with policies", nil, err)
		_, err = c.DeleteRolePolicy(r.ctx, &iam.DeleteRolePolicyInput{RoleName: aws.String("diff-relay"), PolicyName: aws.String("publish")})
		r.rec("DeleteRolePolicy", nil, err)
		if boundaryARN != nil {
			_, err = c.DetachRolePolicy(r.ctx, &iam.DetachRolePolicyInput{RoleName: aws.String("diff-relay"), PolicyArn: boundaryARN})
			r.rec("DetachRolePolicy", nil, err)
			_, err = c.DeletePolicy(r.ctx, &iam.DeletePolicyInput{PolicyArn: boundaryARN})
			r.rec("DeletePolicy used as a boundary", nil, err)
		}
		_, err = c.DeleteRole(r.ctx, &iam.DeleteRoleInput{RoleName: aws.String("diff-relay")})
		r.rec("DeleteRole", nil, err)
		gone, err := c.GetRole(r.ctx, &iam.GetRoleInput{RoleName: aws.String("diff-relay")})
		r.rec("GetRole deleted", gone, err)
		if boundaryARN != nil {
			_, err = c.DeletePolicy(r.ctx, &iam.DeletePolicyInput{PolicyArn: boundaryARN})
			r.rec("DeletePolicy", nil, err)
		}
		list, err := c.ListRoles(r.ctx, &iam.ListRolesInput{PathPrefix: aws.String("/diff/")})
		if err == nil {
			sort.Slice(list.Roles, func(i, j int) bool { return *list.Roles[i].RoleName < *list.Roles[j].RoleName })
		}
		r.rec("ListRoles under the path", list, err)
	})
}
