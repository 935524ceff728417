package dynamodb_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	localddb "github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

func TestTableLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	created := e.createTable(t, "orders", "NEW_AND_OLD_IMAGES")
	td := created.TableDescription
	if td.TableStatus != types.TableStatusCreating {
		t.Errorf("CreateTable TableStatus = %s, want CREATING", td.TableStatus)
	}
	if aws.ToString(td.TableArn) != "arn:aws:dynamodb:us-east-1:000000000000:table/orders" {
		t.Errorf("TableArn = %s", aws.ToString(td.TableArn))
	}

	_, err := e.ddb.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("orders"), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}}})
	localawstest.WantError[*types.ResourceInUseException](t, err, "duplicate CreateTable")

	tb := describeCreatedTable(t, e)
	checkListTablesPages(t, e)
	checkTagsAndTTL(t, e, tb.TableArn)
	checkDeleteKeepsStream(t, e, tb.LatestStreamArn)
}

// describeCreatedTable checks DescribeTable of the table "orders" that
// TestTableLifecycle created: active, on demand, streamed, with its GSI.
func describeCreatedTable(t *testing.T, e *env) *types.TableDescription {
	t.Helper()
	d, err := e.ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("orders")})
	if err != nil {
		t.Fatal(err)
	}
	tb := d.Table
	if tb.TableStatus != types.TableStatusActive || tb.BillingModeSummary == nil || tb.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("DescribeTable status %s billing %+v", tb.TableStatus, tb.BillingModeSummary)
	}
	if tb.StreamSpecification == nil || !aws.ToBool(tb.StreamSpecification.StreamEnabled) || tb.StreamSpecification.StreamViewType != types.StreamViewTypeNewAndOldImages {
		t.Errorf("StreamSpecification = %+v", tb.StreamSpecification)
	}
	if !strings.HasPrefix(aws.ToString(tb.LatestStreamArn), aws.ToString(tb.TableArn)+"/stream/") || aws.ToString(tb.LatestStreamLabel) == "" {
		t.Errorf("LatestStreamArn = %s label %s", aws.ToString(tb.LatestStreamArn), aws.ToString(tb.LatestStreamLabel))
	}
	if len(tb.GlobalSecondaryIndexes) != 1 || tb.GlobalSecondaryIndexes[0].IndexStatus != types.IndexStatusActive ||
		aws.ToString(tb.GlobalSecondaryIndexes[0].IndexArn) != aws.ToString(tb.TableArn)+"/index/GSI1" {
		t.Errorf("GSIs = %+v", tb.GlobalSecondaryIndexes)
	}
	if tb.CreationDateTime == nil || time.Since(*tb.CreationDateTime) > time.Minute {
		t.Errorf("CreationDateTime = %v", tb.CreationDateTime)
	}
	return tb
}

// checkListTablesPages checks ListTables paging over "accounts" and "orders".
func checkListTablesPages(t *testing.T, e *env) {
	t.Helper()
	e.createTable(t, "accounts", "")
	lt, err := e.ddb.ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(lt.TableNames, []string{"accounts"}) || aws.ToString(lt.LastEvaluatedTableName) != "accounts" {
		t.Errorf("ListTables page 1 = %v %v", lt.TableNames, aws.ToString(lt.LastEvaluatedTableName))
	}
	lt, _ = e.ddb.ListTables(ctx, &dynamodb.ListTablesInput{ExclusiveStartTableName: lt.LastEvaluatedTableName})
	if !reflect.DeepEqual(lt.TableNames, []string{"orders"}) || lt.LastEvaluatedTableName != nil {
		t.Errorf("ListTables page 2 = %v", lt.TableNames)
	}
}

