package operate

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// FailedEvent is an event marked FAILED.
type FailedEvent struct {
	Record outbox.Record
	// FailedAt is when it was marked FAILED (zero if the item does not say).
	FailedAt time.Time
	// WaitingBehind counts, for an ordered event, the events of its
	// ordering key written after it: none of them is published until it is
	// requeued and published, or skipped.
	WaitingBehind int64
}

// failedEventJSON is a FailedEvent as `outbox failed --json` prints it.
type failedEventJSON struct {
	EventID      string `json:"eventId"`
	PartitionKey string `json:"partitionKey"`
	SortKey      string `json:"sortKey"`
	Source       string `json:"source"`
	DetailType   string `json:"detailType"`
	OccurredAt   string `json:"occurredAt"`
	// FailedAt is absent when the item does not record it.
	FailedAt  string `json:"failedAt,omitempty"`
	Attempts  int    `json:"attempts"`
	LastError string `json:"lastError"`
	// OrderingKey, Sequence and WaitingBehind are those of an ordered
	// event; absent for an unordered one.
	OrderingKey   string `json:"orderingKey,omitempty"`
	Sequence      int64  `json:"sequence,omitempty"`
	WaitingBehind *int64 `json:"waitingBehind,omitempty"`
}

// MarshalJSON writes the event as `outbox failed --json` prints it.
func (e FailedEvent) MarshalJSON() ([]byte, error) {
	r := e.Record
	out := failedEventJSON{EventID: r.EventID, PartitionKey: r.PartitionKey, SortKey: r.SortKey, Source: r.Source, DetailType: r.DetailType,
		OccurredAt: r.OccurredAt.UTC().Format(outbox.TimeFormat), Attempts: r.Attempts, LastError: r.LastError}
	if r.Sequence > 0 {
		out.OrderingKey, out.Sequence, out.WaitingBehind = r.OrderingKey, r.Sequence, &e.WaitingBehind
	}
	if !e.FailedAt.IsZero() {
		out.FailedAt = e.FailedAt.UTC().Format(outbox.TimeFormat)
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *FailedEvent) UnmarshalJSON(b []byte) error {
	var in failedEventJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	occurred, err := time.Parse(time.RFC3339Nano, in.OccurredAt)
	if err != nil {
		return fmt.Errorf("occurredAt: %w", err)
	}
	*e = FailedEvent{Record: outbox.Record{EventID: in.EventID, PartitionKey: in.PartitionKey, SortKey: in.SortKey, Source: in.Source,
		DetailType: in.DetailType, OccurredAt: occurred, Attempts: in.Attempts, LastError: in.LastError, Status: outbox.StatusFailed,
		OrderingKey: in.OrderingKey, Sequence: in.Sequence}}
	if in.WaitingBehind != nil {
		e.WaitingBehind = *in.WaitingBehind
	}
	if in.FailedAt != "" {
		if e.FailedAt, err = time.Parse(time.RFC3339Nano, in.FailedAt); err != nil {
			return fmt.Errorf("failedAt: %w", err)
		}
	}
	return nil
}

// FailedList is the result of Failed.
type FailedList struct {
	Events []FailedEvent `json:"events"`
	// Broken counts FAILED outbox items that break the record contract:
	// they can never be published, and requeue leaves them alone.
	Broken int `json:"broken"`
}

// Failed lists the FAILED events of p that f selects, oldest first. Since
// and Until apply to the time of failure.
func (c *Clients) Failed(ctx context.Context, p *Pipeline, f Filter) (FailedList, error) {
	t := p.Table()
	var list FailedList
	err := c.scan(ctx, t, statusCondition(outbox.StatusFailed, outbox.AttrFailedAt, f), func(item map[string]types.AttributeValue) {
		if !isOutboxItem(t, item) {
			return
		}
		r, err := t.ParseItem(item)
		if err != nil {
			list.Broken++
			return
		}
		// The reason is matched here rather than in the filter expression:
		// a scan's filter does not lower the reads it costs.
		if !strings.Contains(r.LastError, f.Reason) {
			return
		}
		e := FailedEvent{Record: r}
		if s, ok := item[outbox.AttrFailedAt].(*types.AttributeValueMemberS); ok {
			e.FailedAt, _ = time.Parse(time.RFC3339Nano, s.Value)
		}
		list.Events = append(list.Events, e)
	})
	slices.SortFunc(list.Events, func(a, b FailedEvent) int {
		return cmp.Or(a.Record.OccurredAt.Compare(b.Record.OccurredAt), cmp.Compare(a.Record.EventID, b.Record.EventID))
	})
	if err != nil {
		return list, err
	}
	return list, c.waitingBehind(ctx, t, list.Events)
}

// ReasonCount is how many failed events share a reason.
type ReasonCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// topReasons returns the n most frequent reasons, most frequent first.
func topReasons(events []FailedEvent, n int) []ReasonCount {
	counts := map[string]int{}
	for _, e := range events {
		counts[e.Record.LastError]++
	}
	out := make([]ReasonCount, 0, len(counts))
	for r, c := range counts {
		out = append(out, ReasonCount{Reason: r, Count: c})
	}
	slices.SortFunc(out, func(a, b ReasonCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Reason, b.Reason))
	})
	return out[:min(n, len(out))]
}
