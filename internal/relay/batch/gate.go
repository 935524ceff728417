package batch

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/store"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// The gate publishes ordered events (those with a sequence) in ordered
// mode: event n of an ordering key only once n-1 was accepted by the
// target. It reads each key's cursor (the last sequence published), settles
// without publishing what the cursor already covers, and publishes the run
// that follows the cursor without a gap: one event per key per call, the
// next once that call answered (calls.go), so that a failed entry can never
// be overtaken by a later event of its key in the same call. A key stops at
// its first event that fails; what follows waits. Once the target accepted
// a key's events, the cursor is advanced, and only then are their items
// marked or deleted (at checkpoints while publishing goes on, and by the
// writing wave at the end): a crash in between republishes (the cursor is
// behind), never skips.
// A poison event is marked FAILED only once its key's cursor says it is
// blocked by it, so that a key waiting behind a FAILED event is known as
// such. An ordered event whose item breaks the record contract, but whose
// ordering key and sequence can be read (Malformed), takes its place in its
// key's order like any other: it waits for the events before it, and when
// its turn comes it is poison, never published, and blocks its key.

// CursorStore is what the gate needs of the table; *store.Store is one.
type CursorStore interface {
	Cursors(ctx context.Context, keys []string) ([]outbox.Cursor, []error)
	AdvanceCursors(ctx context.Context, moves []store.CursorMove) ([]outbox.Cursor, []error)
	BlockCursors(ctx context.Context, keys []string, sequences []int64) []error
	RegisterWaiting(ctx context.Context, keys []string, waiting [][]outbox.Record) []store.Registration
	Current(ctx context.Context, records []outbox.Record) ([]map[string]types.AttributeValue, []error)
	Hold(ctx context.Context, records []outbox.Record, until func(outbox.Record) time.Time) []store.Held
}

// DeadlineReserve is the time the gate keeps before its invocation's
// deadline, at most a quarter of what was left when it started: it sends
// no key's event after the key's first, and starts no pass, in it. A key's
// events go out one round trip each, so a large batch of one key (a backlog
// caught up with a large batch size) could outlast the function's timeout:
// killed before its cursor advance, the invocation would republish the same
// events on every retry and never get further. Stopped in time, it advances
// the cursor past what was accepted and leaves the rest pending, a batch
// item failure that the stream retries from there.
const DeadlineReserve = 5 * time.Second

// maxGateDepth bounds the passes of the gate one Process makes: the first,
// then those over the events registered after the cursors it advanced.
const maxGateDepth = 8

// lane is one ordering key's events in a batch.
type lane struct {
	key    string
	cursor outbox.Cursor
	// items are the key's items in the batch, in order of sequence.
	items []int
	// late are the items below the sequence the cursor was started at.
	late []int
	// run holds the items that follow the cursor without a gap, in order
	// of sequence; each entry lists the items of one sequence (a record
	// delivered twice), the first one published.
	run [][]int
	// accepted counts the run's entries the target accepted, in order;
	// advanced those of them that a checkpoint recorded while the run went
	// on (the cursor advanced over them, their items settled), and
	// advancedCursor is the cursor as the last such advance left it.
	accepted, advanced int
	advancedCursor     outbox.Cursor
	// stopped is true once an entry of the run failed.
	stopped bool
}

// gate runs the ordered items of items (their indexes in idx) through the
// gate, filling their outcomes in w and adding to its writes. It returns
// the number of retried entries.
func (p *Processor) gate(ctx context.Context, items []Item, idx []int, w *wave, m *metrics.Recorder, late func() bool) int {
	lanes := p.lanes(ctx, items, idx, w)
	if w.conflicts > 0 {
		m.Add(metrics.OrderingConflicts, w.conflicts)
		p.log().WarnContext(ctx, "ordered events whose ordering key was written in two Regions at once are published out of order", "events", w.conflicts)
	}
	retried := p.publishLate(ctx, items, lanes, w, m)
	retried += p.publishRuns(ctx, items, lanes, w, m, late)
	p.advance(ctx, items, lanes, w)
	p.block(ctx, items, lanes, w)
	p.register(ctx, items, lanes, w)
	return retried
}