// checkTagsAndTTL tags and untags the table of arn, and enables TTL on "orders".
func checkTagsAndTTL(t *testing.T, e *env, arn *string) {
	t.Helper()
	if _, err := e.ddb.TagResource(ctx, &dynamodb.TagResourceInput{ResourceArn: arn, Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("a")}, {Key: aws.String("env"), Value: aws.String("dev")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ddb.UntagResource(ctx, &dynamodb.UntagResourceInput{ResourceArn: arn, TagKeys: []string{"env"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := e.ddb.ListTagsOfResource(ctx, &dynamodb.ListTagsOfResourceInput{ResourceArn: arn})
	if err != nil || len(tags.Tags) != 1 || aws.ToString(tags.Tags[0].Key) != "team" {
		t.Errorf("ListTagsOfResource = %+v, %v", tags, err)
	}
	ttl, err := e.ddb.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String("orders")})
	if err != nil || ttl.TimeToLiveDescription.TimeToLiveStatus != types.TimeToLiveStatusDisabled {
		t.Errorf("DescribeTimeToLive = %+v, %v", ttl, err)
	}
	if _, err := e.ddb.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("orders"),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("expiresAt"), Enabled: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	ttl, _ = e.ddb.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String("orders")})
	if ttl.TimeToLiveDescription.TimeToLiveStatus != types.TimeToLiveStatusEnabled || aws.ToString(ttl.TimeToLiveDescription.AttributeName) != "expiresAt" {
		t.Errorf("TTL after enable = %+v", ttl.TimeToLiveDescription)
	}
}

// checkDeleteKeepsStream deletes "orders" and checks that its stream (of
// streamArn) stays readable, disabled, when the table is created again.
func checkDeleteKeepsStream(t *testing.T, e *env, streamArn *string) {
	t.Helper()
	del, err := e.ddb.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String("orders")})
	if err != nil || del.TableDescription.TableStatus != types.TableStatusDeleting {
		t.Fatalf("DeleteTable = %+v, %v", del, err)
	}
	_, err = e.ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("orders")})
	localawstest.WantError[*types.ResourceNotFoundException](t, err, "DescribeTable after delete")
	_, err = e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("orders"), Item: map[string]types.AttributeValue{"PK": s("a"), "SK": s("b")}})
	localawstest.WantError[*types.ResourceNotFoundException](t, err, "PutItem after delete")
	// The deleted table's stream stays readable, disabled.
	ds, err := e.streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: streamArn})
	if err != nil || ds.StreamDescription.StreamStatus != stypes.StreamStatusDisabled {
		t.Errorf("stream after DeleteTable = %+v, %v", ds, err)
	}
	// A table created again at once gets a stream of its own.
	e.createTable(t, "orders", "KEYS_ONLY")
	if again := e.streamArn(t, "orders"); again == aws.ToString(streamArn) {
		t.Errorf("recreated table reuses stream %s", again)
	}
	ds, err = e.streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: streamArn})
	if err != nil || ds.StreamDescription.StreamStatus != stypes.StreamStatusDisabled {
		t.Errorf("old stream after recreating the table = %+v, %v", ds, err)
	}
}

func TestTopLevelRemoveDropsAttributeAndIndexEntry(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	e.createTable(t, "outbox", "NEW_AND_OLD_IMAGES")
	pending := func() int {
		out, err := e.ddb.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("outbox"), IndexName: aws.String("GSI1"),
			KeyConditionExpression:    aws.String("GSI1PK = :p"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("PENDING#0")}})
		if err != nil {
			t.Fatal(err)
		}
		return int(out.Count)
	}
	for _, id := range []string{"1", "2"} {
		if _, err := e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("outbox"), Item: map[string]types.AttributeValue{
			"PK": s("ORDER#" + id), "SK": s("OUTBOX#" + id), "GSI1PK": s("PENDING#0"), "GSI1SK": s(id), "status": s("new")}}); err != nil {
			t.Fatal(err)
		}
	}
	// An item without the index key is not in the index (sparse).
	if _, err := e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("outbox"), Item: map[string]types.AttributeValue{
		"PK": s("ORDER#3"), "SK": s("OUTBOX#3"), "status": s("sent")}}); err != nil {
		t.Fatal(err)
	}
	if got := pending(); got != 2 {
		t.Fatalf("pending = %d, want 2", got)
	}

	out, err := e.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("outbox"),
		Key:                       map[string]types.AttributeValue{"PK": s("ORDER#1"), "SK": s("OUTBOX#1")},
		UpdateExpression:          aws.String("SET #st = :sent REMOVE #pk, #sk"),
		ConditionExpression:       aws.String("attribute_exists(#pk)"),
		ExpressionAttributeNames:  map[string]string{"#st": "status", "#pk": "GSI1PK", "#sk": "GSI1SK"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":sent": s("sent")},
		ReturnValues:              types.ReturnValueAllNew,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.Attributes["GSI1PK"]; ok || out.Attributes["status"].(*types.AttributeValueMemberS).Value != "sent" {
		t.Errorf("ALL_NEW = %v", out.Attributes)
	}
	got, err := e.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("outbox"), Key: map[string]types.AttributeValue{"PK": s("ORDER#1"), "SK": s("OUTBOX#1")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Item["GSI1PK"]; ok {
		t.Errorf("GSI1PK still on the item: %v", got.Item)
	}
	if _, ok := got.Item["GSI1SK"]; ok {
		t.Errorf("GSI1SK still on the item: %v", got.Item)
	}
	if got := pending(); got != 1 {
		t.Errorf("pending after REMOVE = %d, want 1", got)
	}

	// The same inside a transaction.
	if _, err := e.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Update: &types.Update{
		TableName:                aws.String("outbox"),
		Key:                      map[string]types.AttributeValue{"PK": s("ORDER#2"), "SK": s("OUTBOX#2")},
		UpdateExpression:         aws.String("REMOVE GSI1PK, GSI1SK"),
		ConditionExpression:      aws.String("attribute_exists(GSI1PK)"),
		ExpressionAttributeNames: nil,
	}}}}); err != nil {
		t.Fatal(err)
	}
	if got := pending(); got != 0 {
		t.Errorf("pending after transactional REMOVE = %d, want 0", got)
	}
	scan, err := e.ddb.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("outbox"), IndexName: aws.String("GSI1")})
	if err != nil || scan.Count != 0 {
		t.Errorf("GSI scan = %d items, %v", scan.Count, err)
	}

	recs := e.records(t, e.streamArn(t, "outbox"))
	if names := eventNames(recs); !reflect.DeepEqual(names, []string{"INSERT", "INSERT", "INSERT", "MODIFY", "MODIFY"}) {
		t.Fatalf("events = %v", names)
	}
	mod := recs[3].Dynamodb
	if _, ok := mod.NewImage["GSI1PK"]; ok {
		t.Errorf("MODIFY NewImage still has GSI1PK")
	}
	if _, ok := mod.OldImage["GSI1PK"]; !ok {
		t.Errorf("MODIFY OldImage lacks GSI1PK")
	}
}

func TestTransactionsCommitAndCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	e.createTable(t, "outbox", "NEW_IMAGE")
	put := func(pk, sk string) types.TransactWriteItem {
		return types.TransactWriteItem{Put: &types.Put{TableName: aws.String("outbox"),
			Item:                map[string]types.AttributeValue{"PK": s(pk), "SK": s(sk), "v": n("1")},
			ConditionExpression: aws.String("attribute_not_exists(PK)")}}
	}
	if _, err := e.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		put("ORDER#1", "ORDER"), put("ORDER#1", "OUTBOX#1"),
	}}); err != nil {
		t.Fatal(err)
	}

	_, err := e.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		put("ORDER#1", "ORDER"),
		put("ORDER#2", "ORDER"),
		{ConditionCheck: &types.ConditionCheck{TableName: aws.String("outbox"),
			Key:                                 map[string]types.AttributeValue{"PK": s("ORDER#1"), "SK": s("OUTBOX#1")},
			ConditionExpression:                 aws.String("v = :two"),
			ExpressionAttributeValues:           map[string]types.AttributeValue{":two": n("2")},
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
	}})
	tce := localawstest.ErrorAs[*types.TransactionCanceledException](t, err, "TransactWriteItems")
	var codes []string
	for _, r := range tce.CancellationReasons {
		codes = append(codes, aws.ToString(r.Code))
	}
	if !reflect.DeepEqual(codes, []string{"ConditionalCheckFailed", "None", "ConditionalCheckFailed"}) {
		t.Fatalf("reasons = %v", codes)
	}
	if tce.CancellationReasons[2].Item["v"] == nil {
		t.Errorf("ALL_OLD item missing from the reason: %+v", tce.CancellationReasons[2])
	}
	if !strings.Contains(tce.ErrorMessage(), "[ConditionalCheckFailed, None, ConditionalCheckFailed]") {
		t.Errorf("message = %s", tce.ErrorMessage())
	}
	got, _ := e.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("outbox"), Key: map[string]types.AttributeValue{"PK": s("ORDER#2"), "SK": s("ORDER")}})
	if got.Item != nil {
		t.Errorf("cancelled transaction wrote ORDER#2: %v", got.Item)
	}

	// Single-item condition failures.
	_, err = e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("outbox"),
		Item:                                map[string]types.AttributeValue{"PK": s("ORDER#1"), "SK": s("ORDER")},
		ConditionExpression:                 aws.String("attribute_not_exists(PK)"),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	localawstest.WantError[*types.ConditionalCheckFailedException](t, err, "PutItem error")

	recs := e.records(t, e.streamArn(t, "outbox"))
	if names := eventNames(recs); !reflect.DeepEqual(names, []string{"INSERT", "INSERT"}) {
		t.Fatalf("events = %v (a cancelled transaction must write none)", names)
	}
	for _, r := range recs {
		if r.Dynamodb.NewImage["v"] == nil || r.Dynamodb.OldImage != nil || r.Dynamodb.StreamViewType != stypes.StreamViewTypeNewImage {
			t.Errorf("NEW_IMAGE record = %+v", r.Dynamodb)
		}
	}
	if localddb.CompareSequenceNumbers(aws.ToString(recs[0].Dynamodb.SequenceNumber), aws.ToString(recs[1].Dynamodb.SequenceNumber)) >= 0 {
		t.Errorf("sequence numbers not increasing")
	}
	if aws.ToString(recs[0].EventVersion) != "1.1" || aws.ToString(recs[0].EventSource) != "aws:dynamodb" || aws.ToString(recs[0].AwsRegion) != "us-east-1" ||
		aws.ToString(recs[0].EventID) == "" || aws.ToInt64(recs[0].Dynamodb.SizeBytes) <= 0 || recs[0].Dynamodb.ApproximateCreationDateTime == nil {
		t.Errorf("record metadata = %+v", recs[0])
	}
}

