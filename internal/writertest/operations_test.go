package writertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

var fixedNow = time.Date(2026, 11, 30, 10, 15, 0, 123_000_000, time.UTC)

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

// engine is an outbox table with its pending index in the local AWS stack's
// DynamoDB.
type engine struct {
	t      *testing.T
	client *dynamodb.Client
	table  outbox.Table
	writer *outbox.Writer
}

func newEngine(t *testing.T) *engine {
	t.Helper()
	_, client := startDynamoDB(t, func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} })
	table := outbox.Table{Name: "orders-outbox", PendingShards: 1}.WithDefaults()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createTable(ctx, t, client, table.CreateTableInput())
	return &engine{t: t, client: client, table: table, writer: newWriter(t, client, table)}
}

// startDynamoDB starts a local AWS stack that serves only DynamoDB and
// returns it with a client of it.
func startDynamoDB(t *testing.T, opts ...func(*dynamodb.Options)) (*localaws.Stack, *dynamodb.Client) {
	t.Helper()
	stack := localawstest.StartDynamoDB(t)
	return stack, dynamodb.NewFromConfig(localawstest.Config(stack), opts...)
}

// createTable creates a table and waits until it is active.
func createTable(ctx context.Context, t *testing.T, client *dynamodb.Client, in *dynamodb.CreateTableInput) {
	t.Helper()
	if _, err := client.CreateTable(ctx, in); err != nil {
		t.Fatalf("creating table %s: %v", *in.TableName, err)
	}
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 10*time.Millisecond, 100*time.Millisecond
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName}, time.Minute); err != nil {
		t.Fatal(err)
	}
}

// pending writes a pending event through the Writer and returns its record.
func (e *engine) pending() outbox.Record {
	e.t.Helper()
	records, err := e.writer.Write(context.Background(), nil, orderPlaced())
	if err != nil {
		e.t.Fatal(err)
	}
	return records[0]
}

func (e *engine) put(item map[string]types.AttributeValue) {
	e.t.Helper()
	if _, err := e.client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.table.Name), Item: item}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *engine) get(r outbox.Record) map[string]types.AttributeValue {
	e.t.Helper()
	out, err := e.client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(e.table.Name), Key: e.table.Key(r), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out.Item
}

// inPendingIndex reports whether the pending index lists r.
func (e *engine) inPendingIndex(r outbox.Record) bool {
	e.t.Helper()
	out, err := e.client.Query(context.Background(), e.table.PendingQuery(0, fixedNow.Add(time.Hour)))
	if err != nil {
		e.t.Fatal(err)
	}
	for _, item := range out.Items {
		if reflect.DeepEqual(item[e.table.SortKey], e.table.Key(r)[e.table.SortKey]) {
			return true
		}
	}
	return false
}

// itemState is how a test case's item starts.
type itemState struct {
	name string
	// edit changes a pending item; nil leaves it pending. missing means no
	// item at all.
	edit    func(map[string]types.AttributeValue)
	missing bool
}

func withStatus(s string) func(map[string]types.AttributeValue) {
	return func(item map[string]types.AttributeValue) {
		item[outbox.AttrStatus] = &types.AttributeValueMemberS{Value: s}
	}
}

var itemStates = []itemState{
	{name: "pending"},
	{name: "no status", edit: func(item map[string]types.AttributeValue) { delete(item, outbox.AttrStatus) }},
	{name: "invalid status", edit: withStatus("SENT")},
	{name: "status not a string", edit: func(item map[string]types.AttributeValue) {
		item[outbox.AttrStatus] = &types.AttributeValueMemberN{Value: "1"}
	}},
	{name: "published", edit: func(item map[string]types.AttributeValue) {
		withStatus(string(outbox.StatusPublished))(item)
		delete(item, outbox.AttrPendingShard)
		delete(item, outbox.AttrPendingSince)
	}},
	{name: "failed", edit: func(item map[string]types.AttributeValue) {
		withStatus(string(outbox.StatusFailed))(item)
		item[outbox.AttrAttempts] = &types.AttributeValueMemberN{Value: "1"}
		delete(item, outbox.AttrPendingShard)
		delete(item, outbox.AttrPendingSince)
	}},
	{name: "skipped", edit: func(item map[string]types.AttributeValue) {
		withStatus(string(outbox.StatusSkipped))(item)
		delete(item, outbox.AttrPendingShard)
		delete(item, outbox.AttrPendingSince)
	}},
	{name: "missing", missing: true},
}

// setUp writes the case's item and returns its record.
func (e *engine) setUp(s itemState) outbox.Record {
	e.t.Helper()
	r := e.pending()
	switch {
	case s.missing:
		if _, err := e.client.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{
			TableName: aws.String(e.table.Name), Key: e.table.Key(r),
		}); err != nil {
			e.t.Fatal(err)
		}
	case s.edit != nil:
		item := e.get(r)
		s.edit(item)
		e.put(item)
	}
	return r
}

