package dynamodb_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	localddb "github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

func batchKeys(ids []string) []map[string]types.AttributeValue {
	keys := make([]map[string]types.AttributeValue, len(ids))
	for i, id := range ids {
		keys[i] = map[string]types.AttributeValue{"PK": s(id), "SK": s(id)}
	}
	return keys
}

func TestBatchGetItemConsistentReadAndCapacity(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	e.createTable(t, "items", "")
	var ids []string
	for i := range 100 {
		id := fmt.Sprintf("%03d", i)
		ids = append(ids, id)
		if i%2 == 1 {
			continue // every other key is missing
		}
		if _, err := e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("items"),
			Item: map[string]types.AttributeValue{"PK": s(id), "SK": s(id), "status": s("PENDING"), "body": s("x")}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, consistent := range []bool{true, false} {
		out, err := e.ddb.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
			RequestItems: map[string]types.KeysAndAttributes{"items": {Keys: batchKeys(ids), ConsistentRead: aws.Bool(consistent),
				ProjectionExpression: aws.String("PK, #s"), ExpressionAttributeNames: map[string]string{"#s": "status"}}},
			ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
		if err != nil {
			t.Fatal(err)
		}
		got := out.Responses["items"]
		if len(got) != 50 || len(out.UnprocessedKeys) != 0 {
			t.Fatalf("consistent=%v: %d items, %d unprocessed tables; want the 50 present, none unprocessed", consistent, len(got), len(out.UnprocessedKeys))
		}
		for _, it := range got {
			if len(it) != 2 || it["status"].(*types.AttributeValueMemberS).Value != "PENDING" {
				t.Fatalf("projected item = %v; want PK and status", it)
			}
		}
		// Each of the 100 keys is one read rounded up to 4 KB, found or
		// not: 1 unit consistent, 0.5 eventually consistent.
		want := 100.0
		if !consistent {
			want = 50
		}
		if len(out.ConsumedCapacity) != 1 || aws.ToFloat64(out.ConsumedCapacity[0].CapacityUnits) != want {
			t.Fatalf("consistent=%v: ConsumedCapacity = %+v; want %v units", consistent, out.ConsumedCapacity, want)
		}
	}
	dup := batchKeys([]string{"000", "000"})
	if _, err := e.ddb.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"items": {Keys: dup}}}); localawstest.ErrorCode(err) != "ValidationException" ||
		!strings.Contains(err.Error(), "duplicates") {
		t.Fatalf("duplicate keys = %v; want ValidationException", err)
	}
	if _, err := e.ddb.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"items": {Keys: batchKeys(append(ids, "100"))}}}); localawstest.ErrorCode(err) != "ValidationException" {
		t.Fatalf("101 keys = %v; want ValidationException", err)
	}
}

// TestBatchGetItemUnprocessedKeysPastSixteenMegabytes reads 60 items of
// about 390 KB: one response stops at 16 MB and returns the rest in
// UnprocessedKeys, with the request's attributes, which a retry loop reads.
func TestBatchGetItemUnprocessedKeysPastSixteenMegabytes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	e.createTable(t, "big", "")
	body := strings.Repeat("b", 390*1024)
	var ids []string
	for i := range 60 {
		id := fmt.Sprintf("%02d", i)
		ids = append(ids, id)
		if _, err := e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("big"),
			Item: map[string]types.AttributeValue{"PK": s(id), "SK": s(id), "body": s(body)}}); err != nil {
			t.Fatal(err)
		}
	}
	request := map[string]types.KeysAndAttributes{"big": {Keys: batchKeys(ids), ConsistentRead: aws.Bool(true)}}
	seen := map[string]int{}
	calls := 0
	for len(request) > 0 {
		calls++
		if calls > 10 {
			t.Fatal("UnprocessedKeys never drained")
		}
		out, err := e.ddb.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: request})
		if err != nil {
			t.Fatal(err)
		}
		size := 0
		for _, it := range out.Responses["big"] {
			seen[it["PK"].(*types.AttributeValueMemberS).Value]++
			size += len(it["body"].(*types.AttributeValueMemberS).Value)
		}
		if size > 16<<20+400<<10 {
			t.Fatalf("one response holds %d bytes; the limit is 16 MB", size)
		}
		if rest, ok := out.UnprocessedKeys["big"]; ok && !aws.ToBool(rest.ConsistentRead) {
			t.Fatal("UnprocessedKeys lost the request's ConsistentRead")
		}
		request = out.UnprocessedKeys
	}
	if calls < 2 {
		t.Fatalf("60 items of 390 KB came back in %d call; want UnprocessedKeys past 16 MB", calls)
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Fatalf("item %s read %d times over %d calls", id, seen[id], calls)
		}
	}
}

func TestParallelScanSegmentsPartitionTheTable(t *testing.T) {
	t.Parallel()
	e := newEnv(t, localddb.Options{})
	e.createTable(t, "scan", "")
	const items = 600
	for i := range items {
		pk := fmt.Sprintf("P%03d", i/3) // three items per partition key
		if _, err := e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("scan"),
			Item: map[string]types.AttributeValue{"PK": s(pk), "SK": s(fmt.Sprintf("%04d", i))}}); err != nil {
			t.Fatal(err)
		}
	}
	const total = 4
	segmentOf := map[string]int32{}
	seen := map[string]bool{}
	for seg := range int32(total) {
		p := dynamodb.NewScanPaginator(e.ddb, &dynamodb.ScanInput{TableName: aws.String("scan"), Segment: aws.Int32(seg), TotalSegments: aws.Int32(total), Limit: aws.Int32(37)})
		n := 0
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range page.Items {
				pk, sk := it["PK"].(*types.AttributeValueMemberS).Value, it["SK"].(*types.AttributeValueMemberS).Value
				if seen[sk] {
					t.Fatalf("item %s returned twice", sk)
				}
				seen[sk] = true
				if prev, ok := segmentOf[pk]; ok && prev != seg {
					t.Fatalf("partition key %s in segments %d and %d", pk, prev, seg)
				}
				segmentOf[pk] = seg
				n++
			}
		}
		if n == 0 || n == items {
			t.Fatalf("segment %d of %d holds %d of %d items", seg, total, n, items)
		}
	}
	if len(seen) != items {
		t.Fatalf("the segments together hold %d items, want %d", len(seen), items)
	}
	for _, bad := range []*dynamodb.ScanInput{
		{TableName: aws.String("scan"), Segment: aws.Int32(0)},
		{TableName: aws.String("scan"), TotalSegments: aws.Int32(2)},
		{TableName: aws.String("scan"), Segment: aws.Int32(2), TotalSegments: aws.Int32(2)},
		{TableName: aws.String("scan"), Segment: aws.Int32(0), TotalSegments: aws.Int32(1000001)},
	} {
		if _, err := e.ddb.Scan(ctx, bad); localawstest.ErrorCode(err) != "ValidationException" {
			t.Errorf("Scan Segment=%v TotalSegments=%v = %v; want ValidationException", aws.ToInt32(bad.Segment), aws.ToInt32(bad.TotalSegments), err)
		}
	}
}
