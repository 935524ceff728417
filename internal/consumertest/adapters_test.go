package consumertest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

type orderPlaced struct {
	OrderID string  `json:"orderId"`
	Total   float64 `json:"total"`
	Fail    bool    `json:"fail"`
}

// record is an event as the writer stores it; the bodies below are what
// the relay publishes of it (outbox's DetailJSON and EnvelopeJSON).
func record(id, detail string) outbox.Record {
	return outbox.Record{EventID: id, Source: "com.example.orders", DetailType: "OrderPlaced",
		Detail: json.RawMessage(detail), OccurredAt: time.Date(2026, 11, 30, 10, 15, 0, 123e6, time.UTC)}
}

// eventBridgeBody is what a rule's SQS target receives: EventBridge's
// envelope with the published detail.
func eventBridgeBody(r outbox.Record) string {
	env := map[string]any{"version": "0", "id": "6f0c1f5e-0000-4000-8000-000000000000", "detail-type": r.DetailType,
		"source": r.Source, "account": "123456789012", "time": "2026-11-30T10:15:00Z", "region": "us-east-1",
		"resources": []string{}, "detail": json.RawMessage(r.DetailJSON())}
	b, _ := json.Marshal(env)
	return string(b)
}

// snsNotificationBody is what an SQS subscription without raw delivery
// receives: SNS's notification JSON, the SNS message body in Message.
func snsNotificationBody(r outbox.Record) string {
	b, _ := json.Marshal(map[string]any{"Type": "Notification", "MessageId": "0b5e1f5e-0000-4000-8000-000000000001",
		"TopicArn": "arn:aws:sns:us-east-1:123456789012:orders", "Message": string(r.EnvelopeJSON()),
		"Timestamp": "2026-11-30T10:15:01.000Z", "SignatureVersion": "1",
		"MessageAttributes": map[string]any{"source": map[string]string{"Type": "String", "Value": r.Source}}})
	return string(b)
}

func sqsMessage(id, body, queueARN, group string) events.SQSMessage {
	m := events.SQSMessage{MessageId: id, Body: body, EventSourceARN: queueARN, EventSource: "aws:sqs"}
	if group != "" {
		m.Attributes = map[string]string{"MessageGroupId": group}
	}
	return m
}

type ledgerConsumer struct {
	*consumer.Consumer[orderPlaced]
	metrics *bytes.Buffer
	mu      sync.Mutex
	seen    []string
}

// seenWith is the events the handler saw whose id starts with prefix, in
// the order it saw them.
func (lc *ledgerConsumer) seenWith(prefix string) []string {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	var ids []string
	for _, id := range lc.seen {
		if strings.HasPrefix(id, prefix) {
			ids = append(ids, id)
		}
	}
	return ids
}

