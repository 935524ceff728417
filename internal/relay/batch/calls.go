package batch

import (
	"container/heap"
	"context"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/store"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// A key's events go out one per call, each once the call that held the one
// before it answered. Rounds (every key's next event, then the next round
// once every call of the round answered) would make each event of a hot
// key wait for the slowest call of its round, and for the pace of every
// other key's events in it. So the calls are not in rounds: a key is ready
// again as soon as its own call answered, and the next call takes the
// ready keys with the most events left, up to a batch call's entries,
// while other calls are in flight (publish.DefaultConcurrency at most). A
// key is in one call at a time, so its events still reach the target one
// after the other, in order. The longest run sets when a batch is done, so
// it goes first; the others fill the calls beside it. The pace (a
// reconciler run's share of the target's quota) is taken before the call
// is made up, so that a key whose call just answered is not queued behind
// calls of other keys that wait for the pace.

// publishRuns publishes the runs of lanes, a key's next event once its
// previous one was accepted, and returns the retried entries. Once late
// says the deadline is near, a key's entries after its first are deferred.
// While calls are in flight, it records what was accepted (checkpoint).
func (p *Processor) publishRuns(ctx context.Context, items []Item, lanes []*lane, w *wave, m *metrics.Recorder, late func() bool) int {
	s := &sending{p: p, items: items, w: w, m: m, ready: &readyLanes{},
		answers: make(chan call), checkpoints: make(chan *checkpoint)}
	for _, l := range lanes {
		if len(l.run) > 0 {
			heap.Push(s.ready, l)
		}
	}
	for {
		for s.inFlight < publish.DefaultConcurrency && s.ready.Len() > 0 {
			want := min(publish.MaxBatchEntries, s.ready.Len())
			allowed := publish.Allow(ctx, want)
			for s.receive(false) {
				// Keys whose calls answered while the pace was waited
				// for are ready again, and may go first.
			}
			c := p.nextCall(items, s.ready, w, late, want)
			if len(c.records) == 0 {
				continue
			}
			s.inFlight++
			go func() {
				c.results = publish.PublishAllowed(ctx, p.Publisher, c.records, allowed)
				s.answers <- c
			}()
		}
		if s.recording == nil && s.inFlight > 0 {
			if s.recording = nextCheckpoint(lanes); s.recording != nil {
				go func(cp *checkpoint) {
					p.record(ctx, items, cp)
					s.checkpoints <- cp
				}(s.recording)
			}
		}
		if s.inFlight == 0 && s.recording == nil {
			return s.retried
		}
		s.receive(true)
	}
}

// sending is the state of publishRuns.
type sending struct {
	p           *Processor
	items       []Item
	w           *wave
	m           *metrics.Recorder
	ready       *readyLanes
	answers     chan call
	checkpoints chan *checkpoint
	inFlight    int
	// recording is the checkpoint in progress, if any.
	recording *checkpoint
	retried   int
}

// receive takes in a call's answer or a checkpoint's end, waiting for one
// when wait is true, and reports whether it took one.
func (s *sending) receive(wait bool) bool {
	if !wait && s.inFlight == 0 && s.recording == nil {
		return false
	}
	var c call
	var cp *checkpoint
	if wait {
		select {
		case c = <-s.answers:
		case cp = <-s.checkpoints:
		}
	} else {
		select {
		case c = <-s.answers:
		case cp = <-s.checkpoints:
		default:
			return false
		}
	}
	if cp != nil {
		s.recording = nil
		s.p.recorded(cp, s.w)
		return true
	}
	s.inFlight--
	s.retried += s.p.answered(s.items, c, s.ready, s.w, s.m)
	return true
}

// call is one publish call: the next entry of each of its lanes.
type call struct {
	lanes   []*lane
	records []outbox.Record
	results []publish.Result
}

// nextCall takes up to n ready lanes, those with the most events left
// first, and returns the call of their next entries. A lane whose next
// entry is broken is refused (it holds its key, as a rejected event does);
// one past its first entry once the deadline is near is deferred.
func (p *Processor) nextCall(items []Item, ready *readyLanes, w *wave, late func() bool, n int) call {
	var c call
	for len(c.lanes) < n && ready.Len() > 0 {
		l := ready.pop()
		next := l.accepted
		switch {
		case next > 0 && late():
			p.deferRun(items, l, next, w)
		case items[l.run[next][0]].Malformed != nil:
			p.refuse(items, l, next, Outcome{Status: Poison, Reason: items[l.run[next][0]].Malformed.Error(), Class: retry.ClassPoison}, w)
		default:
			c.lanes = append(c.lanes, l)
			c.records = append(c.records, items[l.run[next][0]].Record)
		}
	}
	return c
}

// answered records the results of call c: an accepted entry makes its
// lane ready for its next one; a failed or rejected one stops its lane.
// It returns the retried entries.
func (p *Processor) answered(items []Item, c call, ready *readyLanes, w *wave, m *metrics.Recorder) int {
	retried := 0
	at := p.now()
	for k, res := range c.results {
		l := c.lanes[k]
		next, i := l.accepted, l.run[l.accepted][0]
		retried += res.Retries
		switch res.Status {
		case publish.Published:
			l.accepted++
			m.Observe(metrics.PublishLatency, metrics.Milliseconds, float64(at.Sub(c.records[k].OccurredAt).Milliseconds()))
			if l.accepted < len(l.run) {
				heap.Push(ready, l)
			}
		case publish.Rejected:
			p.refuse(items, l, next, Outcome{Status: Poison, Reason: res.Reason, Class: res.Class}, w)
		default:
			p.unpublished(items, i, w)
			p.refuse(items, l, next, Outcome{Status: LeftPending, Reason: res.Reason, Class: res.Class, Hint: res.Hint, Deferred: res.Deferred}, w)
		}
	}
	return retried
}

// readyLanes are the lanes whose next entry may be sent, as a heap: the
// lane with the most entries left on top, then the key that sorts first.
type readyLanes []*lane

func (r readyLanes) Len() int      { return len(r) }
func (r readyLanes) Swap(a, b int) { r[a], r[b] = r[b], r[a] }

func (r readyLanes) Less(a, b int) bool {
	if la, lb := r[a].left(), r[b].left(); la != lb {
		return la > lb
	}
	return r[a].key < r[b].key
}

func (r *readyLanes) Push(x any) {
	if l, ok := x.(*lane); ok {
		*r = append(*r, l)
	}
}

func (r *readyLanes) Pop() any {
	old := *r
	l := old[len(old)-1]
	*r = old[:len(old)-1]
	return l
}

// pop takes the lane on top.
func (r *readyLanes) pop() *lane {
	l, _ := heap.Pop(r).(*lane)
	return l
}

// left is the number of entries of l's run not yet accepted.
func (l *lane) left() int { return len(l.run) - l.accepted }

// A batch's events are settled (marked or deleted) only once its keys'
// cursors record them, after its publishing: thousands of writes, after a
// backlog's hot key published its events one round trip each. So while
// calls are in flight, the events accepted so far are recorded at
// checkpoints, one at a time: the cursors are advanced over them, then
// their items are settled, while the next events go out. The order of
// publish, advance, settle holds for each event. A key is included once it
// has MinCheckpointEvents accepted events not yet recorded, or when its
// run is over (its last advance, which the end of the batch would make
// anyway), so that a checkpoint costs at most one cursor write for every
// MinCheckpointEvents events; one starts once it covers
// CheckpointEvents. An advance that fails leaves the key's events to the
// next checkpoint, or to the advance at the end of the batch.

// CheckpointEvents is the number of accepted events a checkpoint waits
// for; MinCheckpointEvents the least number of a key's it records while
// the key's run goes on.
const CheckpointEvents, MinCheckpointEvents = 200, 20

// checkpoint records the accepted events of some lanes while the others
// publish.
type checkpoint struct {
	lanes []*lane
	// to is, per lane, the accepted entries it records.
	to []int
	// cursors and errs are the advances' results, per lane.
	cursors []outbox.Cursor
	errs    []error
	// settleErrs are, per lane whose advance applied, the errors of the
	// writes that settled its entries from advanced to to.
	settleErrs [][]error
}

// nextCheckpoint returns the checkpoint of the lanes with accepted events
// to record, or nil while they are fewer than CheckpointEvents.
func nextCheckpoint(lanes []*lane) *checkpoint {
	cp := &checkpoint{}
	events := 0
	for _, l := range lanes {
		n := l.accepted - l.advanced
		over := l.stopped || l.accepted == len(l.run)
		if n > 0 && (over || n >= MinCheckpointEvents) {
			cp.lanes, cp.to = append(cp.lanes, l), append(cp.to, l.accepted)
			events += n
		}
	}
	if events < CheckpointEvents {
		return nil
	}
	return cp
}

// record advances the cursors of the checkpoint's lanes and settles the
// events each advance records. It runs beside the publishing, and changes
// only cp.
func (p *Processor) record(ctx context.Context, items []Item, cp *checkpoint) {
	moves := make([]store.CursorMove, len(cp.lanes))
	for n, l := range cp.lanes {
		moves[n] = l.move(cp.to[n])
	}
	cp.cursors, cp.errs = p.Cursors.AdvanceCursors(ctx, moves)
	var records []outbox.Record
	for n, l := range cp.lanes {
		if cp.errs[n] == nil {
			for _, entry := range l.run[l.advanced:cp.to[n]] {
				records = append(records, items[entry[0]].Record)
			}
		}
	}
	if len(records) == 0 {
		return
	}
	errs := p.recordPublished(ctx, records)
	cp.settleErrs = make([][]error, len(cp.lanes))
	for n, l := range cp.lanes {
		if cp.errs[n] == nil {
			k := cp.to[n] - l.advanced
			cp.settleErrs[n], errs = errs[:k], errs[k:]
		}
	}
}

// recorded gives the events a checkpoint settled their outcomes, and moves
// their lanes past them.
func (p *Processor) recorded(cp *checkpoint, w *wave) {
	for n, l := range cp.lanes {
		if cp.errs[n] != nil {
			continue
		}
		for k, entry := range l.run[l.advanced:cp.to[n]] {
			w.outcomes[entry[0]] = Outcome{Status: Published, EventPublished: true}
			if err := cp.settleErrs[n][k]; err != nil {
				w.outcomes[entry[0]] = p.storeFailure(err, true)
			}
			for _, d := range entry[1:] {
				w.copies = append(w.copies, [2]int{d, entry[0]})
			}
		}
		l.advanced, l.advancedCursor = cp.to[n], cp.cursors[n]
	}
}