// lanes groups the items by ordering key, reads the keys' cursors and plans
// each key: settled, run or waiting.
func (p *Processor) lanes(ctx context.Context, items []Item, idx []int, w *wave) []*lane {
	byKey := map[string][]int{}
	var keys []string
	for _, i := range idx {
		k := items[i].Record.OrderingKey
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], i)
	}
	cursors, errs := p.Cursors.Cursors(ctx, keys)
	var lanes []*lane
	for n, k := range keys {
		group := byKey[k]
		if errs[n] != nil {
			for _, i := range group {
				w.outcomes[i] = p.storeFailure(errs[n], false)
				w.release(items, i)
			}
			continue
		}
		slices.SortStableFunc(group, func(a, b int) int { return cmp.Compare(items[a].Record.Sequence, items[b].Record.Sequence) })
		l := &lane{key: k, cursor: cursors[n], items: group}
		p.plan(items, l, group, w)
		lanes = append(lanes, l)
	}
	return lanes
}

// plan sorts one key's items, in order of sequence, into those the cursor
// covers (settled without publishing), the run after the cursor, and those
// after a gap (waiting).
func (p *Processor) plan(items []Item, l *lane, group []int, w *wave) {
	next := l.cursor.Next()
	for k := 0; k < len(group); k++ {
		i := group[k]
		r := items[i].Record
		switch {
		case k > 0 && r.Sequence == items[group[k-1]].Record.Sequence:
			p.sameSequence(items, l, group[k-1], i, w)
		case items[i].Malformed != nil && r.Sequence <= l.cursor.Published:
			// Not the event the cursor went past, nor one to publish late:
			// it holds nothing, and is set aside.
			w.addPoison(i, r, items[i].Malformed.Error())
		case r.Sequence < l.cursor.Started:
			// Never went through the cursor: pending since before ordered
			// mode began for its key (a FAILED event requeued).
			l.late = append(l.late, i)
		case r.Sequence <= l.cursor.Published && p.conflict(r):
			l.late = append(l.late, i)
			w.conflicts++
		case r.Sequence <= l.cursor.Published:
			// Published before a crash kept it from being settled.
			w.settle(i, r)
		case r.Sequence == next:
			l.run = append(l.run, []int{i})
			next++
		default:
			p.wait(items, i, l, next, w)
		}
	}
}

// sameSequence places item i, whose sequence is that of item prev: a second
// delivery of the same event shares its outcome; another event with the
// same sequence breaks the contract, unless it was written in another
// Region (conflict).
func (p *Processor) sameSequence(items []Item, l *lane, prev, i int, w *wave) {
	r, first := items[i].Record, items[prev].Record
	if r.EventID != first.EventID && p.conflict(r) && r.Origin != first.Origin {
		l.late = append(l.late, i)
		w.conflicts++
		return
	}
	if r.EventID != first.EventID {
		w.addPoison(i, r, fmt.Sprintf("sequence %d of ordering key %q is also the event %s's: a sequence is given to one event only", r.Sequence, l.key, first.EventID))
		return
	}
	if n := len(l.run); n > 0 && l.run[n-1][0] == prev {
		l.run[n-1] = append(l.run[n-1], i)
		return
	}
	w.copies = append(w.copies, [2]int{i, prev})
}

// conflict reports whether ordered event r, which its key's cursor has
// passed or another event's sequence shares, may have been written in one
// Region while its key was written in another: in a multi-Region pipeline,
// an event that carries its origin. Each Region's writer checks the key's
// sequence in its own replica only, so two Regions can give one sequence
// to two events, and a cursor advanced in one Region can pass an event
// the other Region wrote. Such an event is published out of order, as a
// late one (publishLate), never settled unpublished: after a crash between
// a cursor's advance and the settling of its events this republishes one,
// which consumers drop by event id.
func (p *Processor) conflict(r outbox.Record) bool {
	return p.MultiRegion && r.Origin != ""
}

// deadline returns the function that tells whether the deadline of ctx is
// so near that the gate starts no more rounds: within DeadlineReserve of
// it, or of a quarter of the time left now if that is shorter. Without a
// deadline, it is never near.
func (p *Processor) deadline(ctx context.Context) func() bool {
	remaining := p.Remaining
	if remaining == nil {
		remaining = func(ctx context.Context) (time.Duration, bool) {
			d, ok := ctx.Deadline()
			return time.Until(d), ok
		}
	}
	left, ok := remaining(ctx)
	if !ok {
		return func() bool { return false }
	}
	reserve := min(DeadlineReserve, left/4)
	return func() bool {
		left, _ := remaining(ctx)
		return left < reserve
	}
}

