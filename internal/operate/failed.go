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
	// HoldsKey is true for an ordered event of an ordered pipeline: the
	// relay publishes none of its key's later events before it. An event
	// written with an ordering key to a pipeline without ordered mode holds
	// nothing.
	HoldsKey bool
	// WaitingBehind counts, for an event that holds its key, the events of
	// its ordering key written after it: none of them is published until it
	// is requeued and published, or skipped.
	WaitingBehind int64
	// Broken is why the item breaks the record contract, empty for a sound
	// event. A broken event can never be published as it is: fix the item,
	// then requeue it; or skip it.
	Broken string
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
	// OrderingKey and Sequence are those of an event written with an
	// ordering key; absent for another one.
	OrderingKey string `json:"orderingKey,omitempty"`
	Sequence    int64  `json:"sequence,omitempty"`
	// WaitingBehind is that of an event that holds its key; absent for
	// another one.
	WaitingBehind *int64 `json:"waitingBehind,omitempty"`
	// BrokenBecause is why the item breaks the record contract; absent for
	// a sound event.
	BrokenBecause string `json:"brokenBecause,omitempty"`
}

// MarshalJSON writes the event as `outbox failed --json` prints it.
func (e FailedEvent) MarshalJSON() ([]byte, error) {
	r := e.Record
	out := failedEventJSON{EventID: r.EventID, PartitionKey: r.PartitionKey, SortKey: r.SortKey, Source: r.Source, DetailType: r.DetailType,
		OccurredAt: r.OccurredAt.UTC().Format(outbox.TimeFormat), Attempts: r.Attempts, LastError: r.LastError, BrokenBecause: e.Broken}
	if r.Sequence > 0 {
		out.OrderingKey, out.Sequence = r.OrderingKey, r.Sequence
	}
	if e.HoldsKey {
		out.WaitingBehind = &e.WaitingBehind
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
		OrderingKey: in.OrderingKey, Sequence: in.Sequence}, Broken: in.BrokenBecause}
	if in.WaitingBehind != nil {
		e.HoldsKey, e.WaitingBehind = true, *in.WaitingBehind
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
	// Events are the FAILED events, those that break the record contract
	// included (FailedEvent.Broken).
	Events []FailedEvent `json:"events"`
	// Broken counts the events that break the record contract: they can
	// never be published as they are, and requeue leaves them alone until
	// their items are fixed.
	Broken int `json:"broken"`
	// Origins says, on a multi-Region pipeline, whose events these are,
	// and counts those of other Regions left out; absent for a
	// single-Region pipeline.
	Origins *OriginsOutput `json:"origins,omitempty"`
	// elsewhere are the Regions of the events of other Regions that the
	// filter named by id.
	elsewhere map[string]string
}

// Failed lists the FAILED events of p that f selects, oldest first. Since
// and Until apply to the time of failure. An item that breaks the record
// contract is listed with what can be read of it (brokenEvent).
func (c *Clients) Failed(ctx context.Context, p *Pipeline, f Filter) (FailedList, error) {
	t := p.Table()
	var list FailedList
	scope, err := p.originScope(f.Origins)
	if err != nil {
		return list, err
	}
	tl := newTally(scope)
	err = c.scan(ctx, t, statusCondition(outbox.StatusFailed, outbox.AttrFailedAt, f), func(item map[string]types.AttributeValue) {
		if !isOutboxItem(t, item) {
			return
		}
		e := FailedEvent{}
		r, err := t.ParseItem(item)
		if err != nil {
			e = brokenEvent(t, item, err)
		} else {
			e.Record = r
		}
		// The reason is matched here rather than in the filter expression:
		// a scan's filter does not lower the reads it costs.
		if !strings.Contains(e.Record.LastError, f.Reason) {
			return
		}
		if origin := originOf(item); !tl.keep(origin) {
			if len(f.IDs) > 0 {
				if list.elsewhere == nil {
					list.elsewhere = map[string]string{}
				}
				list.elsewhere[e.Record.EventID] = scope.of(origin)
			}
			return
		}
		if s, ok := item[outbox.AttrFailedAt].(*types.AttributeValueMemberS); ok {
			e.FailedAt, _ = time.Parse(time.RFC3339Nano, s.Value)
		}
		if e.Broken != "" {
			list.Broken++
		}
		list.Events = append(list.Events, e)
	})
	slices.SortFunc(list.Events, func(a, b FailedEvent) int {
		return cmp.Or(a.Record.OccurredAt.Compare(b.Record.OccurredAt), cmp.Compare(a.Record.EventID, b.Record.EventID))
	})
	list.Origins = tl.output()
	if err != nil {
		return list, err
	}
	return list, c.waitingBehind(ctx, p, list.Events)
}

// brokenEvent is the FailedEvent of a FAILED item that breaks the record
// contract (err, from outbox.Table.ParseItem): what can be read of it, and
// why it is broken. Its ordering key and sequence are read when both are
// there, so that the key it holds is shown, and it can be skipped.
func brokenEvent(t outbox.Table, item map[string]types.AttributeValue, err error) FailedEvent {
	r := t.ReadableRecord(item)
	r.Status = outbox.StatusFailed
	return FailedEvent{Record: r, Broken: err.Error()}
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
