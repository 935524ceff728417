// Package batch is the relay's core, shared by stream mode and reconcile
// mode: publish a set of outbox records, then mark them published (or delete
// them), and set poison events aside as FAILED so that they never block
// anything.
//
// Publishing happens before marking, so a crash or a failed write in between
// only duplicates an event (consumers deduplicate on its id); an event is
// never marked published without having been accepted by the target.
package batch

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/logging"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/store"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Item is one outbox item to process.
type Item struct {
	// Record is the parsed item. For a malformed item only its keys, event
	// id, ordering key and sequence, and pending index keys are set, when
	// they could be read (Malformed).
	Record outbox.Record
	// Malformed is why the item breaks the outbox contract, or nil.
	Malformed error
	// Skip says why the item is not to be published now (gone, settled,
	// held by another relay), or is "".
	Skip string
	// Unavailable is why the item's current state could not be read or the
	// item could not be held; it stays pending. Nil for none.
	Unavailable error
	// Busy says why another invocation holds the item: it stays pending and
	// is tried again, but it is no failure. "" for none.
	Busy string
	// Held is true when this invocation holds the item (outbox.Table.Hold)
	// until Record.NextAttemptAt: if publishing fails, the hold is released
	// and the attempt not counted; if marking fails, the hold stays, as the
	// item's backoff.
	Held bool
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

// ParsePending is Parse for an item found among pending items (in the
// pending index or by a scan): any sort key prefix is accepted
// (outbox.Table.ParsePendingItem).
func ParsePending(t outbox.Table, item map[string]types.AttributeValue) Item {
	r, err := t.ParsePendingItem(item)
	if err == nil {
		return Item{Record: r}
	}
	return Malformed(t, item, err)
}

// Malformed returns the Item of an item that cannot be parsed, with what
// can be read of it (Readable): an ordered event that breaks the contract
// still holds its ordering key (gate.go), and is never passed over.
func Malformed(t outbox.Table, item map[string]types.AttributeValue, err error) Item {
	return Item{Record: t.ReadableRecord(item), Malformed: err}
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
	// Waiting: an ordered event whose key has an earlier event not yet
	// published (Outcome.Missing); it stays pending, unpublished, until that
	// one is.
	Waiting
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
	case Waiting:
		return "waiting"
	}
	return "unknown"
}

// Outcome is what became of one item.
type Outcome struct {
	Status Status
	// Reason explains a Poison, LeftPending or Skipped outcome.
	Reason string
	// EventPublished is true when the target accepted the event, even if
	// recording that failed.
	EventPublished bool
	// Class is the kind of failure of a Poison or LeftPending outcome.
	Class retry.Class
	// Hint names the probable fix of a LeftPending outcome, when known.
	Hint string
	// Missing is, for a Waiting outcome, the sequence of the key's event
	// it waits for.
	Missing int64
	// Blocked is true for a Waiting outcome whose key's next event is
	// FAILED: it waits until that one is requeued and published, or
	// skipped.
	Blocked bool
	// Registered is true for a Waiting outcome registered on its key's
	// cursor: the relay that publishes the event it waits for publishes it
	// next.
	Registered bool
	// Deferred is true for a LeftPending outcome of an event that was not
	// tried: its invocation's deadline came first (gate.go), or came before
	// the reconciler's publishing rate allowed it (publish.Paced). It is no
	// failure of the target.
	Deferred bool
	// Chained are the event ids of the events registered on the key's
	// cursor that were published after this one in the same Process, in
	// order (gate.go's next): they have no item of their own in the batch,
	// so their outcomes are given here, on the item whose publishing moved
	// the cursor past their gap.
	Chained []string
}

// Store is what the processor needs from the outbox table.
type Store interface {
	MarkPublished(ctx context.Context, records []outbox.Record) []error
	Delete(ctx context.Context, records []outbox.Record) []error
	MarkFailed(ctx context.Context, records []outbox.Record, reasons []string) []error
	AddPendingKeys(ctx context.Context, records []outbox.Record) []error
	Release(ctx context.Context, records []outbox.Record) []error
}