// publishLate publishes the events below the sequence their key's cursor
// was started at (outbox.Cursor.Started), out of order: they were pending
// (FAILED, then requeued) when ordered mode began for their key, and an
// event is never dropped; and those of a key written in two Regions at
// once (conflict). They are settled once published, and leave the
// cursor as it is.
func (p *Processor) publishLate(ctx context.Context, items []Item, lanes []*lane, w *wave, m *metrics.Recorder) int {
	var late []outbox.Record
	var idx []int
	for _, l := range lanes {
		for _, i := range l.late {
			late, idx = append(late, items[i].Record), append(idx, i)
		}
	}
	if len(late) == 0 {
		return 0
	}
	p.log().WarnContext(ctx, "ordered events are published out of their key's order: pending since before ordered mode began for their key, or written in two Regions at once", "events", len(late))
	retried := 0
	at := p.now()
	for k, res := range publish.Paced(ctx, p.Publisher, late) {
		i := idx[k]
		retried += res.Retries
		switch res.Status {
		case publish.Published:
			w.settle(i, late[k])
			m.Observe(metrics.PublishLatency, metrics.Milliseconds, float64(at.Sub(late[k].OccurredAt).Milliseconds()))
		case publish.Rejected:
			w.addPoison(i, late[k], res.Reason)
		default:
			w.outcomes[i] = Outcome{Status: LeftPending, Reason: res.Reason, Class: res.Class, Hint: res.Hint, Deferred: res.Deferred}
			p.unpublished(items, i, w)
		}
	}
	return retried
}

// deferRun leaves the entries of l's run from round on pending, untried:
// the deadline is near. The stream retries them (a batch item failure),
// the cursor advanced past those accepted before.
func (p *Processor) deferRun(items []Item, l *lane, round int, w *wave) {
	l.stopped = true
	for _, entry := range l.run[round:] {
		i := entry[0]
		w.outcomes[i] = Outcome{Status: LeftPending, Deferred: true,
			Reason: fmt.Sprintf("not tried: the invocation's deadline is near; event %d of ordering key %q is published next", items[i].Record.Sequence, l.key)}
		p.unpublished(items, i, w)
		for _, d := range entry[1:] {
			w.copies = append(w.copies, [2]int{d, i})
		}
	}
}

// refuse gives entry round of l's run, which was not published, the
// outcome o (its other deliveries too), and stops the run there.
func (p *Processor) refuse(items []Item, l *lane, round int, o Outcome, w *wave) {
	i := l.run[round][0]
	for _, d := range l.run[round][1:] {
		w.copies = append(w.copies, [2]int{d, i})
	}
	w.outcomes[i] = o
	p.stop(items, l, round, w)
}

// stop ends l's run at entry round, which failed: the entries after it wait.
func (p *Processor) stop(items []Item, l *lane, round int, w *wave) {
	l.stopped = true
	for _, entry := range l.run[round+1:] {
		for _, i := range entry {
			p.wait(items, i, l, l.cursor.Published+int64(round)+1, w)
		}
	}
}

// unpublished releases the hold of an item whose publishing failed, or
// gives it the pending index keys it lacks.
func (p *Processor) unpublished(items []Item, i int, w *wave) {
	r := items[i].Record
	switch {
	case items[i].Held:
		w.released = append(w.released, r)
	case r.PendingShard == "" && !p.NoPendingIndex:
		w.unindexed = append(w.unindexed, r)
	}
}

// advance moves the cursor of every key whose events were accepted, and
// then lets the writing wave settle them; an event whose cursor could not
// be moved stays pending (published, but not recorded), and is published
// again on its next try.
func (p *Processor) advance(ctx context.Context, items []Item, lanes []*lane, w *wave) {
	var moves []store.CursorMove
	var moved []*lane
	for _, l := range lanes {
		switch {
		case l.accepted > l.advanced:
			moves = append(moves, l.move(l.accepted))
			moved = append(moved, l)
		case l.advanced > 0:
			w.chainAfter(l, l.advancedCursor)
		}
	}
	if len(moves) == 0 {
		return
	}
	cursors, errs := p.Cursors.AdvanceCursors(ctx, moves)
	for n, l := range moved {
		if errs[n] == nil {
			w.chainAfter(l, cursors[n])
		}
		for _, entry := range l.run[l.advanced:l.accepted] {
			for k, i := range entry {
				switch {
				case errs[n] != nil:
					w.outcomes[i] = p.storeFailure(fmt.Errorf("advancing the cursor of ordering key %q: %w", l.key, errs[n]), true)
				case k == 0:
					w.settle(i, items[i].Record)
				default:
					w.copies = append(w.copies, [2]int{i, entry[0]})
				}
			}
		}
	}
}