func TestStreamViewTypesAndWritePaths(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	for _, vt := range []string{"KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"} {
		t.Run(vt, func(t *testing.T) {
			table := "t-" + strings.ToLower(strings.ReplaceAll(vt, "_", "-"))
			e.createTable(t, table, vt)
			key := map[string]types.AttributeValue{"PK": s("a"), "SK": s("1")}
			item := map[string]types.AttributeValue{"PK": s("a"), "SK": s("1"), "x": n("1")}
			must := func(_ any, err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}))
			must(e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item})) // no change: no record
			must(e.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key,
				UpdateExpression: aws.String("SET x = :two"), ExpressionAttributeValues: map[string]types.AttributeValue{":two": n("2")}}))
			must(e.ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key}))
			must(e.ddb.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key})) // missing: no record
			must(e.ddb.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: {
				{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{"PK": s("b"), "SK": s("1")}}},
				{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{"PK": s("c"), "SK": s("1")}}},
			}}}))
			must(e.ddb.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: {
				{DeleteRequest: &types.DeleteRequest{Key: map[string]types.AttributeValue{"PK": s("b"), "SK": s("1")}}},
			}}}))
			must(e.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Delete: &types.Delete{TableName: aws.String(table), Key: map[string]types.AttributeValue{"PK": s("c"), "SK": s("1")}}},
			}}))

			recs := e.records(t, e.streamArn(t, table))
			if names := eventNames(recs); !reflect.DeepEqual(names, []string{"INSERT", "MODIFY", "REMOVE", "INSERT", "INSERT", "REMOVE", "REMOVE"}) {
				t.Fatalf("events = %v", names)
			}
			wantNew := vt == "NEW_IMAGE" || vt == "NEW_AND_OLD_IMAGES"
			wantOld := vt == "OLD_IMAGE" || vt == "NEW_AND_OLD_IMAGES"
			mod := recs[1].Dynamodb
			if string(mod.StreamViewType) != vt || len(mod.Keys) != 2 {
				t.Errorf("MODIFY = %+v", mod)
			}
			if (mod.NewImage != nil) != wantNew || (mod.OldImage != nil) != wantOld {
				t.Errorf("%s images: new %v old %v", vt, mod.NewImage, mod.OldImage)
			}
			if wantNew && mod.NewImage["x"].(*stypes.AttributeValueMemberN).Value != "2" {
				t.Errorf("NewImage x = %v", mod.NewImage["x"])
			}
			if wantOld && mod.OldImage["x"].(*stypes.AttributeValueMemberN).Value != "1" {
				t.Errorf("OldImage x = %v", mod.OldImage["x"])
			}
			if recs[2].Dynamodb.NewImage != nil {
				t.Errorf("REMOVE has a NewImage")
			}
		})
	}
}

