package outbox_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestCloudEvent: a record's CloudEvent carries its id, source, type,
// aggregate, time and data, and an ordered record's sequence as a string
// that orders as the numbers do.
func TestCloudEvent(t *testing.T) {
	t.Parallel()
	r := outbox.Record{PartitionKey: "ORDER#1", EventID: "01JDQ8Z7K5V6W3X2Y1Z0ABCDEF", Source: "com.example.orders", DetailType: "OrderPlaced",
		Detail: json.RawMessage(`{"total":42}`), OccurredAt: time.Date(2026, 12, 2, 10, 0, 0, 5e6, time.UTC)}
	var got map[string]any
	if err := json.Unmarshal(r.CloudEventJSON(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"specversion": "1.0", "id": r.EventID, "source": r.Source, "type": r.DetailType, "subject": "ORDER#1",
		"time": "2026-12-02T10:00:00.005Z", "datacontenttype": "application/json", "data": map[string]any{"total": 42.0}}
	if len(got) != len(want) {
		t.Errorf("CloudEvent %v, want %v", got, want)
	}
	for k, v := range want {
		if k != "data" && got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	r.OrderingKey, r.Sequence = "customer-7", 9
	ce := r.CloudEvent()
	if ce.Subject != "customer-7" || ce.PartitionKey != "customer-7" || ce.Sequence != "0000000000000000009" {
		t.Errorf("ordered CloudEvent %+v", ce)
	}
	if outbox.CloudEventSequence(9) >= outbox.CloudEventSequence(10) {
		t.Error("sequence 9 does not order before 10 as a string")
	}
}

// TestPublishedSizeCoversEveryFormat: the size the writer checks is at
// least the size of the entry and of the message in every format, and a
// message's size counts its attributes, as SNS and SQS do.
func TestPublishedSizeCoversEveryFormat(t *testing.T) {
	t.Parallel()
	r := outbox.Record{PartitionKey: strings.Repeat("P", 900), EventID: "01JDQ8Z7K5V6W3X2Y1Z0ABCDEF", Source: "s", DetailType: "d",
		Detail: json.RawMessage(`{}`), OccurredAt: time.Unix(0, 0)}
	for _, f := range outbox.Formats {
		if n := max(r.EventBridgeEntrySizeIn(f), r.EventBridgeEventSizeIn(f), r.MessageSizeIn(f)); r.PublishedSize() < n {
			t.Errorf("PublishedSize %d < %d in format %s", r.PublishedSize(), n, f)
		}
	}
	traced := r
	traced.TraceParent, traced.TraceState = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=blue"
	// source, detail-type, traceparent and tracestate, each with its
	// data type "String".
	attrs := len("source"+"String"+"s") + len("detail-type"+"String"+"d") +
		len("traceparent"+"String") + len(traced.TraceParent) + len("tracestate"+"String"+"vendor=blue")
	if got, want := traced.MessageSizeIn(outbox.FormatOutbox), len(traced.MessageIn(outbox.FormatOutbox))+attrs; got != want {
		t.Errorf("MessageSizeIn = %d, want the body and the attributes, %d", got, want)
	}
	if r.PublishedSize() <= len(r.EnvelopeJSON()) {
		t.Errorf("a long aggregate makes the CloudEvent the largest, but PublishedSize is %d", r.PublishedSize())
	}
}

// TestEventBridgeEventSize: the event EventBridge delivers to a rule's
// target (an SQS queue) is larger than the PutEvents entry and the SNS
// message; its size, as counted, is at least that of the event as
// EventBridge writes it, in every region, so that an event the writer
// publishes whole fits a queue of MaxEntryBytes.
func TestEventBridgeEventSize(t *testing.T) {
	t.Parallel()
	r := outbox.Record{PartitionKey: "ORDER#1", EventID: "01JDQ8Z7K5V6W3X2Y1Z0ABCDEF", Source: "com.example.orders", DetailType: "OrderPlaced",
		Detail: json.RawMessage(`{"total":42}`), OccurredAt: time.Date(2026, 12, 2, 10, 0, 0, 5e6, time.UTC)}
	for _, region := range []string{"us-east-1", "ap-southeast-5", "us-isof-south-1"} {
		for _, f := range outbox.Formats {
			delivered, err := json.Marshal(map[string]any{
				"version": "0", "id": "6a7e8feb-b491-4cf7-a9f1-bf3703467718", "detail-type": r.DetailType, "source": r.Source,
				"account": "123456789012", "time": "2026-12-02T10:00:00Z", "region": region, "resources": []string{}, "detail": json.RawMessage(r.DetailIn(f)),
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.EventBridgeEventSizeIn(f); got < len(delivered) || got > len(delivered)+8 {
				t.Errorf("%s, %s: EventBridgeEventSizeIn = %d, the delivered event is %d bytes", region, f, got, len(delivered))
			}
			if r.EventBridgeEventSizeIn(f) <= max(r.EventBridgeEntrySizeIn(f), len(r.MessageIn(f))) || r.PublishedSize() < r.EventBridgeEventSizeIn(f) {
				t.Errorf("%s: the delivered event (%d bytes) is not the largest form, or PublishedSize (%d) misses it", f, r.EventBridgeEventSizeIn(f), r.PublishedSize())
			}
		}
	}
}