// newConsumer is a consumer whose handler counts each order in the ledger
// and fails the orders that say so.
func newConsumer(t *testing.T, e *engine, opts ...consumer.ConsumerOption) *ledgerConsumer {
	t.Helper()
	lc := &ledgerConsumer{metrics: &bytes.Buffer{}}
	c, err := consumer.New(e.inbox(), func(_ context.Context, ev consumer.Event[orderPlaced], tx *consumer.Tx) error {
		lc.mu.Lock()
		lc.seen = append(lc.seen, ev.ID)
		lc.mu.Unlock()
		if ev.Data.Fail {
			return errors.New("order refused")
		}
		if ev.Source != "com.example.orders" || ev.DetailType != "OrderPlaced" || ev.Data.OrderID == "" ||
			!ev.OccurredAt.Equal(time.Date(2026, 11, 30, 10, 15, 0, 123e6, time.UTC)) {
			return errors.New("the event was not unwrapped")
		}
		tx.Add(countEffect(ev.ID))
		return nil
	}, append([]consumer.ConsumerOption{consumer.WithMetricsWriter(lc.metrics), consumer.WithFunctionName("billing")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	lc.Consumer = c
	return lc
}

func failedIDs(resp events.SQSEventResponse) []string {
	var ids []string
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

// The same event through each delivery shape is applied once: the shapes
// unwrap to the same id and payload hash, and the later ones are duplicates
// (a batch's deliveries of one event are applied in order, never at once).
func TestAdaptersUnwrapEveryShapeOnce(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	c := newConsumer(t, e)
	r := record("01SHAPES", `{"orderId":"1234","total":42.5}`)
	const queue = "arn:aws:sqs:us-east-1:123456789012:billing"
	resp, err := c.HandleSQS(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		sqsMessage("m-eventbridge", eventBridgeBody(r), queue, ""),
		sqsMessage("m-sns", snsNotificationBody(r), queue, ""),
		sqsMessage("m-sns-raw", string(r.EnvelopeJSON()), queue, ""),
		sqsMessage("m-poison", `{"detail":{"metadata":{}}}`, queue, ""),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := failedIDs(resp); !slices.Equal(got, []string{"m-poison"}) {
		t.Errorf("batch item failures %v, want the poison message only", got)
	}
	err = c.HandleEventBridge(context.Background(), events.EventBridgeEvent{ID: "eb", Source: r.Source, DetailType: r.DetailType, Detail: r.DetailJSON()})
	if err != nil {
		t.Fatal(err)
	}
	if n := e.applied(r.EventID); n != 1 || len(c.seen) != 1 {
		t.Errorf("effect applied %d times, handler ran %d times, want 1 and 1", n, len(c.seen))
	}
	lines := strings.Split(strings.TrimSpace(c.metrics.String()), "\n")
	var batch map[string]any
	if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &batch) != nil {
		t.Fatalf("metrics, one line per invocation:\n%s", c.metrics.String())
	}
	if batch[consumer.EventsApplied] != 1.0 || batch[consumer.DuplicatesSkipped] != 2.0 || batch[consumer.EventsFailed] != 1.0 {
		t.Errorf("the SQS invocation's metrics: %s", lines[0])
	}
}

// On a FIFO queue a failure stops its message group for the rest of the
// batch, and only that group; on redelivery the group goes on in order.
func TestFIFOFailureStopsOnlyItsGroup(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	c := newConsumer(t, e)
	const queue = "arn:aws:sqs:us-east-1:123456789012:billing.fifo"
	msg := func(id, group, detail string) events.SQSMessage {
		return sqsMessage("m-"+id, string(record(id, detail).EnvelopeJSON()), queue, group)
	}
	batch := []events.SQSMessage{
		msg("01A1", "customer-a", `{"orderId":"a1"}`),
		msg("01B1", "customer-b", `{"orderId":"b1"}`),
		msg("01A2", "customer-a", `{"orderId":"a2","fail":true}`),
		msg("01B2", "customer-b", `{"orderId":"b2"}`),
		msg("01A3", "customer-a", `{"orderId":"a3"}`),
	}
	resp, err := c.HandleSQS(context.Background(), events.SQSEvent{Records: batch})
	if err != nil {
		t.Fatal(err)
	}
	if got := failedIDs(resp); !slices.Equal(got, []string{"m-01A2", "m-01A3"}) {
		t.Errorf("batch item failures %v, want m-01A2 and the later m-01A3", got)
	}
	if a, b := c.seenWith("01A"), c.seenWith("01B"); !slices.Equal(a, []string{"01A1", "01A2"}) || !slices.Equal(b, []string{"01B1", "01B2"}) {
		t.Errorf("the handler saw %v and %v: a message after its group's failure ran, or out of order", a, b)
	}
	for id, want := range map[string]int{"01A1": 1, "01B1": 1, "01A2": 0, "01B2": 1, "01A3": 0} {
		if n := e.applied(id); n != want {
			t.Errorf("%s applied %d times, want %d", id, n, want)
		}
	}
}
