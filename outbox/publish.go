package outbox

import (
	"encoding/json"
	"time"
)

// PublishedDetail is the detail of every published event: the stored object
// under data, and what consumers need to deduplicate and order under metadata.
type PublishedDetail struct {
	Metadata Metadata        `json:"metadata"`
	Data     json.RawMessage `json:"data"`
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
func (r Record) EventBridgeEntrySize() int {
	return eventBridgeTimeBytes + len(r.Source) + len(r.DetailType) + len(r.DetailJSON())
}

// PublishedSize is the larger of r's EventBridge entry size and SNS message
// size: the event must fit either target.
func (r Record) PublishedSize() int {
	return max(r.EventBridgeEntrySize(), len(r.EnvelopeJSON()))
}
