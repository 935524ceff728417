package consumer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

type order struct {
	OrderID string  `json:"orderId"`
	Total   float64 `json:"total"`
}

const (
	detailJSON   = `{"metadata":{"eventId":"01M8NZ6R8V7V3B9Q2M4K8D1X6R","occurredAt":"2026-11-30T10:15:00.123Z"},"data":{"orderId":"1234","total":42.5}}`
	envelopeJSON = `{"version":"0","id":"01M8NZ6R8V7V3B9Q2M4K8D1X6R","detail-type":"OrderPlaced","source":"com.example.orders","time":"2026-11-30T10:15:00Z","detail":` + detailJSON + `}`
)

func eventBridgeBody() string {
	return `{"version":"0","id":"6f0c1f5e-aaaa","detail-type":"OrderPlaced","source":"com.example.orders","account":"123456789012","time":"2026-11-30T10:15:00Z","region":"eu-west-1","resources":[],"detail":` + detailJSON + `}`
}

// cloudEventJSON is the same event with the cloudevents envelope.
const cloudEventJSON = `{"specversion":"1.0","id":"01M8NZ6R8V7V3B9Q2M4K8D1X6R","source":"com.example.orders","type":"OrderPlaced","subject":"ORDER#1234",` +
	`"time":"2026-11-30T10:15:00.123Z","datacontenttype":"application/json","data":{"orderId":"1234","total":42.5}}`

func snsNotificationBody(message string) string {
	msg, _ := json.Marshal(message)
	return `{"Type":"Notification","MessageId":"m-1","TopicArn":"arn:aws:sns:eu-west-1:123456789012:orders","Message":` + string(msg) +
		`,"Timestamp":"2026-11-30T10:15:01.000Z","MessageAttributes":{"source":{"Type":"String","Value":"com.example.orders"}}}`
}

func TestDecodeBodyShapes(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"eventbridge": eventBridgeBody(), "sns-notification": snsNotificationBody(envelopeJSON), "sns-raw": envelopeJSON,
		"cloudevents-raw": cloudEventJSON, "cloudevents-sns-notification": snsNotificationBody(cloudEventJSON),
		"cloudevents-eventbridge": strings.Replace(eventBridgeBody(), detailJSON, cloudEventJSON, 1),
	} {
		e, err := decodeBody[order](body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := Event[order]{ID: "01M8NZ6R8V7V3B9Q2M4K8D1X6R", Source: "com.example.orders", DetailType: "OrderPlaced",
			OccurredAt: time.Date(2026, 11, 30, 10, 15, 0, 123e6, time.UTC), Data: order{"1234", 42.5}}
		if e.ID != want.ID || e.Source != want.Source || e.DetailType != want.DetailType || !e.OccurredAt.Equal(want.OccurredAt) || e.Data != want.Data {
			t.Errorf("%s: decoded %+v, want %+v", name, e, want)
		}
		if h, _ := PayloadHash([]byte(`{"total":42.5,"orderId":"1234"}`)); e.PayloadHash != h {
			t.Errorf("%s: payload hash %s, want %s", name, e.PayloadHash, h)
		}
	}
	for name, body := range map[string]string{
		"not json": `nope`, "no detail": `{"source":"x"}`, "no event id": `{"detail":{"metadata":{},"data":{}}}`,
		"no data":                 `{"detail":{"metadata":{"eventId":"a","occurredAt":"2026-11-30T10:15:00.123Z"}}}`,
		"bad time":                `{"detail":{"metadata":{"eventId":"a","occurredAt":"yesterday"},"data":{}}}`,
		"data mismatch":           `{"detail":{"metadata":{"eventId":"a","occurredAt":"2026-11-30T10:15:00.123Z"},"data":{"total":"x"}}}`,
		"sns message":             `{"Type":"Notification","TopicArn":"arn:aws:sns:eu-west-1:1:t","Message":"not json"}`,
		"cloudevent without id":   `{"specversion":"1.0","source":"s","type":"t","time":"2026-11-30T10:15:00Z","data":{}}`,
		"cloudevent bad time":     `{"specversion":"1.0","id":"a","source":"s","type":"t","time":"today","data":{}}`,
		"cloudevent without data": `{"specversion":"1.0","id":"a","source":"s","type":"t","time":"2026-11-30T10:15:00Z"}`,
	} {
		if _, err := decodeBody[order](body); !errors.Is(err, ErrMalformedEvent) {
			t.Errorf("%s: error %v, want ErrMalformedEvent", name, err)
		}
	}
}

