package relaytest_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/perfreport"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestQueryResumesAfterSettledPage pages through the pending index while
// settling each page before reading the next, as the reconciler does: the
// start key's item has left the index by then.
func TestQueryResumesAfterSettledPage(t *testing.T) {
	t.Parallel()
	for _, settle := range []string{"mark", "delete"} {
		t.Run(settle, func(t *testing.T) {
			t.Parallel()
			table := outbox.Table{Name: "outbox", PendingShards: 1}.WithDefaults()
			fake := relaytest.New(t, table)
			records := relaytest.Records(table, 7, 16)
			fake.PutRecords(records)
			ctx := context.Background()
			in := table.PendingQuery(0, relaytest.Clock.Add(time.Hour))
			in.Limit = aws.Int32(3)
			var seen []string
			for page := 1; ; page++ {
				if page > 5 {
					t.Fatalf("still paging after %d pages: %v", page-1, seen)
				}
				out, err := fake.Query(ctx, in)
				if err != nil {
					t.Fatal(err)
				}
				for _, item := range out.Items {
					r, err := table.ParseItem(item)
					if err != nil {
						t.Fatal(err)
					}
					seen = append(seen, r.EventID)
					switch settle {
					case "mark":
						_, err = fake.UpdateItem(ctx, table.MarkPublished(r, relaytest.Clock, 0))
					default:
						_, err = fake.BatchWriteItem(ctx, batchDelete(table, r))
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				if len(out.LastEvaluatedKey) == 0 {
					break
				}
				in.ExclusiveStartKey = out.LastEvaluatedKey
			}
			want := make([]string, len(records))
			for i, r := range records {
				want[i] = r.EventID // oldest first
			}
			if !slices.Equal(seen, want) {
				t.Errorf("paged %v\nwant  %v", seen, want)
			}
			if got := fake.Calls(relaytest.OpQuery); got != 3 {
				t.Errorf("%d queries for 7 items in pages of 3, want 3", got)
			}
		})
	}
}

func batchDelete(table outbox.Table, r outbox.Record) *dynamodb.BatchWriteItemInput {
	return &dynamodb.BatchWriteItemInput{RequestItems: map[string][]ddb.WriteRequest{table.Name: {table.Delete(r)}}}
}

func TestItemSize(t *testing.T) {
	t.Parallel()
	item := map[string]ddb.AttributeValue{
		"pk":   &ddb.AttributeValueMemberS{Value: "ORDER#1"},                                                                  // 2 + 7
		"n":    &ddb.AttributeValueMemberN{Value: "1234"},                                                                     // 1 + 3
		"ok":   &ddb.AttributeValueMemberBOOL{Value: true},                                                                    // 2 + 1
		"tags": &ddb.AttributeValueMemberSS{Value: []string{"a", "bc"}},                                                       // 4 + 3
		"m":    &ddb.AttributeValueMemberM{Value: map[string]ddb.AttributeValue{"k": &ddb.AttributeValueMemberS{Value: "v"}}}, // 1 + 3 + 2
		"l":    &ddb.AttributeValueMemberL{Value: []ddb.AttributeValue{&ddb.AttributeValueMemberS{Value: "xy"}}},              // 1 + 3 + 1 + 2
	}
	if got, want := relaytest.ItemSize(item), 9+4+3+7+6+7; got != want {
		t.Errorf("ItemSize = %d, want %d", got, want)
	}
}

// TestWriteUnitsCounted: the options New is given reach the fake's client
// of its engine, so that a perfreport.CapacityCounter counts the write
// units of the relay's writes as DynamoDB reports them (an item under 1 KB
// and its pending-index entry removed: 2).
func TestWriteUnitsCounted(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "outbox"}.WithDefaults()
	counter := perfreport.NewCapacityCounter()
	fake := relaytest.New(t, table, counter.Option)
	records := relaytest.Records(table, 2, 16)
	fake.PutRecords(records)
	counter.Reset()
	ctx := context.Background()
	mark := table.MarkPublished(records[0], relaytest.Clock, time.Hour)
	if _, err := fake.UpdateItem(ctx, mark); err != nil {
		t.Fatal(err)
	}
	if got := counter.Units(table.Name).Total(); got != 2 {
		t.Errorf("after marking one event published: %v write units, want 2 (the item and its index entry)", got)
	}
	counter.Reset()
	if _, err := fake.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table.Name), Key: table.Key(records[1])}); err != nil {
		t.Fatal(err)
	}
	if got := counter.Units(table.Name).Total(); got != 2 {
		t.Errorf("after deleting one pending event: %v write units, want 2", got)
	}
}
