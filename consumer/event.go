package consumer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// OccurredAtFormat is the format of the published metadata.occurredAt.
const OccurredAtFormat = "2006-01-02T15:04:05.000Z07:00"

// Event is one published outbox event, unwrapped from its delivery.
type Event[T any] struct {
	// ID is metadata.eventId (a CloudEvent's id), the key of the inbox.
	ID string
	// Source and DetailType are the event's source and detail-type (a
	// CloudEvent's source and type).
	Source, DetailType string
	// OccurredAt is metadata.occurredAt (a CloudEvent's time).
	OccurredAt time.Time
	// Data is the decoded data; RawData its JSON as delivered.
	Data    T
	RawData json.RawMessage
	// PayloadHash is PayloadHash(RawData), stored in the inbox entry.
	PayloadHash string
	// DataRef is where a claim-checked event's data is, until Apply has
	// fetched it and checked its hash; nil for an event published whole.
	DataRef *DataRef
	// TraceParent and TraceState are the W3C trace context the event was
	// published in (metadata.traceparent, a CloudEvent's traceparent
	// extension); empty when it was written without one. Apply continues
	// that trace.
	TraceParent, TraceState string
}

// published is an event's envelope: EventBridge's, or the SNS message body
// (outbox/publish.go's Envelope).
type published struct {
	Source     string          `json:"source"`
	DetailType string          `json:"detail-type"`
	Detail     json.RawMessage `json:"detail"`
}

// publishedDetail is the published detail in either envelope format: the
// outbox's ({"metadata", "data"}), or a CloudEvent in structured JSON mode
// (specversion, id, source, type, time, data), which is the whole
// EventBridge detail or SNS or SQS message body.
type publishedDetail struct {
	Metadata struct {
		EventID     string   `json:"eventId"`
		OccurredAt  string   `json:"occurredAt"`
		TraceParent string   `json:"traceparent"`
		TraceState  string   `json:"tracestate"`
		DataRef     *DataRef `json:"dataRef"`
	} `json:"metadata"`
	Data json.RawMessage `json:"data"`

	SpecVersion string `json:"specversion"`
	TraceParent string `json:"traceparent"`
	TraceState  string `json:"tracestate"`
	ID          string `json:"id"`
	Source      string `json:"source"`
	Type        string `json:"type"`
	Time        string `json:"time"`
	CEDataRef   string `json:"dataref"`
	DataSHA256  string `json:"datasha256"`
}

// cloudEvent reports whether d is a CloudEvent, and moves its attributes
// to where the outbox format keeps them.
func (d *publishedDetail) cloudEvent(source, detailType *string) bool {
	if d.SpecVersion == "" {
		return false
	}
	d.Metadata.EventID, d.Metadata.OccurredAt = d.ID, d.Time
	d.Metadata.TraceParent, d.Metadata.TraceState = d.TraceParent, d.TraceState
	if d.CEDataRef != "" {
		d.Metadata.DataRef = &DataRef{URI: d.CEDataRef, SHA256: d.DataSHA256}
	}
	*source, *detailType = d.Source, d.Type
	return true
}

// snsNotification is the part of SNS's notification JSON (an SQS
// subscription without raw message delivery) the kit reads.
type snsNotification struct {
	Type     string `json:"Type"`
	Message  string `json:"Message"`
	TopicArn string `json:"TopicArn"`
}

// decodeBody unwraps an SQS message body: an EventBridge event (a rule's
// target), SNS's notification JSON (its Message is the SNS message body) or
// an SNS raw message (the body itself).
func decodeBody[T any](body string) (Event[T], error) {
	var probe struct {
		snsNotification
		Detail      json.RawMessage `json:"detail"`
		SpecVersion string          `json:"specversion"`
	}
	if err := json.Unmarshal([]byte(body), &probe); err != nil {
		return Event[T]{}, fmt.Errorf("%w: the message body is not JSON: %w", ErrMalformedEvent, err)
	}
	if probe.Type == "Notification" && probe.TopicArn != "" {
		var env published
		if err := json.Unmarshal([]byte(probe.Message), &env); err != nil {
			return Event[T]{}, fmt.Errorf("%w: the SNS notification's Message is not an event envelope: %w", ErrMalformedEvent, err)
		}
		if env.Detail == nil {
			return decodeEvent[T]("", "", json.RawMessage(probe.Message))
		}
		return decodeEvent[T](env.Source, env.DetailType, env.Detail)
	}
	if probe.SpecVersion != "" {
		return decodeEvent[T]("", "", json.RawMessage(body))
	}
	var env published
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		return Event[T]{}, fmt.Errorf("%w: %w", ErrMalformedEvent, err)
	}
	return decodeEvent[T](env.Source, env.DetailType, env.Detail)
}

// decodeEvent reads a published detail, or a CloudEvent, whose source and
// type are its own.
func decodeEvent[T any](source, detailType string, detail json.RawMessage) (Event[T], error) {
	if len(bytes.TrimSpace(detail)) == 0 {
		return Event[T]{}, fmt.Errorf("%w: no detail", ErrMalformedEvent)
	}
	var d publishedDetail
	if err := json.Unmarshal(detail, &d); err != nil {
		return Event[T]{}, fmt.Errorf("%w: the detail is not {\"metadata\":...,\"data\":...}: %w", ErrMalformedEvent, err)
	}
	timeFormat := OccurredAtFormat
	if d.cloudEvent(&source, &detailType) {
		timeFormat = time.RFC3339Nano
		if d.ID == "" {
			return Event[T]{}, fmt.Errorf("%w: the CloudEvent has no id", ErrMalformedEvent)
		}
	}
	if d.Metadata.EventID == "" {
		return Event[T]{}, fmt.Errorf("%w: the detail has no metadata.eventId", ErrMalformedEvent)
	}
	e := Event[T]{ID: d.Metadata.EventID, Source: source, DetailType: detailType, DataRef: d.Metadata.DataRef,
		TraceParent: d.Metadata.TraceParent, TraceState: d.Metadata.TraceState}
	var err error
	if e.OccurredAt, err = time.Parse(timeFormat, d.Metadata.OccurredAt); err != nil {
		return Event[T]{}, fmt.Errorf("%w: event %s: its time %q is not %s", ErrMalformedEvent, e.ID, d.Metadata.OccurredAt, timeFormat)
	}
	switch {
	case len(d.Data) > 0:
		return e, e.setData(d.Data)
	case e.DataRef == nil:
		return Event[T]{}, fmt.Errorf("%w: event %s has no data", ErrMalformedEvent, d.Metadata.EventID)
	}
	return e, nil // its data is fetched before it is applied
}

// setData decodes the event's data and hashes it.
func (e *Event[T]) setData(data json.RawMessage) error {
	var err error
	if e.PayloadHash, err = PayloadHash(data); err != nil {
		return fmt.Errorf("%w: event %s: %w", ErrMalformedEvent, e.ID, err)
	}
	if err := json.Unmarshal(data, &e.Data); err != nil {
		return fmt.Errorf("%w: event %s: decoding data into %T: %w", ErrMalformedEvent, e.ID, e.Data, err)
	}
	e.RawData = data
	return nil
}