func TestStreamDisableEnableGivesNewArn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	e.createTable(t, "orders", "KEYS_ONLY")
	first := e.streamArn(t, "orders")
	put := func(pk string) { e.putKey(t, "orders", pk) }
	put("1")
	if _, err := e.ddb.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("orders"),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(false)}}); err != nil {
		t.Fatal(err)
	}
	put("2") // not recorded anywhere
	d, _ := e.ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("orders")})
	if d.Table.StreamSpecification != nil || aws.ToString(d.Table.LatestStreamArn) != first {
		t.Errorf("after disable: spec %+v latest %s", d.Table.StreamSpecification, aws.ToString(d.Table.LatestStreamArn))
	}
	ds, err := e.streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(first)})
	if err != nil || ds.StreamDescription.StreamStatus != stypes.StreamStatusDisabled || ds.StreamDescription.Shards[0].SequenceNumberRange.EndingSequenceNumber == nil {
		t.Fatalf("disabled stream = %+v, %v", ds, err)
	}
	// A disabled stream stays readable; its shard ends.
	it := e.iterator(t, first, stypes.ShardIteratorTypeTrimHorizon, "")
	r, err := e.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(it)})
	if err != nil || len(r.Records) != 1 || r.NextShardIterator != nil {
		t.Fatalf("GetRecords on disabled stream = %d records, next %v, %v", len(r.Records), r.NextShardIterator, err)
	}
	_, err = e.ddb.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("orders"),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(false)}})
	if localawstest.ErrorCode(err) != "ValidationException" {
		t.Errorf("disabling twice = %v", err)
	}

	if _, err := e.ddb.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("orders"),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}}); err != nil {
		t.Fatal(err)
	}
	second := e.streamArn(t, "orders")
	if second == first || second == "" {
		t.Fatalf("re-enabled stream ARN %s, first %s", second, first)
	}
	_, err = e.ddb.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("orders"),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly}})
	if localawstest.ErrorCode(err) != "ValidationException" {
		t.Errorf("enabling an enabled stream = %v", err)
	}
	put("3")
	recs := e.records(t, second)
	if len(recs) != 1 || recs[0].Dynamodb.Keys["PK"].(*stypes.AttributeValueMemberS).Value != "3" || recs[0].Dynamodb.StreamViewType != stypes.StreamViewTypeNewImage {
		t.Fatalf("new stream records = %+v", recs)
	}
	ls, err := e.streams.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String("orders")})
	if err != nil || len(ls.Streams) != 2 {
		t.Fatalf("ListStreams = %+v, %v", ls, err)
	}
}

func TestShardIteratorTypes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	e.createTable(t, "orders", "KEYS_ONLY")
	arn := e.streamArn(t, "orders")
	latest := e.iterator(t, arn, stypes.ShardIteratorTypeLatest, "")
	for _, pk := range []string{"1", "2", "3"} {
		if _, err := e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("orders"), Item: map[string]types.AttributeValue{"PK": s(pk), "SK": s("x")}}); err != nil {
			t.Fatal(err)
		}
	}
	all := e.records(t, arn)
	if len(all) != 3 {
		t.Fatalf("records = %d", len(all))
	}
	seq := func(i int) string { return aws.ToString(all[i].Dynamodb.SequenceNumber) }
	pks := func(it string, limit int32) ([]string, string) {
		t.Helper()
		in := &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(it)}
		if limit > 0 {
			in.Limit = aws.Int32(limit)
		}
		r, err := e.streams.GetRecords(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, rec := range r.Records {
			out = append(out, rec.Dynamodb.Keys["PK"].(*stypes.AttributeValueMemberS).Value)
		}
		return out, aws.ToString(r.NextShardIterator)
	}
	if got, _ := pks(latest, 0); !reflect.DeepEqual(got, []string{"1", "2", "3"}) {
		t.Errorf("LATEST taken before the writes = %v", got)
	}
	if got, _ := pks(e.iterator(t, arn, stypes.ShardIteratorTypeLatest, ""), 0); len(got) != 0 {
		t.Errorf("LATEST now = %v", got)
	}
	if got, _ := pks(e.iterator(t, arn, stypes.ShardIteratorTypeAtSequenceNumber, seq(1)), 0); !reflect.DeepEqual(got, []string{"2", "3"}) {
		t.Errorf("AT_SEQUENCE_NUMBER = %v", got)
	}
	if got, _ := pks(e.iterator(t, arn, stypes.ShardIteratorTypeAfterSequenceNumber, seq(1)), 0); !reflect.DeepEqual(got, []string{"3"}) {
		t.Errorf("AFTER_SEQUENCE_NUMBER = %v", got)
	}
	got, next := pks(e.iterator(t, arn, stypes.ShardIteratorTypeTrimHorizon, ""), 2)
	if !reflect.DeepEqual(got, []string{"1", "2"}) || next == "" {
		t.Fatalf("TRIM_HORIZON limit 2 = %v", got)
	}
	got, next = pks(next, 0)
	if !reflect.DeepEqual(got, []string{"3"}) || next == "" {
		t.Errorf("next page = %v", got)
	}
	if got, _ = pks(next, 0); len(got) != 0 {
		t.Errorf("past the end = %v", got)
	}
	_, err := e.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String("garbage")})
	if localawstest.ErrorCode(err) != "ValidationException" {
		t.Errorf("garbage iterator = %v", err)
	}
}