// Processor publishes and settles items. It is safe for concurrent use.
type Processor struct {
	Publisher publish.Publisher
	Store     Store
	// Action is what happens to published items.
	Action config.Action
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Log receives one line per poison event and per event left pending.
	Log *slog.Logger
	// Table is the outbox table's name, for hints.
	Table string
	// NoPendingIndex is true when the table has no pending index: an item
	// whose publishing failed is then not given the index keys.
	NoPendingIndex bool
	// Cursors, when not nil, turns ordered mode on: events with a sequence
	// go through the gate (gate.go), in order per ordering key.
	Cursors CursorStore
	// Layout is the outbox table, by which the gate reads the events
	// registered on a cursor.
	Layout outbox.Table
	// Hold is how long the gate holds an event registered on a cursor
	// before publishing it (gate.go's holdChained).
	Hold store.HoldPolicy
	// MultiRegion is true for a pipeline of several Regions, whose
	// ordering keys may be written in two Regions at once: an ordered
	// event that conflicts with its key's order is then published out of
	// order, never settled unpublished (gate.go's conflict).
	MultiRegion bool
	// Remaining returns the time left before ctx's deadline, and whether it
	// has one; nil reads ctx.Deadline against the real clock. The gate
	// sends no key's event after its first, and starts no pass, in the
	// last part of it (DeadlineReserve), so that the cursors are advanced
	// and the events settled before the invocation ends.
	Remaining func(ctx context.Context) (time.Duration, bool)
}

// Process publishes the pending items among items and records the result:
// one publishing wave (parallel batch calls) followed by one writing wave
// (parallel marks or deletes, FAILED marks for poison events, releases of
// the holds of failed items, and pending index keys for failed items that
// lack them). It returns one Outcome per
// item and adds to the counts and latencies of m.
func (p *Processor) Process(ctx context.Context, items []Item, m *metrics.Recorder) []Outcome {
	return p.process(ctx, items, m, 0, p.deadline(ctx))
}

// process is Process at depth: the number of passes of the gate before it
// in this invocation (gate.go's next). late tells when the gate is to start
// nothing more: the deadline is near (Processor.deadline, read once when
// the first pass began).
func (p *Processor) process(ctx context.Context, items []Item, m *metrics.Recorder, depth int, late func() bool) []Outcome {
	w := &wave{outcomes: make([]Outcome, len(items))}
	var toPublish []outbox.Record
	var publishIdx, orderedIdx []int
	for i, it := range items {
		switch {
		case it.Skip != "":
			w.outcomes[i] = Outcome{Status: Skipped, Reason: it.Skip}
		case it.Malformed != nil && (p.Cursors == nil || it.Record.Sequence == 0):
			w.addPoison(i, it.Record, it.Malformed.Error())
		case it.Unavailable != nil:
			w.outcomes[i] = p.storeFailure(it.Unavailable, false)
		case it.Busy != "":
			w.outcomes[i] = Outcome{Status: LeftPending, Reason: it.Busy}
		case it.Malformed == nil && it.Record.Status != outbox.StatusPending:
			w.outcomes[i] = Outcome{Status: Skipped, Reason: "status is " + string(it.Record.Status)}
		case p.Cursors != nil && it.Record.Sequence > 0:
			orderedIdx = append(orderedIdx, i)
		default:
			toPublish = append(toPublish, it.Record)
			publishIdx = append(publishIdx, i)
		}
	}
	retried := 0
	if len(orderedIdx) > 0 {
		retried += p.gate(ctx, items, orderedIdx, w, m, late)
	}
	if len(toPublish) > 0 {
		results := publish.Paced(ctx, p.Publisher, toPublish)
		at := p.now()
		for k, res := range results {
			i := publishIdx[k]
			retried += res.Retries
			switch res.Status {
			case publish.Published:
				w.published = append(w.published, toPublish[k])
				w.publishedIdx = append(w.publishedIdx, i)
				w.outcomes[i] = Outcome{Status: Published, EventPublished: true}
				m.Observe(metrics.PublishLatency, metrics.Milliseconds, float64(at.Sub(toPublish[k].OccurredAt).Milliseconds()))
			case publish.Rejected:
				w.addPoison(i, toPublish[k], res.Reason)
			default:
				w.outcomes[i] = Outcome{Status: LeftPending, Reason: res.Reason, Class: res.Class, Hint: res.Hint, Deferred: res.Deferred}
				switch {
				case items[i].Held:
					// The hold gave the item the index keys it lacked.
					w.released = append(w.released, toPublish[k])
				case toPublish[k].PendingShard == "" && !p.NoPendingIndex:
					w.unindexed = append(w.unindexed, toPublish[k])
				}
			}
		}
	}
	p.write(ctx, w, items)
	for _, c := range w.copies {
		w.outcomes[c[0]] = w.outcomes[c[1]]
	}
	p.report(ctx, items, w.outcomes, retried, m)
	if len(w.chain) > 0 || len(w.again) > 0 {
		p.next(ctx, items, w, m, depth, late)
	}
	return w.outcomes
}

