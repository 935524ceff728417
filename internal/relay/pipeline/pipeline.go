// Package pipeline is the relay's core, shared by stream mode and reconcile
// mode: publish a set of outbox records, then mark them published (or delete
// them), and set poison events aside as FAILED so that they never block
// anything.
//
// Publishing happens before marking, so a crash or a failed write in between
// only duplicates an event (consumers deduplicate on its id); an event is
// never marked published without having been accepted by the target.
package pipeline

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Item is one outbox item to process.
type Item struct {
	// Record is the parsed item. For a malformed item only PartitionKey and
	// SortKey are set, when they could be read.
	Record outbox.Record
	// Malformed is why the item breaks the outbox contract, or nil.
	Malformed error
}

// Parse turns a DynamoDB item (from a stream image or a query) into an Item.
// An item that breaks the contract becomes a malformed Item that keeps its
// key, so that it can be marked FAILED.
func Parse(t outbox.Table, item map[string]types.AttributeValue) Item {
	r, err := t.ParseItem(item)
	if err == nil {
		return Item{Record: r}
	}
	return Malformed(t, item, err)
}

// Malformed returns the Item of an item that cannot be parsed, keeping its
// key when it has one.
func Malformed(t outbox.Table, item map[string]types.AttributeValue, err error) Item {
	var key outbox.Record
	if pk, ok := item[t.PartitionKey].(*types.AttributeValueMemberS); ok {
		key.PartitionKey = pk.Value
	}
	if sk, ok := item[t.SortKey].(*types.AttributeValueMemberS); ok {
		key.SortKey = sk.Value
	}
	if ev, ok := item[outbox.AttrEventID].(*types.AttributeValueMemberS); ok {
		key.EventID = ev.Value
	}
	return Item{Record: key, Malformed: err}
}

// Status is what became of an item.
type Status int

// Statuses of an Outcome.
const (
	// Published: the event was published and its item marked or deleted.
	Published Status = iota
	// Poison: the event can never be published; its item was marked FAILED
	// (or, if even that failed, left for the reconciler). Not a failure of
	// the batch.
	Poison
	// LeftPending: publishing, or recording that the event was published,
	// failed; the item is still pending and must be tried again. In stream
	// mode this is a batch item failure.
	LeftPending
	// Skipped: the item is not pending; there is nothing to publish.
	Skipped
)

func (s Status) String() string {
	switch s {
	case Published:
		return "published"
	case Poison:
		return "poison"
	case LeftPending:
		return "left pending"
	case Skipped:
		return "skipped"
	}
	return "unknown"
}

// Outcome is what became of one item.
type Outcome struct {
	Status Status
	// Reason explains a Poison or LeftPending outcome.
	Reason string
	// EventPublished is true when the target accepted the event, even if
	// recording that failed.
	EventPublished bool
}

// Store is what the pipeline needs from the outbox table.
type Store interface {
	MarkPublished(ctx context.Context, records []outbox.Record) []error
	Delete(ctx context.Context, records []outbox.Record) []error
	MarkFailed(ctx context.Context, records []outbox.Record, reasons []string) []error
}

// Pipeline publishes and settles items. It is safe for concurrent use.
type Pipeline struct {
	Publisher publish.Publisher
	Store     Store
	// Action is what happens to published items.
	Action config.Action
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log receives one line per poison event and per event left pending.
	Log *slog.Logger
}

// Process publishes the pending items among items and records the result:
// one publishing wave (parallel batch calls) followed by one writing wave
// (parallel marks or deletes, and FAILED marks for poison events). It returns
// one Outcome per item and adds to the counts and latencies of m.
func (p *Pipeline) Process(ctx context.Context, items []Item, m *metrics.Recorder) []Outcome {
	outcomes := make([]Outcome, len(items))
	var toPublish []outbox.Record
	var publishIdx []int
	var poison []outbox.Record
	var poisonIdx []int
	var reasons []string
	addPoison := func(i int, reason string) {
		outcomes[i] = Outcome{Status: Poison, Reason: reason}
		if items[i].Record.PartitionKey == "" || items[i].Record.SortKey == "" {
			p.log().WarnContext(ctx, "poison outbox item without a readable key; it cannot be marked FAILED",
				"eventId", items[i].Record.EventID, "reason", reason)
			return
		}
		poison = append(poison, items[i].Record)
		poisonIdx = append(poisonIdx, i)
		reasons = append(reasons, reason)
	}
	for i, it := range items {
		switch {
		case it.Malformed != nil:
			addPoison(i, it.Malformed.Error())
		case it.Record.Status != outbox.StatusPending:
			outcomes[i] = Outcome{Status: Skipped, Reason: "status is " + string(it.Record.Status)}
		default:
			toPublish = append(toPublish, it.Record)
			publishIdx = append(publishIdx, i)
		}
	}

	var published []outbox.Record
	var publishedIdx []int
	retried := 0
	if len(toPublish) > 0 {
		results := p.Publisher.Publish(ctx, toPublish)
		at := p.now()
		for k, res := range results {
			i := publishIdx[k]
			retried += res.Retries
			switch res.Status {
			case publish.Published:
				published = append(published, toPublish[k])
				publishedIdx = append(publishedIdx, i)
				outcomes[i] = Outcome{Status: Published, EventPublished: true}
				m.Observe(metrics.PublishLatency, metrics.Milliseconds, float64(at.Sub(toPublish[k].OccurredAt).Milliseconds()))
			case publish.Rejected:
				addPoison(i, res.Reason)
			default:
				outcomes[i] = Outcome{Status: LeftPending, Reason: res.Reason}
			}
		}
	}

	// The writing wave: settle published items and mark poison ones, together.
	var settleErrs, poisonErrs []error
	var wg sync.WaitGroup
	if len(published) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p.Action == config.ActionDelete {
				settleErrs = p.Store.Delete(ctx, published)
			} else {
				settleErrs = p.Store.MarkPublished(ctx, published)
			}
		}()
	}
	if len(poison) > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			poisonErrs = p.Store.MarkFailed(ctx, poison, reasons)
		}()
	}
	wg.Wait()

	for k, err := range settleErrs {
		if err != nil {
			outcomes[publishedIdx[k]] = Outcome{Status: LeftPending, EventPublished: true, Reason: "published, but recording it failed: " + err.Error()}
		}
	}
	for k, err := range poisonErrs {
		i := poisonIdx[k]
		if err != nil {
			p.log().ErrorContext(ctx, "marking poison outbox event FAILED failed; it stays pending for the reconciler",
				"eventId", items[i].Record.EventID, "error", err)
		}
	}

	var nPublished, nPoison, nPending int
	for i, o := range outcomes {
		r := items[i].Record
		switch o.Status {
		case Published:
			nPublished++
		case Poison:
			nPoison++
			p.log().WarnContext(ctx, "poison outbox event set aside", "eventId", r.EventID,
				"partitionKey", r.PartitionKey, "sortKey", r.SortKey, "reason", o.Reason)
		case LeftPending:
			nPending++
			p.log().WarnContext(ctx, "outbox event left pending", "eventId", r.EventID,
				"eventPublished", o.EventPublished, "reason", o.Reason)
		}
	}
	m.Add(metrics.EventsPublished, nPublished)
	m.Add(metrics.EventsFailed, nPoison)
	m.Add(metrics.EventsRetried, retried)
	m.Add(metrics.EventsLeftPending, nPending)
	return outcomes
}

func (p *Pipeline) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Pipeline) log() *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return slog.New(slog.DiscardHandler)
}