// move is the cursor move that records l's first accepted entries as
// published: from where the cursor was found, so that it applies whether
// or not a checkpoint moved it part of the way. It removes the events
// registered on the cursor that it covers, but those a checkpoint's move
// removed already.
func (l *lane) move(accepted int) store.CursorMove {
	from, to := l.cursor.Published, l.cursor.Published+int64(accepted)
	var done []int64
	for n := range l.cursor.Waiting {
		if n <= to && (l.advanced == 0 || n > from+int64(l.advanced)) {
			done = append(done, n)
		}
	}
	slices.Sort(done)
	return store.CursorMove{Key: l.key, From: from, To: to, Done: done}
}

// chainAfter adds to the wave's chain the events registered on c, the
// cursor of l as this wave's last advance left it, that follow it.
func (w *wave) chainAfter(l *lane, c outbox.Cursor) {
	next := registeredAfter(c, l.key)
	w.chain = append(w.chain, next...)
	last := l.run[l.accepted-1][0]
	for range next {
		w.chainedBy = append(w.chainedBy, last)
	}
}

// block marks the keys stopped by a poison event as blocked by it, then
// lets the writing wave mark the event FAILED. An event whose key could not
// be marked stays pending, to be tried again.
func (p *Processor) block(ctx context.Context, items []Item, lanes []*lane, w *wave) {
	var keys []string
	var seqs []int64
	var heads, laneOf []int
	for n, l := range lanes {
		if !l.stopped || l.accepted >= len(l.run) {
			continue
		}
		if i := l.run[l.accepted][0]; w.outcomes[i].Status == Poison {
			keys, seqs, heads = append(keys, l.key), append(seqs, items[i].Record.Sequence), append(heads, i)
			laneOf = append(laneOf, n)
		}
	}
	if len(keys) == 0 {
		return
	}
	errs := p.Cursors.BlockCursors(ctx, keys, seqs)
	for n, i := range heads {
		if errs[n] != nil {
			w.outcomes[i] = p.storeFailure(fmt.Errorf("marking ordering key %q blocked by its poison event: %w", keys[n], errs[n]), false)
			p.unpublished(items, i, w)
			continue
		}
		w.addPoison(i, items[i].Record, w.outcomes[i].Reason)
		for _, entry := range lanes[laneOf[n]].run[lanes[laneOf[n]].accepted+1:] {
			for _, k := range entry {
				w.outcomes[k].Blocked = true
				w.outcomes[k].Reason = fmt.Sprintf("waits behind the FAILED event %d of ordering key %q", seqs[n], keys[n])
			}
		}
	}
}

// registeredAfter returns the events registered on c that follow it
// without a gap: the ones to publish next. A cursor another relay moved
// further (not Exists) is that relay's to follow.
func registeredAfter(c outbox.Cursor, key string) []outbox.Record {
	var next []outbox.Record
	for n := c.Next(); c.Exists; n++ {
		loc, ok := c.Waiting[n]
		if !ok {
			break
		}
		next = append(next, outbox.Record{PartitionKey: loc[0], SortKey: loc[1], OrderingKey: key, Sequence: n})
	}
	return next
}

// register registers on their keys' cursors the items that wait after a
// gap (not behind a FAILED event), so that whoever publishes the event
// they wait for publishes them next, and they need no retry. A key whose
// gap closed meanwhile has its items gone through the gate again.
func (p *Processor) register(ctx context.Context, items []Item, lanes []*lane, w *wave) {
	var keys []string
	var waiting [][]outbox.Record
	var idx [][]int
	for _, l := range lanes {
		var recs []outbox.Record
		var is []int
		for _, i := range l.waiting(w) {
			r := items[i].Record
			if _, known := l.cursor.Waiting[r.Sequence]; known {
				w.outcomes[i].Registered = true
				continue
			}
			if len(recs) == 0 || recs[len(recs)-1].Sequence != r.Sequence {
				recs = append(recs, r)
			}
			is = append(is, i)
		}
		if len(recs) == 0 || len(l.cursor.Waiting)+len(recs) > outbox.MaxWaitingRegistered {
			continue
		}
		keys, waiting, idx = append(keys, l.key), append(waiting, recs), append(idx, is)
	}
	if len(keys) == 0 {
		return
	}
	for n, reg := range p.Cursors.RegisterWaiting(ctx, keys, waiting) {
		for _, i := range idx[n] {
			switch {
			case reg.Registered:
				w.outcomes[i].Registered = true
			case reg.Closed:
				w.again = append(w.again, i)
			}
		}
	}
}

