package s3_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// TestIdentityPolicies: a role session may do what its identity policies
// allow on the bucket's objects, and nothing else.
func TestIdentityPolicies(t *testing.T) {
	t.Parallel()
	s := localawstest.Start(t)
	ctx := context.Background()
	admin := client(s)
	mustBucket(t, admin, "grants")
	cfg := roleSession(t, s, "writer", "claims",
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:PutObject","s3:GetObject"],"Resource":"arn:aws:s3:::grants/claims/*"}]}`)
	cfg.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported
	writer := s3.NewFromConfig(cfg)
	put(t, writer, &s3.PutObjectInput{Bucket: aws.String("grants"), Key: aws.String("claims/1"), Body: strings.NewReader("x")})
	if body, _ := read(t, writer, &s3.GetObjectInput{Bucket: aws.String("grants"), Key: aws.String("claims/1")}); string(body) != "x" {
		t.Fatalf("GetObject = %q", body)
	}
	_, err := writer.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("grants"), Key: aws.String("elsewhere"), Body: strings.NewReader("x")})
	wantCode(t, err, "AccessDenied", 403)
	_, err = writer.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("grants"), Key: aws.String("claims/1")})
	wantCode(t, err, "AccessDenied", 403)
	_, err = writer.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("grants")})
	wantCode(t, err, "AccessDenied", 403)
}

// TestIdentityPolicyConditions: an identity policy's condition on s3:prefix
// is tested on the request's prefix: listing outbox/ is allowed, listing
// the bucket whole or another prefix is not.
func TestIdentityPolicyConditions(t *testing.T) {
	t.Parallel()
	s := localawstest.Start(t)
	ctx := context.Background()
	mustBucket(t, client(s), "listed")
	sweeper := s3.NewFromConfig(roleSession(t, s, "sweeper", "list",
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:ListBucket","Resource":"arn:aws:s3:::listed","Condition":{"StringLike":{"s3:prefix":"outbox/*"}}}]}`))
	if _, err := sweeper.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("listed"), Prefix: aws.String("outbox/")}); err != nil {
		t.Errorf("listing the allowed prefix: %v", err)
	}
	for _, prefix := range []*string{nil, aws.String("other/")} {
		_, err := sweeper.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("listed"), Prefix: prefix})
		wantCode(t, err, "AccessDenied", 403)
	}
}

// roleSession creates the role name, which Lambda may assume, with the
// inline policy policyName holding doc, and returns the configuration of a
// session of it.
func roleSession(t *testing.T, s *localaws.Stack, name, policyName, doc string) aws.Config {
	t.Helper()
	ctx := context.Background()
	roles := iam.NewFromConfig(localawstest.Config(s))
	if _, err := roles.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(name),
		AssumeRolePolicyDocument: aws.String(localawstest.TrustPolicy("lambda.amazonaws.com"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := roles.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String(policyName),
		PolicyDocument: aws.String(doc)}); err != nil {
		t.Fatal(err)
	}
	return localawstest.RoleConfig(s, "arn:aws:iam::000000000000:role/"+name)
}
