package iam_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/iam"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// lambdaTrust lets Lambda assume a role.
var lambdaTrust = localawstest.TrustPolicy("lambda.amazonaws.com")

const (
	accountTrust = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000000:root"},"Action":"sts:AssumeRole"}]}`
	tableArn     = "arn:aws:dynamodb:us-east-1:000000000000:table/orders"
)

// tableService is a stand-in DynamoDB that authorises PutItem on its
// table, as every stack service does.
type tableService struct{}

func (tableService) Spec() awsapi.Spec {
	return awsapi.Spec{Name: "faketable", Protocol: awsapi.JSON10, TargetPrefix: "DynamoDB_20120810",
		SigningName: "dynamodb", ErrorNamespace: "com.amazonaws.dynamodb.v20120810"}
}

func (tableService) Handle(req *awsapi.Request) (any, error) {
	if err := req.Authorize("dynamodb:"+req.Operation, tableArn); err != nil {
		return nil, err
	}
	return map[string]any{}, nil
}

type env struct {
	stack *localaws.Stack
	svc   *iam.Service
	iam   *awsiam.Client
	sts   *sts.Client
}

func start(t *testing.T, delay time.Duration) env {
	t.Helper()
	s := localawstest.StartEmpty(t)
	svc := iam.New(s.Env(), iam.Options{PropagationDelay: delay})
	s.Env().SetAuthorizer(svc)
	localawstest.Serve(t, s, svc, svc.STS(), tableService{})
	cfg := localawstest.Config(s)
	return env{stack: s, svc: svc, iam: awsiam.NewFromConfig(cfg), sts: sts.NewFromConfig(cfg)}
}

func (e env) roleClients(t *testing.T, roleArn string) (*dynamodb.Client, *sts.Client) {
	t.Helper()
	cfg := localawstest.RoleConfig(e.stack, roleArn)
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }), sts.NewFromConfig(cfg)
}

// createRole creates a role at path / with the trust policy.
// createPolicy creates the customer managed policy name and fails t if it
// cannot.
func (e env) createPolicy(t *testing.T, name, doc string) *iamtypes.Policy {
	t.Helper()
	out, err := e.iam.CreatePolicy(t.Context(), &awsiam.CreatePolicyInput{PolicyName: aws.String(name), PolicyDocument: aws.String(doc)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Policy
}

// putRolePolicy puts the inline policy name on role and fails t if it
// cannot.
func (e env) putRolePolicy(t *testing.T, role, name, doc string) {
	t.Helper()
	if _, err := e.iam.PutRolePolicy(t.Context(), &awsiam.PutRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(name), PolicyDocument: aws.String(doc)}); err != nil {
		t.Fatal(err)
	}
}

// attach attaches the managed policy policyArn to role and fails t if it
// cannot.
func (e env) attach(t *testing.T, role, policyArn string) {
	t.Helper()
	if _, err := e.iam.AttachRolePolicy(t.Context(), &awsiam.AttachRolePolicyInput{RoleName: aws.String(role), PolicyArn: aws.String(policyArn)}); err != nil {
		t.Fatal(err)
	}
}

func (e env) createRole(t *testing.T, name, trust string) {
	t.Helper()
	_, err := e.iam.CreateRole(context.Background(), &awsiam.CreateRoleInput{RoleName: aws.String(name), AssumeRolePolicyDocument: aws.String(trust)})
	if err != nil {
		t.Fatal(err)
	}
}

// apiError fails the test unless err is an AWS API error with code, and
// returns that error.
func apiError(t *testing.T, err error, code string) smithy.APIError {
	t.Helper()
	localawstest.WantCode(t, err, code, "the call")
	var ae smithy.APIError
	errors.As(err, &ae)
	return ae
}

// wantMessage fails the test unless err is an AWS API error with code
// whose message contains fragment.
func wantMessage(t *testing.T, err error, code, fragment string) {
	t.Helper()
	if ae := apiError(t, err, code); !strings.Contains(ae.ErrorMessage(), fragment) {
		t.Fatalf("message %q, want it to contain %q", ae.ErrorMessage(), fragment)
	}
}

func putItem(ctx context.Context, c *dynamodb.Client) error {
	_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("orders"),
		Item: map[string]ddbtypes.AttributeValue{"PK": &ddbtypes.AttributeValueMemberS{Value: "a"}}})
	return err
}