func TestTrimmedAndExpired(t *testing.T) {
	t.Parallel()
	// The clock moves only past the old record's retention: the new record
	// stays readable, and the old iterator valid, until the end.
	e, clock := newStoppedEnv(t, localddb.Options{StreamRetention: 300 * time.Millisecond, IteratorLifetime: 2 * time.Second}, time.Now())
	e.createTable(t, "orders", "KEYS_ONLY")
	arn := e.streamArn(t, "orders")
	put := func(pk string) { e.putKey(t, "orders", pk) }
	put("old")
	old := e.records(t, arn)
	oldIt := e.iterator(t, arn, stypes.ShardIteratorTypeTrimHorizon, "")
	clock.Advance(400 * time.Millisecond)
	put("new")

	_, err := e.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(oldIt)})
	localawstest.WantError[*stypes.TrimmedDataAccessException](t, err, "reading a trimmed position")
	_, err = e.streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn),
		ShardId: aws.String(e.svc.Streams().List("orders")[0].ShardID), ShardIteratorType: stypes.ShardIteratorTypeAtSequenceNumber,
		SequenceNumber: old[0].Dynamodb.SequenceNumber})
	localawstest.WantError[*stypes.TrimmedDataAccessException](t, err, "AT_SEQUENCE_NUMBER of a trimmed record")
	if _, err := e.svc.Streams().Records(arn, aws.ToString(old[0].Dynamodb.SequenceNumber), 10); err != nil {
		t.Fatalf("in-process read after the last trimmed record: %v", err)
	}
	recs := e.records(t, arn)
	if len(recs) != 1 || recs[0].Dynamodb.Keys["PK"].(*stypes.AttributeValueMemberS).Value != "new" {
		t.Fatalf("TRIM_HORIZON after trimming = %+v", recs)
	}

	e2, clock2 := newStoppedEnv(t, localddb.Options{IteratorLifetime: 50 * time.Millisecond}, time.Now())
	e2.createTable(t, "orders", "KEYS_ONLY")
	it := e2.iterator(t, e2.streamArn(t, "orders"), stypes.ShardIteratorTypeTrimHorizon, "")
	clock2.Advance(100 * time.Millisecond)
	_, err = e2.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: aws.String(it)})
	localawstest.WantError[*stypes.ExpiredIteratorException](t, err, "expired iterator")
}

func TestTTLDeletesWithServiceIdentity(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{TTLSweepInterval: 50 * time.Millisecond})
	e.createTable(t, "sessions", "NEW_AND_OLD_IMAGES")
	if _, err := e.ddb.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("sessions"),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("expiresAt"), Enabled: aws.Bool(true)}}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	for pk, exp := range map[string]types.AttributeValue{
		"expired": n(jsonInt(now - 10)),
		"future":  n(jsonInt(now + 3600)),
		"ancient": n(jsonInt(now - 6*365*24*3600)),
		"string":  s(jsonInt(now - 10)),
	} {
		if _, err := e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("sessions"), Item: map[string]types.AttributeValue{"PK": s(pk), "SK": s("x"), "expiresAt": exp}}); err != nil {
			t.Fatal(err)
		}
	}
	localawstest.Eventually(t, 5*time.Second, "the expired item to be deleted", func() bool {
		out, _ := e.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("sessions"), Key: map[string]types.AttributeValue{"PK": s("expired"), "SK": s("x")}})
		return out != nil && out.Item == nil
	})
	scan, _ := e.ddb.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("sessions")})
	if scan.Count != 3 {
		t.Errorf("items left = %d, want 3 (future, ancient, string)", scan.Count)
	}
	recs := e.records(t, e.streamArn(t, "sessions"))
	var removes []stypes.Record
	for _, r := range recs {
		if r.EventName == stypes.OperationTypeRemove {
			removes = append(removes, r)
		}
	}
	if len(removes) != 1 {
		t.Fatalf("REMOVE records = %d", len(removes))
	}
	ui := removes[0].UserIdentity
	if ui == nil || aws.ToString(ui.Type) != "Service" || aws.ToString(ui.PrincipalId) != "dynamodb.amazonaws.com" {
		t.Errorf("userIdentity = %+v", ui)
	}
	if removes[0].Dynamodb.OldImage["expiresAt"] == nil {
		t.Errorf("REMOVE OldImage = %v", removes[0].Dynamodb.OldImage)
	}
	for _, r := range recs {
		if r.EventName != stypes.OperationTypeRemove && r.UserIdentity != nil {
			t.Errorf("user write has a userIdentity")
		}
	}
}

