package relaytest

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// ClaimCheckStack starts a local AWS stack that stops when t ends, creates
// the claim check's bucket and the outbox table in it, and returns the
// stack's configuration and its S3 and DynamoDB clients.
func ClaimCheckStack(ctx context.Context, t testing.TB, bucket string, table outbox.Table) (aws.Config, *s3.Client, *dynamodb.Client) {
	t.Helper()
	cfg := localawstest.Config(localawstest.Start(t))
	objects, ddb := s3.NewFromConfig(cfg), dynamodb.NewFromConfig(cfg)
	CreateBucketAndTable(ctx, t, objects, ddb, bucket, table)
	return cfg, objects, ddb
}

// CreateBucketAndTable creates the claim check's bucket and the outbox
// table, failing t if either cannot be created.
func CreateBucketAndTable(ctx context.Context, t testing.TB, objects *s3.Client, ddb *dynamodb.Client, bucket string, table outbox.Table) {
	t.Helper()
	if _, err := objects.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatal(err)
	}
	if _, err := ddb.CreateTable(ctx, table.CreateTableInput()); err != nil {
		t.Fatal(err)
	}
}

// CancelledTransactions is a DynamoDB client whose transactions are
// cancelled: a claim-checking writer has stored the object, and its item
// never commits.
type CancelledTransactions struct{ *dynamodb.Client }

// TransactWriteItems fails as a cancelled transaction does.
func (CancelledTransactions) TransactWriteItems(context.Context, *dynamodb.TransactWriteItemsInput, ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return nil, errors.New("TransactionCanceledException")
}
