package reconcile

import (
	"context"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/batch"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// In ordered mode the pages of a sweep hold the events of one key in any
// order, each shard its own: an event whose predecessor is on a later page,
// or on another shard's page, waits when its page is processed. The
// reconciler keeps those events (up to MaxWaiting) and, once the sweep
// ends, processes them again, all keys at once, as long as that publishes
// anything: the gate sorts each key's events, so one more pass publishes a
// key's whole backlog in order, however its pages came. A backlog larger
// than one run can sweep is taken oldest first: the shards are swept in
// rounds, a page of each at a time (sweepInTurns), so that each key's
// oldest events are found together, and the sweep stops in time to leave
// WaitingShare of the run to those passes.

// MaxWaiting bounds the waiting events a run keeps in memory to try again;
// those beyond it wait for the next run.
const MaxWaiting = 10000

// maxWaitingPasses bounds the passes over the waiting events of a run.
const maxWaitingPasses = 8

// WaitingShare is the share of an ordered run's time, after the stop
// margin, that the sweep leaves to the passes over the waiting events: a
// sweep that used the whole run would leave them none, and a backlog
// larger than one run's sweep would then never be published, each run
// finding events whose predecessors it found too and publishing none.
const WaitingShare = 1.0 / 3

// sweepMargin is the time before the deadline from which the sweep starts
// no page: margin, and in ordered mode WaitingShare of the rest.
func (r *Reconciler) sweepMargin(ctx context.Context, margin time.Duration) time.Duration {
	deadline, ok := ctx.Deadline()
	if r.Ordered == nil || !ok {
		return margin
	}
	return margin + time.Duration(float64(max(time.Until(deadline)-margin, 0))*WaitingShare)
}

// MinStartAge is the least time a key's lowest waiting event has been
// pending before the reconciler moves the key's cursor up to it, whatever
// the run's minimum age (an operator's run has none): an event written
// just before may not be in the pending index yet, which is a global
// secondary index, read eventually consistent.
const MinStartAge = 10 * time.Minute

// Cursors is what the reconciler needs of the cursor items; *store.Store is
// one.
type Cursors interface {
	Cursors(ctx context.Context, keys []string) ([]outbox.Cursor, []error)
	StartCursors(ctx context.Context, keys []string, found []outbox.Cursor, published []int64) []error
}

// retryWaiting processes the waiting events of the sweep (last) again
// while a pass publishes something, and counts what still waits in
// report. After a complete sweep it first starts the cursor of keys whose
// events began before ordered mode (startCursors).
func (r *Reconciler) retryWaiting(ctx context.Context, last sweepResult, minAge, margin time.Duration, m *metrics.Recorder, report *Report) {
	if report.Complete && len(last.waiting) > 0 {
		r.startCursors(ctx, last, minAge)
	}
	for pass := 0; pass < maxWaitingPasses && len(last.waiting) > 0 && retry.TimeLeft(ctx, margin); pass++ {
		res := sweepResult{published: last.published}
		r.process(ctx, last.waiting, m, &res)
		report.Published += res.publishedCount
		report.Failed += res.failed
		report.Poison += res.poison
		last = res
		if res.publishedCount == 0 {
			break
		}
	}
	report.Waiting, report.Blocked = len(last.waiting), last.blocked
}

// startCursors moves the cursor of every key that waits for an event no
// pending item holds, up to the key's lowest pending event, when no FAILED
// event holds the key and its lowest waiting event has been pending for
// more than twice the minimum age. Such a key's earlier events were
// published before ordered mode was switched on (it has no cursor), or
// while it was off (its cursor stayed behind): the sweep found every
// pending event of the key, held ones included, and none lower, so the key
// resumes at its lowest instead of waiting forever for events that are
// gone. A young key is left alone: its first event may still be on its way.
func (r *Reconciler) startCursors(ctx context.Context, sweep sweepResult, minAge time.Duration) {
	keys, lowest := lowestWaiting(sweep.waiting)
	cursors, errs := r.Ordered.Cursors(ctx, keys)
	cutoff := r.now().Add(-max(2*minAge, MinStartAge)).UnixMilli()
	var start []string
	var found []outbox.Cursor
	var published []int64
	for i, k := range keys {
		low, ok := sweep.lowest[k]
		c := cursors[i]
		if !ok || errs[i] != nil || c.IsBlocked() || low <= c.Next() || pendingSince(lowest[k]) > cutoff {
			continue
		}
		start, found, published = append(start, k), append(found, c), append(published, low-1)
	}
	if len(start) == 0 {
		return
	}
	for i, err := range r.Ordered.StartCursors(ctx, start, found, published) {
		if err != nil {
			r.log().WarnContext(ctx, "moving the cursor of an ordering key to its lowest pending event failed; its events wait for the next run", "orderingKey", start[i], "error", err)
			continue
		}
		r.log().InfoContext(ctx, "ordering key resumed at its lowest pending event: the events before it were published outside ordered mode",
			"orderingKey", start[i], "from", found[i].Published, "sequence", published[i]+1)
	}
}

// lowestWaiting returns the distinct ordering keys of waiting, and the
// record of each key's lowest sequence.
func lowestWaiting(waiting []batch.Item) ([]string, map[string]outbox.Record) {
	var keys []string
	lowest := map[string]outbox.Record{}
	for _, it := range waiting {
		rec := it.Record
		low, ok := lowest[rec.OrderingKey]
		if !ok {
			keys = append(keys, rec.OrderingKey)
		}
		if !ok || rec.Sequence < low.Sequence {
			lowest[rec.OrderingKey] = rec
		}
	}
	return keys, lowest
}
