package dynamodb_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	localddb "github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

type env struct {
	svc     *localddb.Service
	ddb     *dynamodb.Client
	streams *dynamodbstreams.Client
	aws     *awsapi.Env
}

// newEnv serves the DynamoDB and Streams APIs on an httptest server and
// returns SDK clients for them (no retries, so faults show).
func newEnv(t testing.TB, opts localddb.Options) *env {
	t.Helper()
	return newEnvWith(t, opts, awsapi.NewEnv("", "", nil))
}

// newStoppedEnv is newEnv on a clock stopped at start, which moves only
// when the test moves it.
func newStoppedEnv(t testing.TB, opts localddb.Options, start time.Time) (*env, *localawstest.Clock) {
	t.Helper()
	clock := localawstest.NewClock(start)
	a := awsapi.NewEnv("", "", nil)
	a.Now = clock.Now
	return newEnvWith(t, opts, a), clock
}

// newEnvWith is newEnv on a given stack environment (a set clock).
func newEnvWith(t testing.TB, opts localddb.Options, e *awsapi.Env) *env {
	t.Helper()
	svc := localddb.New(e, opts)
	r := awsapi.NewRouter(e)
	if err := r.Register(svc); err != nil {
		t.Fatal(err)
	}
	if err := r.Register(svc.StreamsAPI()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r)
	t.Cleanup(func() {
		srv.Close()
		_ = svc.Close()
	})
	cfg := aws.Config{
		Region:           "us-east-1",
		Credentials:      credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", ""),
		BaseEndpoint:     aws.String(srv.URL),
		RetryMaxAttempts: 1,
	}
	return &env{svc: svc, ddb: dynamodb.NewFromConfig(cfg), streams: dynamodbstreams.NewFromConfig(cfg), aws: e}
}

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }

var ctx = context.Background()

// keyedTableInput is table name with keys PK (S) and SK of skType and a
// sparse index GSI1 on GSI1PK (S) and GSI1SK of skType.
func keyedTableInput(name string, skType types.ScalarAttributeType) *dynamodb.CreateTableInput {
	return &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("SK"), AttributeType: skType},
			{AttributeName: aws.String("GSI1PK"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("GSI1SK"), AttributeType: skType},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName: aws.String("GSI1"),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String("GSI1PK"), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String("GSI1SK"), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
	}
}

// createTable creates table PK/SK with a sparse GSI1 on GSI1PK/GSI1SK and a
// stream of the given view type ("" for none).
func (e *env) createTable(t testing.TB, name, viewType string) *dynamodb.CreateTableOutput {
	t.Helper()
	in := keyedTableInput(name, types.ScalarAttributeTypeS)
	if viewType != "" {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewType(viewType)}
	}
	out, err := e.ddb.CreateTable(ctx, in)
	if err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	return out
}

// putKey puts item PK pk, SK "x" into table.
func (e *env) putKey(t testing.TB, table, pk string) {
	t.Helper()
	if _, err := e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{"PK": s(pk), "SK": s("x")}}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) streamArn(t testing.TB, table string) string {
	t.Helper()
	out, err := e.ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(out.Table.LatestStreamArn)
}

func (e *env) iterator(t testing.TB, streamArn string, typ stypes.ShardIteratorType, seq string) string {
	t.Helper()
	d, err := e.streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(streamArn)})
	if err != nil {
		t.Fatal(err)
	}
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(streamArn), ShardId: d.StreamDescription.Shards[0].ShardId, ShardIteratorType: typ}
	if seq != "" {
		in.SequenceNumber = aws.String(seq)
	}
	out, err := e.streams.GetShardIterator(ctx, in)
	if err != nil {
		t.Fatalf("GetShardIterator %s: %v", typ, err)
	}
	return aws.ToString(out.ShardIterator)
}

// records reads every record from TRIM_HORIZON.
func (e *env) records(t testing.TB, streamArn string) []stypes.Record {
	t.Helper()
	it := e.iterator(t, streamArn, stypes.ShardIteratorTypeTrimHorizon, "")
	var out []stypes.Record
	for i := 0; i < 100 && it != ""; i++ {
		r, err := e.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(it)})
		if err != nil {
			t.Fatalf("GetRecords: %v", err)
		}
		out = append(out, r.Records...)
		if len(r.Records) == 0 {
			break
		}
		it = aws.ToString(r.NextShardIterator)
	}
	return out
}

func eventNames(recs []stypes.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, string(r.EventName))
	}
	return out
}