// waiting returns l's items that wait after a gap, not behind a FAILED
// event, in order of sequence.
func (l *lane) waiting(w *wave) []int {
	var out []int
	for _, i := range l.items {
		if o := w.outcomes[i]; o.Status == Waiting && !o.Blocked {
			out = append(out, i)
		}
	}
	return out
}

// next runs the gate once more over the registered events that follow the
// cursors this wave advanced (read again, as they are now) and over the
// items whose gap closed while they were registered; the latter take the
// outcome of that pass. It stops at maxGateDepth passes, and once the
// deadline is near (late).
func (p *Processor) next(ctx context.Context, items []Item, w *wave, m *metrics.Recorder, depth int, late func() bool) {
	if depth+1 >= maxGateDepth || ctx.Err() != nil || late() {
		return
	}
	var more []Item
	var chainedBy []int // for each of more's chained events, the item it counts on
	if len(w.chain) > 0 {
		more, chainedBy = p.holdChained(ctx, w)
	}
	first := len(more)
	for _, i := range w.again {
		more = append(more, Item{Record: items[i].Record, Malformed: items[i].Malformed})
	}
	if len(more) == 0 {
		return
	}
	outcomes := p.process(ctx, more, m, depth+1, late)
	for k, i := range chainedBy {
		if o := outcomes[k]; o.Status == Published {
			w.outcomes[i].Chained = append(w.outcomes[i].Chained, more[k].Record.EventID)
		}
		w.outcomes[i].Chained = append(w.outcomes[i].Chained, outcomes[k].Chained...)
	}
	for k, i := range w.again {
		w.outcomes[i] = outcomes[first+k]
	}
}

// holdChained reads the events registered after the cursors this wave
// advanced (w.chain) and holds the pending ones (outbox.Table.Hold), as the
// reconciler holds what it publishes: an event that another invocation
// holds (a reconciler run that found it on its own) is that invocation's
// to publish, and is not published twice. It returns the held items and,
// for each, the item whose publishing chained it.
func (p *Processor) holdChained(ctx context.Context, w *wave) (held []Item, chainedBy []int) {
	found, errs := p.Cursors.Current(ctx, w.chain)
	var records []outbox.Record
	var by []int
	for k, item := range found {
		if errs[k] == nil && item != nil {
			records, by = append(records, Parse(p.Layout, item).Record), append(by, w.chainedBy[k])
		}
	}
	if len(records) == 0 {
		return nil, nil
	}
	now := p.now()
	for k, h := range p.Cursors.Hold(ctx, records, p.Hold.Within(ctx, now)) {
		if h.Err == nil && h.Item != nil {
			it := Parse(p.Layout, h.Item)
			it.Held = true
			held, chainedBy = append(held, it), append(chainedBy, by[k])
		}
	}
	return held, chainedBy
}

// settle records that item i's event is published, for the writing wave
// to mark or delete.
func (w *wave) settle(i int, r outbox.Record) {
	w.outcomes[i] = Outcome{Status: Published, EventPublished: true}
	w.published = append(w.published, r)
	w.publishedIdx = append(w.publishedIdx, i)
}

// wait leaves item i pending: it follows a gap in its key's sequence at
// missing. A hold taken on it is released; an item without the pending
// index keys gets them, so that the reconciler finds it.
func (p *Processor) wait(items []Item, i int, l *lane, missing int64, w *wave) {
	o := Outcome{Status: Waiting, Blocked: l.cursor.IsBlocked() && missing == l.cursor.Next(), Missing: missing}
	switch {
	case o.Blocked:
		o.Reason = fmt.Sprintf("waits behind the FAILED event %d of ordering key %q", missing, l.key)
	case !l.cursor.Exists:
		o.Reason = fmt.Sprintf("waits for event %d of ordering key %q, which has no cursor yet", missing, l.key)
	default:
		o.Reason = fmt.Sprintf("waits for event %d of ordering key %q to be published", missing, l.key)
	}
	w.outcomes[i] = o
	p.unpublished(items, i, w)
}

// release gives back the hold of item i, if this invocation took one.
func (w *wave) release(items []Item, i int) {
	if items[i].Held {
		w.released = append(w.released, items[i].Record)
	}
}