// TestMarkFailedInDynamoDB runs MarkFailed's update in a DynamoDB engine:
// every item not yet published, failed or skipped, malformed ones
// included, becomes FAILED and leaves the pending index; the others fail
// the condition and stay as they are (an operator's skip is never undone by
// a late delivery of the item's stream record).
func TestMarkFailedInDynamoDB(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	marked := map[string]bool{"pending": true, "no status": true, "invalid status": true, "status not a string": true}
	for _, s := range itemStates {
		t.Run(s.name, func(t *testing.T) {
			r := e.setUp(s)
			before := e.get(r)
			_, err := e.client.UpdateItem(context.Background(), e.table.MarkFailed(r, "detail is not a JSON object", fixedNow))
			after := e.get(r)
			if !marked[s.name] {
				checkUnchanged(t, err, before, after)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{
				outbox.AttrStatus:    string(outbox.StatusFailed),
				outbox.AttrLastError: "detail is not a JSON object",
				outbox.AttrFailedAt:  fixedNow.Format(outbox.TimeFormat),
			}
			for name, v := range want {
				if got, _ := after[name].(*types.AttributeValueMemberS); got == nil || got.Value != v {
					t.Errorf("%s = %v, want %q", name, after[name], v)
				}
			}
			if n, _ := after[outbox.AttrAttempts].(*types.AttributeValueMemberN); n == nil || n.Value != "1" {
				t.Errorf("attempts = %v, want 1", after[outbox.AttrAttempts])
			}
			for _, name := range []string{outbox.AttrPendingShard, outbox.AttrPendingSince, e.table.TTLAttribute} {
				if _, ok := after[name]; ok {
					t.Errorf("%s kept: %v", name, after[name])
				}
			}
			if e.inPendingIndex(r) {
				t.Error("item still in the pending index")
			}
		})
	}
}

// checkUnchanged checks that an update failed its condition and left the
// item as it was.
func checkUnchanged(t *testing.T, err error, before, after map[string]types.AttributeValue) {
	t.Helper()
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		t.Fatalf("err = %v, want a failed condition", err)
	}
	if !reflect.DeepEqual(after, before) {
		t.Errorf("item changed:\n%v\nwas\n%v", after, before)
	}
}

// TestMarkPublishedInDynamoDB runs MarkPublished's update in a DynamoDB
// engine: only a pending item becomes PUBLISHED; every other fails the
// condition and stays as it is.
func TestMarkPublishedInDynamoDB(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	for _, s := range itemStates {
		if s.name == "status not a string" {
			// DynamoDB evaluates "#status = :pending" to false on a number;
			// the engine (minidyn) rejects the comparison instead.
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			r := e.setUp(s)
			before := e.get(r)
			_, err := e.client.UpdateItem(context.Background(), e.table.MarkPublished(r, fixedNow, time.Hour))
			after := e.get(r)
			if s.name != "pending" {
				checkUnchanged(t, err, before, after)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s, _ := after[outbox.AttrStatus].(*types.AttributeValueMemberS); s == nil || s.Value != string(outbox.StatusPublished) {
				t.Errorf("status = %v", after[outbox.AttrStatus])
			}
			if p, _ := after[outbox.AttrPublishedAt].(*types.AttributeValueMemberS); p == nil || p.Value != fixedNow.Format(outbox.TimeFormat) {
				t.Errorf("publishedAt = %v", after[outbox.AttrPublishedAt])
			}
			wantTTL := fmt.Sprint(fixedNow.Add(time.Hour).Unix())
			if n, _ := after[e.table.TTLAttribute].(*types.AttributeValueMemberN); n == nil || n.Value != wantTTL {
				t.Errorf("%s = %v, want %s", e.table.TTLAttribute, after[e.table.TTLAttribute], wantTTL)
			}
			for _, name := range []string{outbox.AttrPendingShard, outbox.AttrPendingSince} {
				if _, ok := after[name]; ok {
					t.Errorf("%s kept", name)
				}
			}
			if e.inPendingIndex(r) {
				t.Error("item still in the pending index")
			}
		})
	}
}

func TestRequeueInDynamoDB(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	ctx := context.Background()
	r := e.pending()
	if _, err := e.client.UpdateItem(ctx, e.table.MarkFailed(r, "rejected by the target", fixedNow)); err != nil {
		t.Fatal(err)
	}
	if e.inPendingIndex(r) {
		t.Fatal("a FAILED item is still in the pending index")
	}
	if _, err := e.client.UpdateItem(ctx, e.table.Requeue(outbox.Record{PartitionKey: r.PartitionKey, SortKey: r.SortKey, EventID: r.EventID, OccurredAt: r.OccurredAt})); err != nil {
		t.Fatal(err)
	}
	got, err := e.table.ParseItem(e.get(r))
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != outbox.StatusPending || got.PendingShard != r.PendingShard || got.PendingSince != r.PendingSince ||
		got.Attempts != 1 || got.LastError != "rejected by the target" {
		t.Errorf("requeued item = %+v, want pending with the written index keys and its failure history", got)
	}
	if !e.inPendingIndex(r) {
		t.Error("a requeued item is not in the pending index")
	}
	// Only FAILED items are requeued: a pending or published one is left alone.
	_, err = e.client.UpdateItem(ctx, e.table.Requeue(r))
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		t.Errorf("requeue of a pending item: err = %v, want ConditionalCheckFailedException", err)
	}
}
