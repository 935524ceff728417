package dynamodb_test

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// stackClient starts a stack serving only DynamoDB and returns an SDK
// client for it (no retries).
func stackClient(t *testing.T) *dynamodb.Client {
	t.Helper()
	stack := localawstest.StartDynamoDB(t)
	return dynamodb.NewFromConfig(localawstest.Config(stack), func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} })
}

// createKeyed creates table name with keyedTableInput.
func createKeyed(t *testing.T, db *dynamodb.Client, name string, skType types.ScalarAttributeType) {
	t.Helper()
	_, err := db.CreateTable(ctx, keyedTableInput(name, skType))
	if err != nil {
		t.Fatal(err)
	}
}

func put(t *testing.T, db *dynamodb.Client, table string, item map[string]types.AttributeValue) {
	t.Helper()
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
		t.Fatal(err)
	}
}

func sk(item map[string]types.AttributeValue) string {
	switch v := item["SK"].(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return v.Value
	}
	return "?"
}

// TestPagingResumesAfterStartItemLeft pages with Limit while each page's
// items leave what is read (deleted, or their index keys removed) before
// the next page is read: DynamoDB resumes after ExclusiveStartKey's
// position whether or not its item is still there.
func TestPagingResumesAfterStartItemLeft(t *testing.T) {
	t.Parallel()
	db := stackClient(t)
	for i, tc := range []struct {
		name     string
		scan     bool
		index    bool
		backward bool
		settle   string // "delete" or "unindex"
	}{
		{name: "query table delete", settle: "delete"},
		{name: "query table delete backward", settle: "delete", backward: true},
		{name: "query index delete", index: true, settle: "delete"},
		{name: "query index unindex", index: true, settle: "unindex"},
		{name: "query index unindex backward", index: true, settle: "unindex", backward: true},
		{name: "scan table delete", scan: true, settle: "delete"},
		{name: "scan index delete", scan: true, index: true, settle: "delete"},
		{name: "scan index unindex", scan: true, index: true, settle: "unindex"},
	} {
		table := fmt.Sprintf("paging%d", i)
		t.Run(tc.name, func(t *testing.T) {
			createKeyed(t, db, table, types.ScalarAttributeTypeS)
			var want []string
			for i := range 7 {
				key := fmt.Sprintf("item%02d", i)
				want = append(want, key)
				put(t, db, table, map[string]types.AttributeValue{"PK": s("p"), "SK": s(key), "GSI1PK": s("g"), "GSI1SK": s(key)})
			}
			if tc.backward {
				slices.Reverse(want)
			}
			var (
				got   []string
				start map[string]types.AttributeValue
				pages int
			)
			for {
				pages++
				if pages > 5 {
					t.Fatalf("still paging after 5 pages: %v", got)
				}
				var items, last []map[string]types.AttributeValue
				if tc.scan {
					in := &dynamodb.ScanInput{TableName: aws.String(table), Limit: aws.Int32(3), ExclusiveStartKey: start}
					if tc.index {
						in.IndexName = aws.String("GSI1")
					}
					out, err := db.Scan(ctx, in)
					if err != nil {
						t.Fatal(err)
					}
					items, last = out.Items, []map[string]types.AttributeValue{out.LastEvaluatedKey}
				} else {
					in := &dynamodb.QueryInput{TableName: aws.String(table), Limit: aws.Int32(3), ExclusiveStartKey: start,
						KeyConditionExpression:    aws.String("PK = :p"),
						ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("p")},
						ScanIndexForward:          aws.Bool(!tc.backward)}
					if tc.index {
						in.IndexName = aws.String("GSI1")
						in.KeyConditionExpression = aws.String("GSI1PK = :p")
						in.ExpressionAttributeValues = map[string]types.AttributeValue{":p": s("g")}
					}
					out, err := db.Query(ctx, in)
					if err != nil {
						t.Fatal(err)
					}
					items, last = out.Items, []map[string]types.AttributeValue{out.LastEvaluatedKey}
				}
				for _, item := range items {
					got = append(got, sk(item))
					key := map[string]types.AttributeValue{"PK": item["PK"], "SK": item["SK"]}
					var err error
					if tc.settle == "delete" {
						_, err = db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key})
					} else {
						_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key,
							UpdateExpression: aws.String("REMOVE GSI1PK, GSI1SK")})
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				if len(last[0]) == 0 {
					break
				}
				start = last[0]
			}
			if !slices.Equal(got, want) {
				t.Errorf("paged %v, want %v", got, want)
			}
			if pages != 3 {
				t.Errorf("%d pages for 7 items in pages of 3, want 3", pages)
			}
		})
	}
}

