package outbox

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// PublishedDetail is the detail of every published event: the stored object
// under data, and what consumers need to deduplicate and order under metadata.
type PublishedDetail struct {
	Metadata Metadata `json:"metadata"`
	// Data is the stored object; absent for a claim-checked event, whose
	// metadata.dataRef says where it is.
	Data json.RawMessage `json:"data,omitempty"`
}

// Metadata travels with every published event.
type Metadata struct {
	// EventID is the ULID of the event: the idempotency key.
	EventID string `json:"eventId"`
	// OccurredAt is when the event happened, in TimeFormat.
	OccurredAt string `json:"occurredAt"`
	// OrderingKey and Sequence are set for an ordered event only: its
	// aggregate and its number among the aggregate's events, from 1.
	OrderingKey string `json:"orderingKey,omitempty"`
	Sequence    int64  `json:"sequence,omitempty"`
	// TraceParent and TraceState are the W3C trace context of the span
	// that published the event (the writer's when the relay records no
	// spans); empty when the event was written without one.
	TraceParent string `json:"traceparent,omitempty"`
	TraceState  string `json:"tracestate,omitempty"`
	// DataRef is where a claim-checked event's data is, instead of data.
	DataRef *PublishedDataRef `json:"dataRef,omitempty"`
}

// PublishedDataRef is the published reference to a claim-checked event's
// data: its S3 URI, SHA-256 (hex) and size.
type PublishedDataRef struct {
	URI    string `json:"uri"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// published returns the published form of d; nil for nil.
func (d *DataRef) published() *PublishedDataRef {
	if d == nil {
		return nil
	}
	return &PublishedDataRef{URI: d.URI(), SHA256: d.SHA256, Size: d.Size}
}

// Envelope is the SNS message body: the fields of EventBridge's event
// envelope that the outbox knows, so that consumers of either target can
// share code.
type Envelope struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Time       string          `json:"time"`
	Detail     PublishedDetail `json:"detail"`
}

// eventBridgeTimeBytes is what EventBridge counts for an entry's Time field.
const eventBridgeTimeBytes = 14

// PublishedDetail returns the detail to publish for r.
func (r Record) PublishedDetail() PublishedDetail {
	return PublishedDetail{
		Metadata: Metadata{
			EventID: r.EventID, OccurredAt: r.OccurredAt.UTC().Format(TimeFormat),
			OrderingKey: r.OrderingKey, Sequence: r.Sequence,
			TraceParent: r.TraceParent, TraceState: r.TraceState, DataRef: r.DataRef.published(),
		},
		Data: r.Detail,
	}
}

// DetailJSON returns the published detail as JSON.
func (r Record) DetailJSON() []byte {
	b, err := json.Marshal(r.PublishedDetail())
	if err != nil {
		// Data is a validated JSON object and the rest are strings.
		panic("outbox: marshalling published detail: " + err.Error())
	}
	return b
}

// EnvelopeJSON returns the SNS message body of r.
func (r Record) EnvelopeJSON() []byte {
	b, err := json.Marshal(Envelope{
		Version:    "0",
		ID:         r.EventID,
		DetailType: r.DetailType,
		Source:     r.Source,
		Time:       r.OccurredAt.UTC().Format(time.RFC3339),
		Detail:     r.PublishedDetail(),
	})
	if err != nil {
		panic("outbox: marshalling envelope: " + err.Error())
	}
	return b
}

// EventBridgeEntrySize is the size EventBridge counts for r's PutEvents entry
// (Time, Source, DetailType and Detail; the relay sets no resources).
func (r Record) EventBridgeEntrySize() int { return r.EventBridgeEntrySizeIn(FormatOutbox) }

// PublishedSize is the largest size of r on any target in any format: the
// event EventBridge delivers to a rule's target (larger than its PutEvents
// entry, whose fields it holds) and its SNS or SQS message (the body and
// the message attributes), each in every envelope format. An event of at
// most MaxEntryBytes fits every kind; a Writer WithTarget checks the size
// on its target only.
func (r Record) PublishedSize() int { return max(r.eventBridgeSize(), r.messageSizeAny()) }

// eventBridgeSize is the largest size of r on EventBridge in any format:
// its PutEvents entry and the event delivered to a rule's target (which
// a subscription queue must hold).
func (r Record) eventBridgeSize() int {
	size := 0
	for _, f := range Formats {
		detail := len(r.DetailIn(f))
		size = max(size, r.eventBridgeEntrySize(detail), r.eventBridgeEventSize(detail))
	}
	return size
}

// messageSizeAny is the largest size of r's SNS or SQS message in any
// format.
func (r Record) messageSizeAny() int {
	size := 0
	for _, f := range Formats {
		body := r.DetailIn(f) // a CloudEvent is the detail and the message body alike
		if f != FormatCloudEvents {
			body = r.MessageIn(f)
		}
		size = max(size, r.messageSize(len(body)))
	}
	return size
}

// The string message attributes of every SNS and SQS message the relay
// publishes: the event's source and detail type, for subscription filter
// policies, and the W3C trace context of an event written with one, as
// OpenTelemetry's messaging instrumentations read it.
const (
	MessageAttrSource      = "source"
	MessageAttrDetailType  = "detail-type"
	MessageAttrTraceParent = "traceparent"
	MessageAttrTraceState  = "tracestate"
)

// messageAttrDataType is the data type of every message attribute.
const messageAttrDataType = "String"

// MessageAttributes are the string message attributes of r's SNS or SQS
// message, by name. The relay publishes an event's trace context as that
// of its own span, a W3C traceparent of the same length.
func (r Record) MessageAttributes() map[string]string {
	attrs := map[string]string{MessageAttrSource: r.Source, MessageAttrDetailType: r.DetailType}
	for name, v := range map[string]string{MessageAttrTraceParent: r.TraceParent, MessageAttrTraceState: r.TraceState} {
		if v != "" {
			attrs[name] = v
		}
	}
	return attrs
}

// MessageSizeIn is what SNS and SQS count for r's message in format f: the
// body and, for each message attribute, its name, data type and value.
func (r Record) MessageSizeIn(f Format) int { return r.messageSize(len(r.MessageIn(f))) }

// messageSize is MessageSizeIn for a body of the given length.
func (r Record) messageSize(body int) int {
	n := body
	for name, v := range r.MessageAttributes() {
		n += len(name) + len(messageAttrDataType) + len(v)
	}
	return n
}

// eventBridgeEvent is the event EventBridge delivers to a rule's targets:
// the entry's fields in its event envelope.
type eventBridgeEvent struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

// eventBridgeRegionBytes is room for the longest region name.
const eventBridgeRegionBytes = 16

// EventBridgeEventSizeIn is the size of the event EventBridge delivers to
// a rule's target for r's entry in format f: the detail in EventBridge's
// envelope, with EventBridge's own id (a UUID), the account, the region
// (counted at the longest name) and no resources (the relay sets none).
// A subscription queue refuses an event over its MaximumMessageSize, and
// EventBridge drops it once its retries are spent.
func (r Record) EventBridgeEventSizeIn(f Format) int {
	return r.eventBridgeEventSize(len(r.DetailIn(f)))
}

// eventBridgeEventSize is EventBridgeEventSizeIn for a detail of the given
// length.
func (r Record) eventBridgeEventSize(detail int) int {
	b, err := json.Marshal(eventBridgeEvent{Version: "0", ID: strings.Repeat("0", 36), DetailType: r.DetailType, Source: r.Source,
		Account: strings.Repeat("0", 12), Time: r.OccurredAt.UTC().Format(time.RFC3339), Region: strings.Repeat("x", eventBridgeRegionBytes),
		Resources: []string{}, Detail: json.RawMessage("0")})
	if err != nil {
		panic("outbox: marshalling an EventBridge event: " + err.Error())
	}
	return len(b) - len("0") + detail
}

// Envelope formats: how a target carries an event, the pipeline's
// target.envelope.
type Format string

const (
	// FormatOutbox is the outbox's own shape, the default: on EventBridge
	// the detail is the PublishedDetail ({"metadata", "data"}); on SNS and
	// SQS the message body is the Envelope, EventBridge's event envelope
	// around that detail.
	FormatOutbox Format = "outbox"
	// FormatCloudEvents is a CloudEvents 1.0 event in structured JSON mode:
	// the EventBridge detail and the SNS or SQS message body alike.
	FormatCloudEvents Format = "cloudevents"
)

// Formats are the envelope formats, the default first.
var Formats = []Format{FormatOutbox, FormatCloudEvents}

// CloudEvent is an event in the CloudEvents 1.0 JSON format
// (https://github.com/cloudevents/spec/blob/v1.0.2/cloudevents/formats/json-format.md).
// Its id is the event id, source and type the event's source and detail
// type, subject its aggregate (the ordering key of an ordered event, else
// the item's partition key), and data the stored detail. An ordered event
// carries the extensions sequence (its sequence number, zero-padded to 19
// digits so that, as the extension requires, the strings order as the
// numbers do) and partitionkey (its ordering key, the FIFO message group
// id). A claim-checked event has no data but the dataref extension (its
// S3 URI) and datasha256 (the data's SHA-256, in hex). An event written with a trace context carries the distributed
// tracing extension's traceparent and tracestate.
type CloudEvent struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Subject         string          `json:"subject,omitempty"`
	Time            string          `json:"time"`
	DataContentType string          `json:"datacontenttype"`
	Data            json.RawMessage `json:"data,omitempty"`
	DataRef         string          `json:"dataref,omitempty"`
	DataSHA256      string          `json:"datasha256,omitempty"`
	Sequence        string          `json:"sequence,omitempty"`
	PartitionKey    string          `json:"partitionkey,omitempty"`
	TraceParent     string          `json:"traceparent,omitempty"`
	TraceState      string          `json:"tracestate,omitempty"`
}

// CloudEventSequence is the sequence extension's value for sequence n.
func CloudEventSequence(n int64) string { return fmt.Sprintf("%019d", n) }

// CloudEvent returns r as a CloudEvent.
func (r Record) CloudEvent() CloudEvent {
	ce := CloudEvent{
		SpecVersion: "1.0", ID: r.EventID, Source: r.Source, Type: r.DetailType,
		Subject: r.PartitionKey, Time: r.OccurredAt.UTC().Format(TimeFormat),
		DataContentType: "application/json", Data: r.Detail,
		TraceParent: r.TraceParent, TraceState: r.TraceState,
	}
	if r.DataRef != nil {
		ce.DataRef, ce.DataSHA256 = r.DataRef.URI(), r.DataRef.SHA256
	}
	if r.OrderingKey != "" {
		ce.Subject, ce.PartitionKey = r.OrderingKey, r.OrderingKey
		ce.Sequence = CloudEventSequence(r.Sequence)
	}
	return ce
}

// CloudEventJSON returns r as a CloudEvent in structured JSON mode.
func (r Record) CloudEventJSON() []byte {
	b, err := json.Marshal(r.CloudEvent())
	if err != nil {
		panic("outbox: marshalling CloudEvent: " + err.Error())
	}
	return b
}

// DetailIn returns the EventBridge detail of r in format f.
func (r Record) DetailIn(f Format) []byte {
	if f == FormatCloudEvents {
		return r.CloudEventJSON()
	}
	return r.DetailJSON()
}

// MessageIn returns the SNS or SQS message body of r in format f.
func (r Record) MessageIn(f Format) []byte {
	if f == FormatCloudEvents {
		return r.CloudEventJSON()
	}
	return r.EnvelopeJSON()
}

// EventBridgeEntrySizeIn is the size EventBridge counts for r's PutEvents
// entry in format f.
func (r Record) EventBridgeEntrySizeIn(f Format) int {
	return r.eventBridgeEntrySize(len(r.DetailIn(f)))
}

// eventBridgeEntrySize is EventBridgeEntrySizeIn for a detail of the given
// length.
func (r Record) eventBridgeEntrySize(detail int) int {
	return eventBridgeTimeBytes + len(r.Source) + len(r.DetailType) + detail
}