// wave collects the writes that follow publishing.
type wave struct {
	outcomes     []Outcome
	published    []outbox.Record
	publishedIdx []int
	poison       []outbox.Record
	poisonIdx    []int
	reasons      []string
	unindexed    []outbox.Record // failed, and lacking the pending index keys
	released     []outbox.Record // failed, and held by this invocation
	// copies are pairs of items: the first (another delivery of the same
	// ordered event) takes the outcome of the second.
	copies [][2]int
	// chain are the registered events that follow a cursor this wave
	// advanced, chainedBy the item whose publishing advanced it, for each;
	// again the items whose gap closed while they were being registered.
	// Both go through the gate once more (gate.go's next).
	chain     []outbox.Record
	chainedBy []int
	again     []int
	// conflicts counts the ordered events published out of order because
	// their key was written in two Regions at once (gate.go's conflict).
	conflicts int
}

func (w *wave) addPoison(i int, r outbox.Record, reason string) {
	w.outcomes[i] = Outcome{Status: Poison, Reason: reason, Class: retry.ClassPoison}
	if r.PartitionKey == "" || r.SortKey == "" {
		w.outcomes[i].Reason += " (the item has no readable key, so it cannot be marked FAILED)"
		return
	}
	w.poison = append(w.poison, r)
	w.poisonIdx = append(w.poisonIdx, i)
	w.reasons = append(w.reasons, reason)
}

// write runs the writing wave: settle published items, mark poison ones,
// release or index failed ones, all at once.
func (p *Processor) write(ctx context.Context, w *wave, items []Item) {
	var settleErrs, poisonErrs, indexErrs, releaseErrs []error
	var wg sync.WaitGroup
	run := func(n int, f func()) {
		if n > 0 {
			wg.Go(f)
		}
	}
	run(len(w.published), func() { settleErrs = p.recordPublished(ctx, w.published) })
	run(len(w.poison), func() { poisonErrs = p.Store.MarkFailed(ctx, w.poison, w.reasons) })
	run(len(w.unindexed), func() { indexErrs = p.Store.AddPendingKeys(ctx, w.unindexed) })
	run(len(w.released), func() { releaseErrs = p.Store.Release(ctx, w.released) })
	wg.Wait()

	for k, err := range settleErrs {
		if err != nil {
			w.outcomes[w.publishedIdx[k]] = p.storeFailure(err, true)
		}
	}
	for k, err := range poisonErrs {
		if err != nil {
			p.log().ErrorContext(ctx, "marking poison outbox event FAILED failed; it stays pending for the reconciler",
				"eventId", items[w.poisonIdx[k]].Record.EventID, "error", err, "hint", p.tableHint(err))
		}
	}
	for k, err := range releaseErrs {
		if err != nil {
			p.log().WarnContext(ctx, "releasing the hold of an outbox event whose publishing failed failed; it is tried again when the hold ends",
				"eventId", w.released[k].EventID, "error", err, "hint", p.tableHint(err))
		}
	}
	for k, err := range indexErrs {
		if err != nil {
			p.log().ErrorContext(ctx, "adding the pending index keys to an outbox event whose publishing failed failed; only the stream's retries can publish it",
				"eventId", w.unindexed[k].EventID, "error", err, "hint", p.tableHint(err))
		}
	}
}

