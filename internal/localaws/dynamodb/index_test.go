package dynamodb_test

import (
	"fmt"
	"sort"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	localddb "github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
)

// indexShards is how many GSI partition keys the items of the index tests
// spread over.
const indexShards = 4

// updateAll runs one UpdateItem per item PK=i SK=i of the table "outbox".
func updateAll(t *testing.T, e *env, n int, expr string, values func(i int) map[string]types.AttributeValue) {
	t.Helper()
	for i := range n {
		id := fmt.Sprintf("%05d", i)
		in := &dynamodb.UpdateItemInput{TableName: aws.String("outbox"), Key: map[string]types.AttributeValue{"PK": s(id), "SK": s(id)},
			UpdateExpression: aws.String(expr)}
		if values != nil {
			in.ExpressionAttributeValues = values(i)
		}
		if _, err := e.ddb.UpdateItem(ctx, in); err != nil {
			t.Fatalf("UpdateItem %s %q: %v", id, expr, err)
		}
	}
}

// indexedIDs queries every shard of GSI1, page by page, and returns the
// PKs found, sorted, with the shard each was found in.
func indexedIDs(t *testing.T, e *env) (ids []string, shardOf map[string]string) {
	t.Helper()
	shardOf = map[string]string{}
	for sh := range indexShards {
		shard := fmt.Sprintf("PENDING#%d", sh)
		p := dynamodb.NewQueryPaginator(e.ddb, &dynamodb.QueryInput{TableName: aws.String("outbox"), IndexName: aws.String("GSI1"),
			KeyConditionExpression:    aws.String("GSI1PK = :p"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": s(shard)}, Limit: aws.Int32(100)})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatalf("Query %s: %v", shard, err)
			}
			for _, it := range page.Items {
				id := it["PK"].(*types.AttributeValueMemberS).Value
				if prev, dup := shardOf[id]; dup {
					t.Fatalf("item %s found in %s and %s", id, prev, shard)
				}
				shardOf[id] = shard
				ids = append(ids, id)
			}
		}
	}
	sort.Strings(ids)
	return ids, shardOf
}

// TestItemsGainingIndexKeysThroughUpdateAreIndexed is the replay path: many
// items without index keys gain them through UpdateItem (a requeue), and
// each is then found through the index; moving them between index
// partitions moves them; removing the keys empties the index.
func TestItemsGainingIndexKeysThroughUpdateAreIndexed(t *testing.T) {
	t.Parallel()
	const items = 1000
	e := newEnv(t, localddb.Options{})
	e.createTable(t, "outbox", "")
	for i := range items {
		id := fmt.Sprintf("%05d", i)
		if _, err := e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("outbox"),
			Item: map[string]types.AttributeValue{"PK": s(id), "SK": s(id), "outboxStatus": s("FAILED")}}); err != nil {
			t.Fatal(err)
		}
	}
	if ids, _ := indexedIDs(t, e); len(ids) != 0 {
		t.Fatalf("index holds %d items before any has its keys", len(ids))
	}

	shardValues := func(offset int) func(i int) map[string]types.AttributeValue {
		return func(i int) map[string]types.AttributeValue {
			return map[string]types.AttributeValue{":p": s(fmt.Sprintf("PENDING#%d", (i+offset)%indexShards)), ":t": s(fmt.Sprintf("%05d", i))}
		}
	}
	updateAll(t, e, items, "SET GSI1PK = :p, GSI1SK = :t, outboxStatus = :st", func(i int) map[string]types.AttributeValue {
		v := shardValues(0)(i)
		v[":st"] = s("PENDING")
		return v
	})
	checkIndexed(t, e, items, 0)

	updateAll(t, e, items, "SET GSI1PK = :p", func(i int) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{":p": shardValues(1)(i)[":p"]}
	})
	checkIndexed(t, e, items, 1)

	updateAll(t, e, items, "REMOVE GSI1PK, GSI1SK", nil)
	if ids, _ := indexedIDs(t, e); len(ids) != 0 {
		t.Fatalf("index holds %d items after every item lost its keys", len(ids))
	}
	scan, err := e.ddb.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("outbox"), IndexName: aws.String("GSI1"), Select: types.SelectCount})
	if err != nil || scan.Count != 0 {
		t.Fatalf("index scan = %d, %v; want 0", scan.Count, err)
	}
}

// checkIndexed asserts that items 0..n-1 are each in the index once, in
// shard PENDING#((i+offset) mod indexShards).
func checkIndexed(t *testing.T, e *env, n, offset int) {
	t.Helper()
	ids, shardOf := indexedIDs(t, e)
	if len(ids) != n {
		t.Fatalf("index holds %d items, want %d", len(ids), n)
	}
	for i := range n {
		id := fmt.Sprintf("%05d", i)
		if want := fmt.Sprintf("PENDING#%d", (i+offset)%indexShards); shardOf[id] != want {
			t.Fatalf("item %s in %q, want %q", id, shardOf[id], want)
		}
	}
}
