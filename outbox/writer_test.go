package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

var fixedNow = time.Date(2026, 11, 30, 10, 15, 0, 123_000_000, time.UTC)

type recordingClient struct {
	calls []*dynamodb.TransactWriteItemsInput
	err   error
}

func (c *recordingClient) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.calls = append(c.calls, in)
	return &dynamodb.TransactWriteItemsOutput{}, c.err
}

func newWriter(t *testing.T, client outbox.TransactWriter, table outbox.Table) *outbox.Writer {
	t.Helper()
	w, err := outbox.NewWriter(client, table, outbox.WithClock(func() time.Time { return fixedNow }))
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	return w
}

func orderPlaced() outbox.Event {
	return outbox.Event{
		PartitionKey: "ORDER#1234",
		Source:       "com.example.orders",
		DetailType:   "OrderPlaced",
		Detail:       json.RawMessage(`{ "orderId": "1234", "total": 42.5 }`),
	}
}

func TestWriterPutBuildsTheContractItem(t *testing.T) {
	t.Parallel()
	w := newWriter(t, nil, outbox.Table{Name: "orders", Layout: outbox.LayoutShared})
	e := orderPlaced()
	e.TraceHeader = "Root=1-5759e988-bd862e3fe1be46a994272793"
	action, rec, err := w.Put(e)
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	if action.Put == nil || *action.Put.TableName != "orders" {
		t.Fatalf("want a Put on orders, got %+v", action)
	}
	if got := *action.Put.ConditionExpression; got != "attribute_not_exists(#pk)" || action.Put.ExpressionAttributeNames["#pk"] != "PK" {
		t.Errorf("condition = %q %v", got, action.Put.ExpressionAttributeNames)
	}
	item := action.Put.Item
	want := map[string]string{
		"PK":                 "ORDER#1234",
		"SK":                 "OUTBOX#" + rec.EventID,
		"eventId":            rec.EventID,
		"source":             "com.example.orders",
		"detailType":         "OrderPlaced",
		"detail":             `{"orderId":"1234","total":42.5}`,
		"occurredAt":         "2026-11-30T10:15:00.123Z",
		"status":             "PENDING",
		"outboxPendingShard": outbox.PendingShardKey(w.Table().ShardFor(rec.EventID)),
		"traceHeader":        e.TraceHeader,
	}
	for name, value := range want {
		if str(item[name]) != value {
			t.Errorf("%s = %#v, want S %q", name, item[name], value)
		}
	}
	if num(item["outboxPendingSince"]) != "1796033700123" {
		t.Errorf("outboxPendingSince = %#v", item["outboxPendingSince"])
	}
	if num(item["outboxVersion"]) != "1" {
		t.Errorf("outboxVersion = %#v", item["outboxVersion"])
	}
	if len(item) != len(want)+2 {
		t.Errorf("item has %d attributes, want %d: %v", len(item), len(want)+2, item)
	}
	if len(rec.EventID) != 26 || !strings.HasPrefix(rec.EventID, "01") {
		t.Errorf("event id %q is not a ULID of this century", rec.EventID)
	}
}

func TestItemRoundTrip(t *testing.T) {
	t.Parallel()
	for _, table := range []outbox.Table{
		{Name: "outbox"},
		{Name: "app", Layout: outbox.LayoutShared, PartitionKey: "pk", SortKey: "sk", SortKeyPrefix: "EVT#", TTLAttribute: "ttl", PendingShards: 3},
	} {
		w := newWriter(t, nil, table)
		action, rec, err := w.Put(orderPlaced())
		if err != nil {
			t.Fatal(err)
		}
		got, err := w.Table().ParseItem(action.Put.Item)
		if err != nil {
			t.Fatalf("ParseItem: %v", err)
		}
		if got.EventID != rec.EventID || got.SortKey != rec.SortKey || got.PartitionKey != rec.PartitionKey ||
			string(got.Detail) != string(rec.Detail) || !got.OccurredAt.Equal(rec.OccurredAt) ||
			got.PendingShard != rec.PendingShard || got.PendingSince != rec.PendingSince || got.Status != outbox.StatusPending {
			t.Errorf("round trip of %s:\n got %+v\nwant %+v", table.Name, got, rec)
		}
	}
}

func TestDedicatedLayoutDefaultsThePartitionKey(t *testing.T) {
	t.Parallel()
	w := newWriter(t, nil, outbox.Table{Name: "outbox"})
	e := orderPlaced()
	e.PartitionKey = ""
	_, rec, err := w.Put(e)
	if err != nil {
		t.Fatal(err)
	}
	if rec.PartitionKey != rec.SortKey {
		t.Errorf("PK = %q, want the sort key %q", rec.PartitionKey, rec.SortKey)
	}
}