// recordPublished marks the items of published events PUBLISHED, or
// deletes them, as the action says; it returns one error per record.
func (p *Processor) recordPublished(ctx context.Context, records []outbox.Record) []error {
	if p.Action == config.ActionDelete {
		return p.Store.Delete(ctx, records)
	}
	return p.Store.MarkPublished(ctx, records)
}

// storeFailure is the outcome of an item whose reading, holding or
// recording failed in the table.
func (p *Processor) storeFailure(err error, published bool) Outcome {
	reason := err.Error()
	if published {
		reason = "published, but recording it failed: " + reason
	}
	return Outcome{Status: LeftPending, EventPublished: published, Reason: reason, Class: retry.ClassifyError(err), Hint: p.tableHint(err)}
}

// tableHint names the probable fix of a failed request on the table.
func (p *Processor) tableHint(err error) string {
	if retry.ClassifyError(err) != retry.ClassEnvironment {
		return ""
	}
	code := retry.ErrorCode(err)
	switch {
	case strings.HasPrefix(code, "AccessDenied"), code == "UnrecognizedClientException":
		return fmt.Sprintf("the relay role may lack dynamodb:GetItem/BatchGetItem, UpdateItem or BatchWriteItem on the table %s", p.Table)
	case strings.HasPrefix(code, "ResourceNotFound"):
		return fmt.Sprintf("the table %s may not exist in the function's region", p.Table)
	case strings.HasPrefix(code, "KMS"):
		return fmt.Sprintf("the KMS key of the table %s may be disabled, or its policy may deny the relay role", p.Table)
	}
	return ""
}

// report logs the outcomes and counts them in m.
func (p *Processor) report(ctx context.Context, items []Item, outcomes []Outcome, retried int, m *metrics.Recorder) {
	var nPublished, nPoison, nPending, nDeferred int
	for i, o := range outcomes {
		r := items[i].Record
		switch o.Status {
		case Published:
			nPublished++
			continue
		case Poison:
			nPoison++
			p.log().WarnContext(ctx, "poison outbox event set aside", "eventId", r.EventID,
				"partitionKey", r.PartitionKey, "sortKey", r.SortKey, "reason", o.Reason)
		case LeftPending:
			nPending++
			if o.Deferred {
				nDeferred++
				continue
			}
			p.log().WarnContext(ctx, "outbox event left pending", "eventId", r.EventID,
				"eventPublished", o.EventPublished, "reason", o.Reason, "errorClass", string(o.Class), "hint", o.Hint)
		}
		if o.Class != "" && !o.EventPublished {
			m.AddSeries(metrics.Series{Name: metrics.PublishErrors, Dimension: metrics.DimensionErrorClass, Value: string(o.Class)}, 1)
		}
	}
	if nDeferred > 0 {
		p.log().InfoContext(ctx, "events left pending, untried, for the next invocation: the deadline is near", "events", nDeferred)
	}
	m.Add(metrics.EventsPublished, nPublished)
	m.Add(metrics.EventsFailed, nPoison)
	m.Add(metrics.EventsRetried, retried)
	m.Add(metrics.EventsLeftPending, nPending)
}

func (p *Processor) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

func (p *Processor) log() *slog.Logger { return logging.OrDiscard(p.Log) }
