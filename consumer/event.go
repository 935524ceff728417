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
	// ID is metadata.eventId, the key of the inbox.
	ID string
	// Source and DetailType are the event's source and detail-type.
	Source, DetailType string
	// OccurredAt is metadata.occurredAt.
	OccurredAt time.Time
	// Data is the decoded data; RawData its JSON as delivered.
	Data    T
	RawData json.RawMessage
	// PayloadHash is PayloadHash(RawData), stored in the inbox entry.
	PayloadHash string
}

// published is an event's envelope: EventBridge's, or the SNS message body
// (outbox/publish.go's Envelope).
type published struct {
	Source     string          `json:"source"`
	DetailType string          `json:"detail-type"`
	Detail     json.RawMessage `json:"detail"`
}

// publishedDetail is the published detail: metadata and data.
type publishedDetail struct {
	Metadata struct {
		EventID    string `json:"eventId"`
		OccurredAt string `json:"occurredAt"`
	} `json:"metadata"`
	Data json.RawMessage `json:"data"`
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
		Detail json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal([]byte(body), &probe); err != nil {
		return Event[T]{}, fmt.Errorf("%w: the message body is not JSON: %w", ErrMalformedEvent, err)
	}
	if probe.Type == "Notification" && probe.TopicArn != "" {
		var env published
		if err := json.Unmarshal([]byte(probe.Message), &env); err != nil {
			return Event[T]{}, fmt.Errorf("%w: the SNS notification's Message is not an event envelope: %w", ErrMalformedEvent, err)
		}
		return decodeEvent[T](env.Source, env.DetailType, env.Detail)
	}
	var env published
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		return Event[T]{}, fmt.Errorf("%w: %w", ErrMalformedEvent, err)
	}
	return decodeEvent[T](env.Source, env.DetailType, env.Detail)
}

// decodeEvent reads a published detail.
func decodeEvent[T any](source, detailType string, detail json.RawMessage) (Event[T], error) {
	if len(bytes.TrimSpace(detail)) == 0 {
		return Event[T]{}, fmt.Errorf("%w: no detail", ErrMalformedEvent)
	}
	var d publishedDetail
	if err := json.Unmarshal(detail, &d); err != nil {
		return Event[T]{}, fmt.Errorf("%w: the detail is not {\"metadata\":...,\"data\":...}: %w", ErrMalformedEvent, err)
	}
	if d.Metadata.EventID == "" {
		return Event[T]{}, fmt.Errorf("%w: the detail has no metadata.eventId", ErrMalformedEvent)
	}
	if len(d.Data) == 0 {
		return Event[T]{}, fmt.Errorf("%w: event %s has no data", ErrMalformedEvent, d.Metadata.EventID)
	}
	e := Event[T]{ID: d.Metadata.EventID, Source: source, DetailType: detailType, RawData: d.Data}
	var err error
	if e.OccurredAt, err = time.Parse(OccurredAtFormat, d.Metadata.OccurredAt); err != nil {
		return Event[T]{}, fmt.Errorf("%w: event %s: metadata.occurredAt %q is not %s", ErrMalformedEvent, e.ID, d.Metadata.OccurredAt, OccurredAtFormat)
	}
	if e.PayloadHash, err = PayloadHash(d.Data); err != nil {
		return Event[T]{}, fmt.Errorf("%w: event %s: %w", ErrMalformedEvent, e.ID, err)
	}
	if err := json.Unmarshal(d.Data, &e.Data); err != nil {
		return Event[T]{}, fmt.Errorf("%w: event %s: decoding data into %T: %w", ErrMalformedEvent, e.ID, e.Data, err)
	}
	return e, nil
}