func TestWriterRejectsInvalidEvents(t *testing.T) {
	t.Parallel()
	big := `{"blob":"` + strings.Repeat("x", outbox.MaxEntryBytes) + `"}`
	tests := []struct {
		name  string
		edit  func(*outbox.Event)
		err   error
		field string
	}{
		{"empty source", func(e *outbox.Event) { e.Source = "" }, outbox.ErrEmptySource, "Source"},
		{"aws source", func(e *outbox.Event) { e.Source = "aws.s3" }, outbox.ErrInvalidSource, "Source"},
		{"long source", func(e *outbox.Event) { e.Source = strings.Repeat("s", 257) }, outbox.ErrInvalidSource, "Source"},
		{"empty detail type", func(e *outbox.Event) { e.DetailType = "" }, outbox.ErrEmptyDetailType, "DetailType"},
		{"long detail type", func(e *outbox.Event) { e.DetailType = strings.Repeat("d", 129) }, outbox.ErrInvalidDetailType, "DetailType"},
		{"array detail", func(e *outbox.Event) { e.Detail = json.RawMessage(`[1,2]`) }, outbox.ErrDetailNotObject, "Detail"},
		{"string detail", func(e *outbox.Event) { e.Detail = json.RawMessage(`"x"`) }, outbox.ErrDetailNotObject, "Detail"},
		{"broken detail", func(e *outbox.Event) { e.Detail = json.RawMessage(`{"a":`) }, outbox.ErrDetailNotObject, "Detail"},
		{"no detail", func(e *outbox.Event) { e.Detail = nil }, outbox.ErrDetailNotObject, "Detail"},
		{"oversize detail", func(e *outbox.Event) { e.Detail = json.RawMessage(big) }, outbox.ErrEventTooLarge, "Detail"},
		{"bad id", func(e *outbox.Event) { e.ID = "order-1" }, outbox.ErrInvalidEventID, "ID"},
		{"shared without PK", func(e *outbox.Event) { e.PartitionKey = "" }, outbox.ErrMissingPartitionKey, "PartitionKey"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client := &recordingClient{}
			w := newWriter(t, client, outbox.Table{Name: "orders", Layout: outbox.LayoutShared})
			bad := orderPlaced()
			tt.edit(&bad)
			_, err := w.Write(context.Background(), nil, orderPlaced(), bad)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			var ee *outbox.EventError
			if !errors.As(err, &ee) || ee.Field != tt.field || ee.Index != 1 || ee.Fix == "" {
				t.Errorf("error %#v should name field %s of event 1 and a fix", err, tt.field)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("message %q does not name %s", err, tt.field)
			}
			if len(client.calls) != 0 {
				t.Errorf("a rejected write reached DynamoDB")
			}
		})
	}
}

func TestWriteAppendsEventsToTheCallersTransaction(t *testing.T) {
	t.Parallel()
	client := &recordingClient{}
	w := newWriter(t, client, outbox.Table{Name: "orders", Layout: outbox.LayoutShared})
	order := types.TransactWriteItem{Put: &types.Put{Item: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "ORDER#1234"}, "SK": &types.AttributeValueMemberS{Value: "ORDER"},
	}}}
	records, err := w.Write(context.Background(), []types.TransactWriteItem{order}, orderPlaced(), orderPlaced())
	if err != nil {
		t.Fatal(err)
	}
	if len(client.calls) != 1 || len(client.calls[0].TransactItems) != 3 {
		t.Fatalf("want one transaction of 3 actions, got %+v", client.calls)
	}
	if client.calls[0].TransactItems[0].Put != order.Put {
		t.Errorf("the caller's item is not first")
	}
	if len(records) != 2 || records[0].EventID == records[1].EventID || records[0].EventID > records[1].EventID {
		t.Errorf("want two distinct, ordered ids, got %v and %v", records[0].EventID, records[1].EventID)
	}
}

func TestWriteRejectsTooManyActions(t *testing.T) {
	t.Parallel()
	client := &recordingClient{}
	w := newWriter(t, client, outbox.Table{Name: "orders", Layout: outbox.LayoutShared})
	events := make([]outbox.Event, 100)
	for i := range events {
		events[i] = orderPlaced()
	}
	_, err := w.Write(context.Background(), []types.TransactWriteItem{{}}, events...)
	var te *outbox.TransactionError
	if !errors.Is(err, outbox.ErrTooManyActions) || !errors.As(err, &te) || te.Actions != 101 {
		t.Fatalf("err = %v, want ErrTooManyActions with 101 actions", err)
	}
	if len(client.calls) != 0 {
		t.Errorf("a rejected write reached DynamoDB")
	}
	if _, err := w.Write(context.Background(), nil, events...); err != nil {
		t.Errorf("100 actions must pass: %v", err)
	}
}

func TestWriteWrapsDynamoDBErrors(t *testing.T) {
	t.Parallel()
	cause := &types.TransactionCanceledException{Message: aws.String("cancelled")}
	w := newWriter(t, &recordingClient{err: cause}, outbox.Table{Name: "orders", Layout: outbox.LayoutShared})
	_, err := w.Write(context.Background(), nil, orderPlaced())
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || !strings.Contains(err.Error(), "orders") {
		t.Errorf("err = %v, want the cancellation wrapped with the table name", err)
	}
}