func jsonInt(v int64) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestInProcessStreamAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	e.createTable(t, "orders", "NEW_AND_OLD_IMAGES")
	arn := e.streamArn(t, "orders")
	st := e.svc.Streams()
	if table, ok := st.TableForStream(arn); !ok || table != "orders" {
		t.Fatalf("TableForStream = %s %v", table, ok)
	}
	info, err := st.Describe(arn)
	if err != nil || info.StreamStatus != localddb.StreamEnabled || info.StreamViewType != "NEW_AND_OLD_IMAGES" || info.Latest != "" {
		t.Fatalf("Describe = %+v, %v", info, err)
	}
	ch, err := st.Changed(arn)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		_, _ = e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("orders"), Item: map[string]types.AttributeValue{"PK": s("1"), "SK": s("OUTBOX#1")}})
	}()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no change notification")
	}
	recs, err := st.Records(arn, "", 10)
	if err != nil || len(recs) != 1 {
		t.Fatalf("Records = %v, %v", recs, err)
	}
	b, _ := json.Marshal(recs[0])
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	dyn := m["dynamodb"].(map[string]any)
	if m["eventName"] != "INSERT" || dyn["Keys"].(map[string]any)["SK"].(map[string]any)["S"] != "OUTBOX#1" || dyn["SequenceNumber"] == nil {
		t.Errorf("record JSON = %s", b)
	}
	if more, _ := st.Records(arn, recs[0].Dynamodb.SequenceNumber, 10); len(more) != 0 {
		t.Errorf("records after the last = %v", more)
	}
	info, _ = st.Describe(arn)
	if info.Latest != recs[0].Dynamodb.SequenceNumber || info.TrimHorizon != info.Latest {
		t.Errorf("info after one record = %+v", info)
	}
}

func TestUpdateTableIndexes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	e.createTable(t, "orders", "")
	if _, err := e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("orders"), Item: map[string]types.AttributeValue{"PK": s("1"), "SK": s("x"), "status": s("open")}}); err != nil {
		t.Fatal(err)
	}
	out, err := e.ddb.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("orders"),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("status"), AttributeType: types.ScalarAttributeTypeS}},
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{
			{Create: &types.CreateGlobalSecondaryIndexAction{IndexName: aws.String("byStatus"),
				KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("status"), KeyType: types.KeyTypeHash}},
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[string]types.IndexStatus{}
	for _, g := range out.TableDescription.GlobalSecondaryIndexes {
		statuses[aws.ToString(g.IndexName)] = g.IndexStatus
	}
	if statuses["byStatus"] != types.IndexStatusCreating {
		t.Errorf("UpdateTable statuses = %v", statuses)
	}
	q, err := e.ddb.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("orders"), IndexName: aws.String("byStatus"),
		KeyConditionExpression: aws.String("#s = :o"), ExpressionAttributeNames: map[string]string{"#s": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":o": s("open")}})
	if err != nil || q.Count != 1 {
		t.Fatalf("query on the new index = %v, %v (backfill)", q, err)
	}
	_, err = e.ddb.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("orders"),
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Delete: &types.DeleteGlobalSecondaryIndexAction{IndexName: aws.String("GSI1")}}}})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := e.ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("orders")})
	if len(d.Table.GlobalSecondaryIndexes) != 1 || aws.ToString(d.Table.GlobalSecondaryIndexes[0].IndexName) != "byStatus" ||
		d.Table.GlobalSecondaryIndexes[0].IndexStatus != types.IndexStatusActive {
		t.Errorf("GSIs after delete = %+v", d.Table.GlobalSecondaryIndexes)
	}
}