// withoutInbox is a Consumer of handle whose process runs the handler, as
// on an event's first delivery, without reaching its inbox's client.
func withoutInbox(t *testing.T, handle Handler[map[string]any], opts ...ConsumerOption) *Consumer[map[string]any] {
	t.Helper()
	return withoutInboxLogging(t, io.Discard, handle, opts...)
}

// withoutInboxLogging is withoutInbox, its log written to log.
func withoutInboxLogging(t *testing.T, log io.Writer, handle Handler[map[string]any], opts ...ConsumerOption) *Consumer[map[string]any] {
	t.Helper()
	inbox, err := NewInbox(nopClient{}, "inbox", WithLogger(NewLogger(log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(inbox, handle, opts...)
	if err != nil {
		t.Fatal(err)
	}
	c.process = func(ctx context.Context, _, _ string, fn func(context.Context, *Tx) error) (Outcome, error) {
		return Applied, fn(ctx, &Tx{})
	}
	return c
}

// fakeConsumer is a Consumer whose process runs the handler unless the
// event's data says fail.
func fakeConsumer(t *testing.T, metrics io.Writer) (*Consumer[map[string]any], *[]string) {
	t.Helper()
	var applied []string
	var mu sync.Mutex
	c := withoutInbox(t, func(_ context.Context, e Event[map[string]any], _ *Tx) error {
		if e.Data["fail"] == true {
			return errors.New("handler failed")
		}
		mu.Lock()
		defer mu.Unlock()
		applied = append(applied, e.ID)
		return nil
	}, WithMetricsWriter(metrics), WithFunctionName("billing"))
	return c, &applied
}

func message(id, group string, fail bool) events.SQSMessage {
	detail := fmt.Sprintf(`{"metadata":{"eventId":%q,"occurredAt":"2026-11-30T10:15:00.123Z"},"data":{"fail":%t}}`, id, fail)
	m := events.SQSMessage{MessageId: "msg-" + id, Body: `{"source":"s","detail-type":"t","detail":` + detail + `}`,
		EventSourceARN: "arn:aws:sqs:eu-west-1:123456789012:billing"}
	if group != "" {
		m.EventSourceARN += ".fifo"
		m.Attributes = map[string]string{"MessageGroupId": group}
	}
	return m
}

func failures(resp events.SQSEventResponse) []string {
	var ids []string
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

func TestHandleSQSReportsFailedMessages(t *testing.T) {
	t.Parallel()
	c, applied := fakeConsumer(t, io.Discard)
	bad := message("b", "", false)
	bad.Body = "{"
	resp, err := c.HandleSQS(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		message("a", "", false), bad, message("c", "", true), message("d", "", false),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := failures(resp), []string{"msg-b", "msg-c"}; !slices.Equal(got, want) {
		t.Errorf("failures %v, want %v", got, want)
	}
	slices.Sort(*applied) // a standard queue's messages are applied concurrently
	if want := []string{"a", "d"}; !slices.Equal(*applied, want) {
		t.Errorf("applied %v, want %v", *applied, want)
	}
}

// A failure in a FIFO batch stops its message group only.
func TestHandleSQSFIFOStopsTheFailedGroup(t *testing.T) {
	t.Parallel()
	c, applied := fakeConsumer(t, io.Discard)
	resp, err := c.HandleSQS(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		message("g1-1", "g1", false), message("g2-1", "g2", false), message("g1-2", "g1", true),
		message("g2-2", "g2", false), message("g1-3", "g1", false), message("g3-1", "g3", false), message("g1-4", "g1", false),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := failures(resp), []string{"msg-g1-2", "msg-g1-3", "msg-g1-4"}; !slices.Equal(got, want) {
		t.Errorf("failures %v, want %v", got, want)
	}
	slices.Sort(*applied) // the groups are applied concurrently
	if want := []string{"g1-1", "g2-1", "g2-2", "g3-1"}; !slices.Equal(*applied, want) {
		t.Errorf("applied %v, want %v", *applied, want)
	}
	// On a standard queue a MessageGroupId (fair queues) stops nothing.
	c2, applied2 := fakeConsumer(t, io.Discard)
	std := []events.SQSMessage{message("s-1", "", true), message("s-2", "", false)}
	for i := range std {
		std[i].Attributes = map[string]string{"MessageGroupId": "tenant"}
	}
	resp, _ = c2.HandleSQS(context.Background(), events.SQSEvent{Records: std})
	if got := failures(resp); !slices.Equal(got, []string{"msg-s-1"}) || !slices.Equal(*applied2, []string{"s-2"}) {
		t.Errorf("standard queue: failures %v, applied %v", got, *applied2)
	}
}

// A message with a MessageGroupId and no eventSourceARN (a poller other
// than Lambda's event source mapping) is applied as a FIFO queue's: a
// failure stops its group, whose later messages are not applied out of
// order, and the batch logs a warning that names the fix.
func TestHandleSQSWithoutSourceARNKeepsGroupsInOrder(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	var applied []string
	c := withoutInboxLogging(t, &log, func(_ context.Context, e Event[map[string]any], _ *Tx) error {
		if e.Data["fail"] == true {
			return errors.New("handler failed")
		}
		applied = append(applied, e.ID)
		return nil
	}, WithConcurrency(1))
	batch := []events.SQSMessage{message("g1-1", "g1", true), message("g1-2", "g1", false), message("g2-1", "g2", false)}
	for i := range batch {
		batch[i].EventSourceARN = ""
	}
	resp, err := c.HandleSQS(context.Background(), events.SQSEvent{Records: batch})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := failures(resp), []string{"msg-g1-1", "msg-g1-2"}; !slices.Equal(got, want) || !slices.Equal(applied, []string{"g2-1"}) {
		t.Errorf("failures %v (want %v), applied %v (want g2-1 only)", got, want, applied)
	}
	var line map[string]any
	if err := json.Unmarshal(log.Bytes()[:bytes.IndexByte(log.Bytes(), '\n')+1], &line); err != nil {
		t.Fatalf("log %q: %v", log.String(), err)
	}
	if line["level"] != "WARN" || line["msg"] != "message group without event source ARN" || line["messages"] != 3.0 || !strings.Contains(fmt.Sprint(line["fix"]), "eventSourceARN") {
		t.Errorf("first log line %v, want the warning with the count and the fix", line)
	}
}

func TestHandleEventBridge(t *testing.T) {
	t.Parallel()
	var metrics bytes.Buffer
	c, applied := fakeConsumer(t, &metrics)
	ev := events.EventBridgeEvent{ID: "eb-1", Source: "com.example.orders", DetailType: "OrderPlaced", Detail: json.RawMessage(detailJSON)}
	if err := c.HandleEventBridge(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	ev.Detail = json.RawMessage(`{"metadata":{"eventId":"x","occurredAt":"2026-11-30T10:15:00.123Z"},"data":{"fail":true}}`)
	if err := c.HandleEventBridge(context.Background(), ev); err == nil || !strings.Contains(err.Error(), "handler failed") {
		t.Errorf("a failing handler returned %v", err)
	}
	if !slices.Equal(*applied, []string{"01M8NZ6R8V7V3B9Q2M4K8D1X6R"}) {
		t.Errorf("applied %v", *applied)
	}
	lines := strings.Split(strings.TrimSpace(metrics.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d metric lines, want one per invocation:\n%s", len(lines), metrics.String())
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &doc); err != nil {
		t.Fatal(err)
	}
	if doc[EventsFailed] != 1.0 || doc[DimensionFunctionName] != "billing" {
		t.Errorf("second invocation's metrics: %s", lines[1])
	}
}

// nopClient is a Client the adapter tests never reach.
type nopClient struct{ Client }

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("stdout closed") }

// A metrics write that fails does not fail the batch, whose events were
// applied.
func TestMetricsFailureDoesNotFailTheBatch(t *testing.T) {
	t.Parallel()
	c, applied := fakeConsumer(t, failingWriter{})
	resp, err := c.HandleSQS(context.Background(), events.SQSEvent{Records: []events.SQSMessage{message("a", "", false)}})
	if err != nil || len(resp.BatchItemFailures) != 0 || !slices.Equal(*applied, []string{"a"}) {
		t.Errorf("HandleSQS with a failing metrics writer: %+v, %v, applied %v", resp, err, *applied)
	}
}
