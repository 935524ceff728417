package localaws_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// allowList allows role sessions only the listed action/resource pairs.
type allowList map[string]bool

func (a allowList) Authorize(p awsapi.Principal, action, resource string) error {
	if p.Admin || a[action+" "+resource] {
		return nil
	}
	return errors.New("no identity-based policy allows the action")
}

// checkRoleSessions checks that role sessions are authorised per table,
// index and stream ARN.
func checkRoleSessions(t *testing.T, s *localaws.Stack, tableArn, streamArn string) {
	t.Helper()
	ctx := t.Context()
	s.Env().SetAuthorizer(allowList{
		"dynamodb:PutItem " + tableArn:               true,
		"dynamodb:Query " + tableArn + "/index/GSI1": true,
		"dynamodb:DescribeStream " + streamArn:       true,
	})
	roleCfg := localawstest.RoleConfig(s, "arn:aws:iam::000000000000:role/relay")
	role := dynamodb.NewFromConfig(roleCfg, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	if _, err := role.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("outbox"),
		Item: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "1"}, "GSI1PK": &types.AttributeValueMemberS{Value: "P"}}}); err != nil {
		t.Fatalf("allowed PutItem: %v", err)
	}
	if _, err := role.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("outbox"), IndexName: aws.String("GSI1"),
		KeyConditionExpression:    aws.String("GSI1PK = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "P"}}}); err != nil {
		t.Fatalf("allowed index Query: %v", err)
	}
	_, err := role.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("outbox"), Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "1"}}})
	localawstest.WantCode(t, err, "AccessDeniedException", "denied DeleteItem")
	roleStreams := dynamodbstreams.NewFromConfig(roleCfg)
	if _, err := roleStreams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(streamArn)}); err != nil {
		t.Fatalf("allowed DescribeStream: %v", err)
	}
	s.Env().SetAuthorizer(nil)
}

func TestDynamoDBThroughTheStack(t *testing.T) {
	t.Parallel()
	s := localawstest.Start(t)
	ctx := context.Background()
	cfg := localawstest.Config(s)
	ddb := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	streams := dynamodbstreams.NewFromConfig(cfg)

	in := localawstest.TableInput("outbox", "PK", "", types.StreamViewTypeNewImage)
	in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String("GSI1PK"), AttributeType: types.ScalarAttributeTypeS})
	in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{IndexName: aws.String("GSI1"),
		KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("GSI1PK"), KeyType: types.KeyTypeHash}},
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}}
	if _, err := ddb.CreateTable(ctx, in); err != nil {
		t.Fatal(err)
	}
	w := dynamodb.NewTableExistsWaiter(ddb)
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("outbox")}, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	tableArn := "arn:aws:dynamodb:us-east-1:000000000000:table/outbox"

	// Streams API is routed by its own target though it signs as dynamodb.
	ls, err := streams.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{})
	if err != nil || len(ls.Streams) != 1 || aws.ToString(ls.Streams[0].TableName) != "outbox" {
		t.Fatalf("ListStreams = %+v, %v", ls, err)
	}
	streamArn := aws.ToString(ls.Streams[0].StreamArn)

	res, err := localawstest.Control(s).Resources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res["dynamodb"], ","); !strings.Contains(got, tableArn) || !strings.Contains(got, streamArn) {
		t.Errorf("inventory = %v", res["dynamodb"])
	}

	checkRoleSessions(t, s, tableArn, streamArn)

	// Injected faults reach the SDK as typed errors.
	ctl := localawstest.Control(s)
	if _, err := ctl.AddFault(ctx, control.FaultRule{Service: "dynamodb", Operation: "TransactWriteItems", Code: "ProvisionedThroughputExceededException", Count: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Put: &types.Put{TableName: aws.String("outbox"),
		Item: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "2"}}}}}})
	localawstest.WantError[*types.ProvisionedThroughputExceededException](t, err, "faulted TransactWriteItems")

	recs, err := s.DynamoDB().Streams().Records(streamArn, "", 10)
	if err != nil || len(recs) != 1 || recs[0].EventName != "INSERT" {
		t.Fatalf("in-process records = %+v, %v", recs, err)
	}
}