// queryAllPages reads in page by page from its ExclusiveStartKey, at most
// 10 pages, calling check (when set) on each page but the last, and
// returns the sort keys read and the number of pages.
func queryAllPages(t *testing.T, db *dynamodb.Client, in *dynamodb.QueryInput, check func(page int, out *dynamodb.QueryOutput)) ([]string, int) {
	t.Helper()
	var got []string
	for page := 1; page <= 10; page++ {
		out, err := db.Query(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range out.Items {
			got = append(got, sk(item))
		}
		if len(out.LastEvaluatedKey) == 0 {
			return got, page
		}
		if check != nil {
			check(page, out)
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	t.Fatalf("the Query did not end in 10 pages")
	return nil, 0
}

// TestNumericSortKeysOrderNumerically queries a table and an index whose
// range keys are numbers, both directions, in pages of 2.
func TestNumericSortKeysOrderNumerically(t *testing.T) {
	t.Parallel()
	db := stackClient(t)
	createKeyed(t, db, "numbers", types.ScalarAttributeTypeN)
	nums := []string{"100", "-20", "7", "10", "0.5", "5", "1000", "-3"}
	for _, v := range nums {
		put(t, db, "numbers", map[string]types.AttributeValue{"PK": s("p"), "SK": n(v), "GSI1PK": s("g"), "GSI1SK": n(v)})
	}
	ascending := []string{"-20", "-3", "0.5", "5", "7", "10", "100", "1000"}
	for _, index := range []bool{false, true} {
		for _, forward := range []bool{true, false} {
			t.Run(fmt.Sprintf("index=%v forward=%v", index, forward), func(t *testing.T) {
				in := &dynamodb.QueryInput{TableName: aws.String("numbers"), Limit: aws.Int32(2), ScanIndexForward: aws.Bool(forward),
					KeyConditionExpression: aws.String("PK = :p"), ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("p")}}
				if index {
					in.IndexName, in.KeyConditionExpression = aws.String("GSI1"), aws.String("GSI1PK = :g")
					in.ExpressionAttributeValues = map[string]types.AttributeValue{":g": s("g")}
				}
				got, _ := queryAllPages(t, db, in, nil)
				want := slices.Clone(ascending)
				if !forward {
					slices.Reverse(want)
				}
				if !slices.Equal(got, want) {
					t.Errorf("got %v, want %v", got, want)
				}
			})
		}
	}
}

// TestPagesOfALargePartitionStopAtOneMegabyte reads, without a Limit, a
// partition of an index holding about 3.5 MB in items of about 1,900 bytes with
// numeric sort keys, forward and backward: each page but the last stops
// at 1 MB, and the pages hold every item once, in numeric order.
func TestPagesOfALargePartitionStopAtOneMegabyte(t *testing.T) {
	t.Parallel()
	db := stackClient(t)
	createKeyed(t, db, "large", types.ScalarAttributeTypeN)
	const items = 1800
	pad := strings.Repeat("x", 1900)
	for i := 0; i < items; i += 25 {
		var reqs []types.WriteRequest
		for j := i; j < i+25; j++ {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
				"PK": s("p"), "SK": n(strconv.Itoa(items - j)), "GSI1PK": s("g"), "GSI1SK": n(strconv.Itoa(items - j)), "pad": s(pad)}}})
		}
		if _, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"large": reqs}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, forward := range []bool{true, false} {
		in := &dynamodb.QueryInput{TableName: aws.String("large"), IndexName: aws.String("GSI1"), ScanIndexForward: aws.Bool(forward),
			KeyConditionExpression: aws.String("GSI1PK = :g"), ExpressionAttributeValues: map[string]types.AttributeValue{":g": s("g")}}
		got, pages := queryAllPages(t, db, in, func(page int, out *dynamodb.QueryOutput) {
			// An item is its pad and under 64 bytes of keys and names.
			if least, most := len(out.Items)*len(pad), len(out.Items)*(len(pad)+64); least > 1<<20 || most < 1<<20 {
				t.Errorf("forward=%v page %d: %d items of %d to %d bytes, want a page of 1 MB", forward, page, len(out.Items), len(pad), len(pad)+64)
			}
		})
		want := make([]string, items)
		for i := range want {
			want[i] = strconv.Itoa(i + 1)
		}
		if !forward {
			slices.Reverse(want)
		}
		if pages != 4 || !slices.Equal(got, want) {
			t.Errorf("forward=%v: %d items in %d pages, want %d in 4 pages, in numeric order", forward, len(got), pages, items)
		}
	}
}