// checkRoleUpdates updates the role "relay" (tagged team) and its tags.
func (e env) checkRoleUpdates(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	if _, err := e.iam.UpdateRole(ctx, &awsiam.UpdateRoleInput{RoleName: aws.String("relay"), Description: aws.String("new")}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.iam.UpdateAssumeRolePolicy(ctx, &awsiam.UpdateAssumeRolePolicyInput{RoleName: aws.String("relay"), PolicyDocument: aws.String(accountTrust)}); err != nil {
		t.Fatal(err)
	}
	got, _ := e.iam.GetRole(ctx, &awsiam.GetRoleInput{RoleName: aws.String("relay")})
	if doc, _ := url.QueryUnescape(aws.ToString(got.Role.AssumeRolePolicyDocument)); aws.ToString(got.Role.Description) != "new" || doc != accountTrust {
		t.Fatalf("after update: %+v", got.Role)
	}

	if _, err := e.iam.TagRole(ctx, &awsiam.TagRoleInput{RoleName: aws.String("relay"), Tags: []iamtypes.Tag{{Key: aws.String("env"), Value: aws.String("test")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.iam.UntagRole(ctx, &awsiam.UntagRoleInput{RoleName: aws.String("relay"), TagKeys: []string{"team"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := e.iam.ListRoleTags(ctx, &awsiam.ListRoleTagsInput{RoleName: aws.String("relay")})
	if err != nil || len(tags.Tags) != 1 || aws.ToString(tags.Tags[0].Key) != "env" {
		t.Fatalf("ListRoleTags = %+v, %v", tags, err)
	}
}

// checkDeleteRole deletes the role "relay", which has the inline policy
// "put" and the managed policy attached: DeleteRole refuses until both are
// gone.
func (e env) checkDeleteRole(t *testing.T, attached string) {
	t.Helper()
	ctx := t.Context()
	var conflict *iamtypes.DeleteConflictException
	_, err := e.iam.DeleteRole(ctx, &awsiam.DeleteRoleInput{RoleName: aws.String("relay")})
	if !errors.As(err, &conflict) || !strings.Contains(err.Error(), "must detach all policies first") {
		t.Fatalf("DeleteRole with attached policy = %v", err)
	}
	if _, err := e.iam.DetachRolePolicy(ctx, &awsiam.DetachRolePolicyInput{RoleName: aws.String("relay"), PolicyArn: aws.String(attached)}); err != nil {
		t.Fatal(err)
	}
	_, err = e.iam.DeleteRole(ctx, &awsiam.DeleteRoleInput{RoleName: aws.String("relay")})
	if !errors.As(err, &conflict) || !strings.Contains(err.Error(), "must delete policies first") {
		t.Fatalf("DeleteRole with inline policy = %v", err)
	}
	if _, err := e.iam.DeleteRolePolicy(ctx, &awsiam.DeleteRolePolicyInput{RoleName: aws.String("relay"), PolicyName: aws.String("put")}); err != nil {
		t.Fatal(err)
	}
	roles, err := e.iam.ListRoles(ctx, &awsiam.ListRolesInput{})
	if err != nil || len(roles.Roles) != 1 {
		t.Fatalf("ListRoles = %+v, %v", roles, err)
	}
	if _, err := e.iam.DeleteRole(ctx, &awsiam.DeleteRoleInput{RoleName: aws.String("relay")}); err != nil {
		t.Fatal(err)
	}
	_, err = e.iam.GetRole(ctx, &awsiam.GetRoleInput{RoleName: aws.String("relay")})
	localawstest.WantError[*iamtypes.NoSuchEntityException](t, err, "GetRole after delete")
	if !strings.Contains(err.Error(), "The role with name relay cannot be found.") {
		t.Fatalf("GetRole after delete = %v", err)
	}
}

func TestRoleLifecycle(t *testing.T) {
	t.Parallel()
	e := start(t, 0)
	ctx := context.Background()
	out, err := e.iam.CreateRole(ctx, &awsiam.CreateRoleInput{
		RoleName: aws.String("relay"), Path: aws.String("/service/"), AssumeRolePolicyDocument: aws.String(lambdaTrust),
		Description: aws.String("relay role"), MaxSessionDuration: aws.Int32(7200),
		Tags: []iamtypes.Tag{{Key: aws.String("team"), Value: aws.String("outbox")}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := out.Role
	if aws.ToString(r.Arn) != "arn:aws:iam::000000000000:role/service/relay" || !strings.HasPrefix(aws.ToString(r.RoleId), "AROA") ||
		len(aws.ToString(r.RoleId)) != 21 || aws.ToInt32(r.MaxSessionDuration) != 7200 || r.CreateDate == nil {
		t.Fatalf("created role = %+v", r)
	}
	if doc, _ := url.QueryUnescape(aws.ToString(r.AssumeRolePolicyDocument)); doc != lambdaTrust || !strings.HasPrefix(aws.ToString(r.AssumeRolePolicyDocument), "%7B%22Version%22%3A") {
		t.Fatalf("trust document %q", aws.ToString(r.AssumeRolePolicyDocument))
	}
	_, err = e.iam.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("relay"), AssumeRolePolicyDocument: aws.String(lambdaTrust)})
	localawstest.WantError[*iamtypes.EntityAlreadyExistsException](t, err, "duplicate CreateRole")
	_, err = e.iam.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("bad"), AssumeRolePolicyDocument: aws.String(`{"Statement":`)})
	localawstest.WantError[*iamtypes.MalformedPolicyDocumentException](t, err, "malformed trust")

	got, err := e.iam.GetRole(ctx, &awsiam.GetRoleInput{RoleName: aws.String("relay")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(got.Role.Description) != "relay role" || len(got.Role.Tags) != 1 || aws.ToString(got.Role.Tags[0].Value) != "outbox" {
		t.Fatalf("GetRole = %+v", got.Role)
	}
	e.checkRoleUpdates(t)

	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"dynamodb:PutItem","Resource":"*"}]}`
	e.putRolePolicy(t, "relay", "put", policy)
	gp, err := e.iam.GetRolePolicy(ctx, &awsiam.GetRolePolicyInput{RoleName: aws.String("relay"), PolicyName: aws.String("put")})
	if err != nil {
		t.Fatal(err)
	}
	if doc, _ := url.QueryUnescape(aws.ToString(gp.PolicyDocument)); doc != policy {
		t.Fatalf("GetRolePolicy document %q", aws.ToString(gp.PolicyDocument))
	}
	lp, err := e.iam.ListRolePolicies(ctx, &awsiam.ListRolePoliciesInput{RoleName: aws.String("relay")})
	if err != nil || len(lp.PolicyNames) != 1 || lp.PolicyNames[0] != "put" {
		t.Fatalf("ListRolePolicies = %+v, %v", lp, err)
	}
	basic := "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
	e.attach(t, "relay", basic)
	_, err = e.iam.AttachRolePolicy(ctx, &awsiam.AttachRolePolicyInput{RoleName: aws.String("relay"), PolicyArn: aws.String("arn:aws:iam::aws:policy/Nope")})
	localawstest.WantError[*iamtypes.NoSuchEntityException](t, err, "attach unknown")
	la, err := e.iam.ListAttachedRolePolicies(ctx, &awsiam.ListAttachedRolePoliciesInput{RoleName: aws.String("relay")})
	if err != nil || len(la.AttachedPolicies) != 1 || aws.ToString(la.AttachedPolicies[0].PolicyName) != "AWSLambdaBasicExecutionRole" {
		t.Fatalf("ListAttachedRolePolicies = %+v, %v", la, err)
	}

	e.checkDeleteRole(t, basic)
}

func TestListRolesPaginates(t *testing.T) {
	t.Parallel()
	e := start(t, 0)
	ctx := context.Background()
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		e.createRole(t, n, lambdaTrust)
	}
	var names []string
	p := awsiam.NewListRolesPaginator(e.iam, &awsiam.ListRolesInput{MaxItems: aws.Int32(2)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page.Roles {
			names = append(names, aws.ToString(r.RoleName))
		}
	}
	if strings.Join(names, ",") != "a,b,c,d,e" {
		t.Fatalf("roles = %v", names)
	}
}

func TestCustomerManagedPolicies(t *testing.T) {
	t.Parallel()
	e := start(t, 0)
	ctx := context.Background()
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"dynamodb:PutItem","Resource":"` + tableArn + `"}]}`
	created := e.createPolicy(t, "writer", doc)
	arn := aws.ToString(created.Arn)
	if arn != "arn:aws:iam::000000000000:policy/writer" || aws.ToString(created.DefaultVersionId) != "v1" || !strings.HasPrefix(aws.ToString(created.PolicyId), "ANPA") {
		t.Fatalf("CreatePolicy = %+v", created)
	}
	_, err := e.iam.CreatePolicy(ctx, &awsiam.CreatePolicyInput{PolicyName: aws.String("bad"),
		PolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*"}]}`)})
	localawstest.WantCode(t, err, "MalformedPolicyDocument", "CreatePolicy with a statement without a resource")
	v, err := e.iam.GetPolicyVersion(ctx, &awsiam.GetPolicyVersionInput{PolicyArn: aws.String(arn), VersionId: aws.String("v1")})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := url.QueryUnescape(aws.ToString(v.PolicyVersion.Document)); d != doc || !v.PolicyVersion.IsDefaultVersion {
		t.Fatalf("GetPolicyVersion = %+v", v.PolicyVersion)
	}
	aws1, err := e.iam.GetPolicyVersion(ctx, &awsiam.GetPolicyVersionInput{PolicyArn: aws.String("arn:aws:iam::aws:policy/service-role/AWSLambdaDynamoDBExecutionRole"), VersionId: aws.String("v1")})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := url.QueryUnescape(aws.ToString(aws1.PolicyVersion.Document)); !strings.Contains(d, "dynamodb:GetShardIterator") {
		t.Fatalf("AWS managed document %s", d)
	}
	local, err := e.iam.ListPolicies(ctx, &awsiam.ListPoliciesInput{Scope: iamtypes.PolicyScopeTypeLocal})
	if err != nil || len(local.Policies) != 1 {
		t.Fatalf("ListPolicies Local = %+v, %v", local, err)
	}
	all, err := e.iam.ListPolicies(ctx, &awsiam.ListPoliciesInput{})
	if err != nil || len(all.Policies) < 6 {
		t.Fatalf("ListPolicies = %d, %v", len(all.Policies), err)
	}

	e.createRole(t, "w", lambdaTrust)
	e.attach(t, "w", arn)
	gp, _ := e.iam.GetPolicy(ctx, &awsiam.GetPolicyInput{PolicyArn: aws.String(arn)})
	if aws.ToInt32(gp.Policy.AttachmentCount) != 1 {
		t.Fatalf("AttachmentCount = %d", aws.ToInt32(gp.Policy.AttachmentCount))
	}
	ddb, _ := e.roleClients(t, "arn:aws:iam::000000000000:role/w")
	if err := putItem(ctx, ddb); err != nil {
		t.Fatalf("PutItem with customer managed policy: %v", err)
	}
	_, err = e.iam.DeletePolicy(ctx, &awsiam.DeletePolicyInput{PolicyArn: aws.String(arn)})
	localawstest.WantCode(t, err, "DeleteConflict", "DeletePolicy of an attached policy")
	if _, err := e.iam.DetachRolePolicy(ctx, &awsiam.DetachRolePolicyInput{RoleName: aws.String("w"), PolicyArn: aws.String(arn)}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.iam.DeletePolicy(ctx, &awsiam.DeletePolicyInput{PolicyArn: aws.String(arn)}); err != nil {
		t.Fatal(err)
	}
	_, err = e.iam.GetPolicy(ctx, &awsiam.GetPolicyInput{PolicyArn: aws.String(arn)})
	localawstest.WantCode(t, err, "NoSuchEntity", "GetPolicy of a deleted policy")
}

func TestCallerIdentityAndAssumeRole(t *testing.T) {
	t.Parallel()
	e := start(t, 0)
	ctx := context.Background()
	id, err := e.sts.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(id.Arn) != "arn:aws:iam::000000000000:root" || aws.ToString(id.Account) != "000000000000" || aws.ToString(id.UserId) != "000000000000" {
		t.Fatalf("admin identity = %s %s %s", aws.ToString(id.Arn), aws.ToString(id.Account), aws.ToString(id.UserId))
	}
	for name, trust := range map[string]string{"lambda-only": lambdaTrust, "assumable": accountTrust} {
		e.createRole(t, name, trust)
	}
	_, err = e.sts.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::000000000000:role/lambda-only"), RoleSessionName: aws.String("s1")})
	ae := apiError(t, err, "AccessDenied")
	if ae.ErrorMessage() != "User: arn:aws:iam::000000000000:root is not authorized to perform: sts:AssumeRole on resource: arn:aws:iam::000000000000:role/lambda-only" {
		t.Fatalf("message %q", ae.ErrorMessage())
	}
	_, err = e.sts.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::000000000000:role/missing"), RoleSessionName: aws.String("s1")})
	localawstest.WantCode(t, err, "AccessDenied", "AssumeRole of a missing role")

	ar, err := e.sts.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::000000000000:role/assumable"), RoleSessionName: aws.String("deploy"), DurationSeconds: aws.Int32(900)})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(ar.AssumedRoleUser.Arn) != "arn:aws:sts::000000000000:assumed-role/assumable/deploy" ||
		!strings.HasPrefix(aws.ToString(ar.AssumedRoleUser.AssumedRoleId), "AROA") || !strings.HasSuffix(aws.ToString(ar.AssumedRoleUser.AssumedRoleId), ":deploy") ||
		!strings.HasPrefix(aws.ToString(ar.Credentials.AccessKeyId), "ASIA") || time.Until(aws.ToTime(ar.Credentials.Expiration)) > 16*time.Minute {
		t.Fatalf("AssumeRole = %+v %+v", ar.AssumedRoleUser, ar.Credentials)
	}
	_, err = e.sts.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::000000000000:role/assumable"), RoleSessionName: aws.String("deploy"), DurationSeconds: aws.Int32(7200)})
	localawstest.WantCode(t, err, "ValidationError", "AssumeRole for two hours")

	c := ar.Credentials
	session := sts.NewFromConfig(localawstest.ConfigWithCredentials(e.stack, aws.ToString(c.AccessKeyId), aws.ToString(c.SecretAccessKey), aws.ToString(c.SessionToken)))
	id, err = session.GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(id.Arn) != "arn:aws:sts::000000000000:assumed-role/assumable/deploy" || aws.ToString(id.UserId) != aws.ToString(ar.AssumedRoleUser.AssumedRoleId) {
		t.Fatalf("session identity = %s %s", aws.ToString(id.Arn), aws.ToString(id.UserId))
	}
	// A role session with no identity policy cannot assume another role
	// trusting only the account.
	_, err = session.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String("arn:aws:iam::000000000000:role/assumable"), RoleSessionName: aws.String("again")})
	localawstest.WantCode(t, err, "AccessDenied", "AssumeRole from a role session")
	// Nor call IAM.
	_, err = awsiam.NewFromConfig(localawstest.ConfigWithCredentials(e.stack, aws.ToString(c.AccessKeyId), aws.ToString(c.SecretAccessKey), aws.ToString(c.SessionToken))).
		ListRoles(ctx, &awsiam.ListRolesInput{})
	wantMessage(t, err, "AccessDenied", "because no identity-based policy allows the iam:ListRoles action")
}

func TestAuthorizerEvaluatesRolePolicies(t *testing.T) {
	t.Parallel()
	e := start(t, 0)
	ctx := context.Background()
	e.createRole(t, "fn", lambdaTrust)
	roleArn := "arn:aws:iam::000000000000:role/fn"
	ddb, _ := e.roleClients(t, roleArn)

	err := putItem(ctx, ddb)
	ae := apiError(t, err, "AccessDeniedException")
	want := "User: arn:aws:sts::000000000000:assumed-role/fn/"
	if !strings.HasPrefix(ae.ErrorMessage(), want) || !strings.HasSuffix(ae.ErrorMessage(),
		" is not authorized to perform: dynamodb:PutItem on resource: "+tableArn+" because no identity-based policy allows the dynamodb:PutItem action") {
		t.Fatalf("message %q", ae.ErrorMessage())
	}

	allow := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["dynamodb:PutItem"],"Resource":"` + tableArn + `"}]}`
	e.putRolePolicy(t, "fn", "put", allow)
	if err := putItem(ctx, ddb); err != nil {
		t.Fatalf("PutItem with inline policy: %v", err)
	}
	// Another action stays denied.
	_, err = ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("orders"),
		Key: map[string]ddbtypes.AttributeValue{"PK": &ddbtypes.AttributeValueMemberS{Value: "a"}}})
	localawstest.WantCode(t, err, "AccessDeniedException", "DeleteItem without permission")

	// An explicit Deny overrides the Allow, including a managed policy's.
	e.attach(t, "fn", "arn:aws:iam::aws:policy/AdministratorAccess")
	if _, err = ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("orders"),
		Key: map[string]ddbtypes.AttributeValue{"PK": &ddbtypes.AttributeValueMemberS{Value: "a"}}}); err != nil {
		t.Fatalf("DeleteItem with AdministratorAccess: %v", err)
	}
	deny := `{"Version":"2012-10-17","Statement":{"Effect":"Deny","Action":"dynamodb:Put*","Resource":"*"}}`
	e.putRolePolicy(t, "fn", "deny", deny)
	ae = apiError(t, putItem(ctx, ddb), "AccessDeniedException")
	if !strings.HasSuffix(ae.ErrorMessage(), "on resource: "+tableArn+" with an explicit deny in an identity-based policy") {
		t.Fatalf("message %q", ae.ErrorMessage())
	}
}

func TestManagedPolicyGrantsAccess(t *testing.T) {
	t.Parallel()
	e := start(t, 0)
	ctx := context.Background()
	e.createRole(t, "fn", lambdaTrust)
	p := awsapi.Principal{RoleArn: "arn:aws:iam::000000000000:role/fn", ARN: "arn:aws:sts::000000000000:assumed-role/fn/s"}
	stream := tableArn + "/stream/2026-01-01T00:00:00.000"
	if err := e.svc.Authorize(p, "dynamodb:GetRecords", stream); err == nil {
		t.Fatal("GetRecords allowed without policy")
	}
	if _, err := e.iam.AttachRolePolicy(ctx, &awsiam.AttachRolePolicyInput{RoleName: aws.String("fn"),
		PolicyArn: aws.String("arn:aws:iam::aws:policy/service-role/AWSLambdaDynamoDBExecutionRole")}); err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{"dynamodb:GetRecords", "dynamodb:DescribeStream", "logs:PutLogEvents"} {
		if err := e.svc.Authorize(p, action, stream); err != nil {
			t.Errorf("%s: %v", action, err)
		}
	}
	if err := e.svc.Authorize(p, "sqs:SendMessage", "arn:aws:sqs:us-east-1:000000000000:dlq"); err == nil {
		t.Error("sqs:SendMessage allowed by AWSLambdaDynamoDBExecutionRole")
	}
	if err := e.svc.Authorize(awsapi.Principal{Admin: true}, "anything:At", "*"); err != nil {
		t.Errorf("admin denied: %v", err)
	}
}

func TestRoleAssumableBy(t *testing.T) {
	t.Parallel()
	e := start(t, 0)
	ctx := context.Background()
	if _, err := e.iam.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("fn"), Path: aws.String("/x/"), AssumeRolePolicyDocument: aws.String(lambdaTrust)}); err != nil {
		t.Fatal(err)
	}
	arn := "arn:aws:iam::000000000000:role/x/fn"
	if err := e.svc.RoleAssumableBy(arn, "lambda.amazonaws.com"); err != nil {
		t.Fatal(err)
	}
	err := e.svc.RoleAssumableBy(arn, "scheduler.amazonaws.com")
	if ae := awsapi.AsError(err); ae == nil || ae.Code != "ValidationException" {
		t.Fatalf("scheduler: %v", err)
	}
	// A trust policy with the recommended confused-deputy condition on the
	// source account is assumable by the service for this account only.
	for account, want := range map[string]bool{"000000000000": true, "111122223333": false} {
		name := "sched-" + account
		trust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"scheduler.amazonaws.com"},"Action":"sts:AssumeRole","Condition":{"StringEquals":{"aws:SourceAccount":"` + account + `"}}}]}`
		e.createRole(t, name, trust)
		if err := e.svc.RoleAssumableBy("arn:aws:iam::000000000000:role/"+name, "scheduler.amazonaws.com"); (err == nil) != want {
			t.Errorf("trust conditioned on account %s: err = %v, want assumable %v", account, err, want)
		}
	}
	for _, bad := range []string{"arn:aws:iam::000000000000:role/fn", "arn:aws:iam::000000000000:role/x/missing"} {
		err := e.svc.RoleAssumableBy(bad, "lambda.amazonaws.com")
		if ae := awsapi.AsError(err); ae == nil || ae.Code != "InvalidParameterValueException" || ae.Message != "The role defined for the function cannot be assumed by Lambda." {
			t.Fatalf("%s: %v", bad, err)
		}
	}
}

func TestPropagationDelay(t *testing.T) {
	t.Parallel()
	const delay = 300 * time.Millisecond
	s := localawstest.Start(t, func(o *localaws.Options) { o.IAMPropagationDelay = delay; o.Disable = []string{"lambda", "dynamodb"} })
	svc, ok := s.Service("iam")
	if !ok {
		t.Fatal("no iam service")
	}
	rc := svc.(interface {
		RoleAssumableBy(roleArn, servicePrincipal string) error
	})
	ctx := context.Background()
	client := awsiam.NewFromConfig(localawstest.Config(s))
	begin := time.Now()
	if _, err := client.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String("fn"), AssumeRolePolicyDocument: aws.String(lambdaTrust)}); err != nil {
		t.Fatal(err)
	}
	arn := "arn:aws:iam::000000000000:role/fn"
	if err := rc.RoleAssumableBy(arn, "lambda.amazonaws.com"); err == nil && time.Since(begin) < delay {
		t.Fatal("role assumable right after creation")
	}
	localawstest.Eventually(t, 10*time.Second, "role assumable", func() bool { return rc.RoleAssumableBy(arn, "lambda.amazonaws.com") == nil })
	if elapsed := time.Since(begin); elapsed < delay {
		t.Fatalf("role assumable after %v, before the delay", elapsed)
	}

	p := awsapi.Principal{RoleArn: arn, ARN: "arn:aws:sts::000000000000:assumed-role/fn/s"}
	auth := s.Env().Authorizer()
	begin = time.Now()
	if _, err := client.PutRolePolicy(ctx, &awsiam.PutRolePolicyInput{RoleName: aws.String("fn"), PolicyName: aws.String("p"),
		PolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"sqs:SendMessage","Resource":"*"}]}`)}); err != nil {
		t.Fatal(err)
	}
	if err := auth.Authorize(p, "sqs:SendMessage", "arn:aws:sqs:us-east-1:000000000000:q"); err == nil && time.Since(begin) < delay {
		t.Fatal("new permission effective right away")
	}
	if err := rc.RoleAssumableBy(arn, "lambda.amazonaws.com"); err == nil && time.Since(begin) < delay {
		t.Fatal("role assumable right after a policy change")
	}
	localawstest.Eventually(t, 10*time.Second, "permission propagated", func() bool {
		return auth.Authorize(p, "sqs:SendMessage", "arn:aws:sqs:us-east-1:000000000000:q") == nil
	})
	if elapsed := time.Since(begin); elapsed < delay {
		t.Fatalf("permission effective after %v, before the delay", elapsed)
	}
}

// TestSetOperatorPoliciesAreStored: a policy with the set operators (a KMS
// key named by alias, as AWS's KMS guide writes it) is stored and read
// back, not refused as malformed.
func TestSetOperatorPoliciesAreStored(t *testing.T) {
	t.Parallel()
	e := start(t, 0)
	e.createRole(t, "consumer", lambdaTrust)
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"kms:Decrypt","Resource":"arn:aws:kms:us-east-1:000000000000:key/*",` +
		`"Condition":{"ForAnyValue:StringEquals":{"kms:ResourceAliases":"alias/orders"},"ForAllValues:StringLike":{"aws:TagKeys":"team*"}}}]}`
	e.putRolePolicy(t, "consumer", "kms", doc)
	got, err := e.iam.GetRolePolicy(t.Context(), &awsiam.GetRolePolicyInput{RoleName: aws.String("consumer"), PolicyName: aws.String("kms")})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := url.QueryUnescape(aws.ToString(got.PolicyDocument)); d != doc {
		t.Fatalf("GetRolePolicy = %s, want %s", d, doc)
	}
	_, err = e.iam.PutRolePolicy(t.Context(), &awsiam.PutRolePolicyInput{RoleName: aws.String("consumer"), PolicyName: aws.String("bad"),
		PolicyDocument: aws.String(strings.Replace(doc, "ForAnyValue:", "ForSomeValues:", 1))})
	localawstest.WantCode(t, err, "MalformedPolicyDocument", "PutRolePolicy with an unknown set operator")
}