func TestPutWithoutIndexKeyLeavesIndex(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	e.createTable(t, "outbox", "")
	key := map[string]types.AttributeValue{"PK": s("1"), "SK": s("1")}
	for _, item := range []map[string]types.AttributeValue{
		{"PK": s("1"), "SK": s("1"), "GSI1PK": s("PENDING#0"), "GSI1SK": s("1")},
		{"PK": s("2"), "SK": s("2"), "GSI1PK": s("PENDING#0"), "GSI1SK": s("2")},
		key,
	} {
		if _, err := e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("outbox"), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	scan, err := e.ddb.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("outbox"), IndexName: aws.String("GSI1")})
	if err != nil || scan.Count != 1 {
		t.Fatalf("index scan = %d, %v; want only item 2", scan.Count, err)
	}
	q, err := e.ddb.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("outbox"), IndexName: aws.String("GSI1"),
		KeyConditionExpression: aws.String("GSI1PK = :p"), ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("PENDING#0")}})
	if err != nil || q.Count != 1 || q.Items[0]["PK"].(*types.AttributeValueMemberS).Value != "2" {
		t.Fatalf("index query = %+v, %v", q, err)
	}
}

func TestConsumedCapacity(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	e.createTable(t, "outbox", "")
	put, err := e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("outbox"), ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes,
		Item: map[string]types.AttributeValue{"PK": s("1"), "SK": s("1"), "GSI1PK": s("P"), "GSI1SK": s("1")}})
	if err != nil {
		t.Fatal(err)
	}
	cc := put.ConsumedCapacity
	if cc == nil || aws.ToFloat64(cc.CapacityUnits) != 2 || aws.ToFloat64(cc.Table.CapacityUnits) != 1 || aws.ToFloat64(cc.GlobalSecondaryIndexes["GSI1"].CapacityUnits) != 1 {
		t.Fatalf("PutItem ConsumedCapacity = %+v", cc)
	}
	tx, err := e.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
		TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: aws.String("outbox"), Item: map[string]types.AttributeValue{"PK": s("2"), "SK": s("2")}}},
			{Put: &types.Put{TableName: aws.String("outbox"), Item: map[string]types.AttributeValue{"PK": s("3"), "SK": s("3")}}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(tx.ConsumedCapacity) != 1 || aws.ToFloat64(tx.ConsumedCapacity[0].CapacityUnits) != 4 {
		t.Fatalf("TransactWriteItems ConsumedCapacity = %+v", tx.ConsumedCapacity)
	}
	get, err := e.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("outbox"), ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
		Key: map[string]types.AttributeValue{"PK": s("1"), "SK": s("1")}})
	if err != nil || get.ConsumedCapacity == nil || aws.ToFloat64(get.ConsumedCapacity.CapacityUnits) != 0.5 || get.Item == nil {
		t.Fatalf("GetItem = %+v, %v", get, err)
	}
	none, _ := e.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("outbox"), Key: map[string]types.AttributeValue{"PK": s("1"), "SK": s("1")}})
	if none.ConsumedCapacity != nil {
		t.Errorf("ConsumedCapacity without asking = %+v", none.ConsumedCapacity)
	}
}

// TestStreamPageLimits checks the Limit rule ListStreams and DescribeStream
// share: absent is 100, and only 1 to 100 is accepted.
func TestStreamPageLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	e.createTable(t, "orders", "KEYS_ONLY")
	arn := aws.String(e.streamArn(t, "orders"))
	list := func(limit *int32) error {
		_, err := e.streams.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{Limit: limit})
		return err
	}
	describe := func(limit *int32) error {
		_, err := e.streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn, Limit: limit})
		return err
	}
	for name, call := range map[string]func(*int32) error{"ListStreams": list, "DescribeStream": describe} {
		for _, ok := range []*int32{nil, aws.Int32(1), aws.Int32(100)} {
			if err := call(ok); err != nil {
				t.Errorf("%s Limit %v: %v", name, aws.ToInt32(ok), err)
			}
		}
		for _, bad := range []int32{-1, 101} {
			if err := call(aws.Int32(bad)); localawstest.ErrorCode(err) != "ValidationException" {
				t.Errorf("%s Limit %d = %v, want ValidationException", name, bad, err)
			}
		}
	}
}