// TestLastEvaluatedKeyWhenPageIsFull checks that a page stopped by Limit
// has a LastEvaluatedKey even when it holds the last item, and that a page
// Limit does not stop has none.
func TestLastEvaluatedKeyWhenPageIsFull(t *testing.T) {
	t.Parallel()
	db := stackClient(t)
	createKeyed(t, db, "full", types.ScalarAttributeTypeS)
	for _, k := range []string{"a", "b", "c", "d"} {
		put(t, db, "full", map[string]types.AttributeValue{"PK": s("p"), "SK": s(k)})
	}
	put(t, db, "full", map[string]types.AttributeValue{"PK": s("other"), "SK": s("z")})
	query := func(limit int32, start map[string]types.AttributeValue) *dynamodb.QueryOutput {
		t.Helper()
		out, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("full"), Limit: aws.Int32(limit), ExclusiveStartKey: start,
			KeyConditionExpression: aws.String("PK = :p"), ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("p")}})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, limit := range []int32{2, 4} {
		out := query(limit, nil)
		if out.Count != limit || len(out.LastEvaluatedKey) == 0 {
			t.Fatalf("Limit %d: Count %d, LastEvaluatedKey %v; want a full page with a key", limit, out.Count, out.LastEvaluatedKey)
		}
		if limit == 4 {
			if got := sk(out.LastEvaluatedKey); got != "d" {
				t.Errorf("Limit 4: LastEvaluatedKey SK %s, want d", got)
			}
			last := query(limit, out.LastEvaluatedKey)
			if last.Count != 0 || len(last.LastEvaluatedKey) != 0 {
				t.Errorf("after the last item: Count %d, LastEvaluatedKey %v; want an empty last page", last.Count, last.LastEvaluatedKey)
			}
		}
	}
	if out := query(5, nil); out.Count != 4 || len(out.LastEvaluatedKey) != 0 {
		t.Errorf("Limit 5: Count %d, LastEvaluatedKey %v; want 4 items and no key", out.Count, out.LastEvaluatedKey)
	}
	scan, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("full"), Limit: aws.Int32(5)})
	if err != nil || scan.Count != 5 || len(scan.LastEvaluatedKey) == 0 {
		t.Errorf("Scan Limit 5 of 5 items: %v, Count %d, LastEvaluatedKey %v; want a key", err, scan.Count, scan.LastEvaluatedKey)
	}
}

// TestConditionOnOtherTypeIsFalse compares a number attribute with a
// string value: the comparison is false (<> true), not an error, in
// conditions of every write path and in filters.
func TestConditionOnOtherTypeIsFalse(t *testing.T) {
	t.Parallel()
	db := stackClient(t)
	createKeyed(t, db, "typed", types.ScalarAttributeTypeS)
	key := map[string]types.AttributeValue{"PK": s("p"), "SK": s("1")}
	put(t, db, "typed", map[string]types.AttributeValue{"PK": s("p"), "SK": s("1"), "status": n("1")})
	names := map[string]string{"#status": "status"}
	pending := map[string]types.AttributeValue{":pending": s("PENDING")}
	var ccf *types.ConditionalCheckFailedException

	_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("typed"), Key: key,
		UpdateExpression: aws.String("SET #status = :pending"), ConditionExpression: aws.String("#status = :pending"),
		ExpressionAttributeNames: names, ExpressionAttributeValues: pending,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	if !errors.As(err, &ccf) {
		t.Fatalf("UpdateItem with #status = :pending on a number: %v, want ConditionalCheckFailedException", err)
	}
	if ccf.Item["status"] == nil {
		t.Errorf("ConditionalCheckFailedException Item = %v, want the stored item", ccf.Item)
	}
	for _, cond := range []string{"#status < :pending", "#status BETWEEN :pending AND :pending"} {
		_, err = db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("typed"), Key: key,
			ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: pending})
		if !errors.As(err, &ccf) {
			t.Errorf("DeleteItem if %s: %v, want ConditionalCheckFailedException", cond, err)
		}
	}
	_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("typed"),
		Item:                map[string]types.AttributeValue{"PK": s("p"), "SK": s("1"), "status": n("2")},
		ConditionExpression: aws.String("#status <> :pending AND attribute_exists(PK)"), ExpressionAttributeNames: names, ExpressionAttributeValues: pending})
	if err != nil {
		t.Fatalf("PutItem if #status <> :pending: %v, want success", err)
	}
	_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{
		ConditionCheck: &types.ConditionCheck{TableName: aws.String("typed"), Key: key,
			ConditionExpression: aws.String("#status = :pending"), ExpressionAttributeNames: names, ExpressionAttributeValues: pending},
	}}})
	var canceled *types.TransactionCanceledException
	if !errors.As(err, &canceled) || len(canceled.CancellationReasons) != 1 || aws.ToString(canceled.CancellationReasons[0].Code) != "ConditionalCheckFailed" {
		t.Errorf("TransactWriteItems check #status = :pending: %v, want TransactionCanceledException [ConditionalCheckFailed]", err)
	}
	q, err := db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("typed"), KeyConditionExpression: aws.String("PK = :p"),
		FilterExpression: aws.String("#status = :pending"), ExpressionAttributeNames: names,
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": s("p"), ":pending": s("PENDING")}})
	if err != nil || q.Count != 0 || q.ScannedCount != 1 {
		t.Errorf("Query filtered on #status = :pending: %v, Count %d, ScannedCount %d; want 0 of 1", err, q.Count, q.ScannedCount)
	}
	got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("typed"), Key: key})
	if err != nil || got.Item["status"] == nil || got.Item["status"].(*types.AttributeValueMemberN).Value != "2" {
		t.Errorf("item after the writes: %v, %v; want status 2", got, err)
	}
}
