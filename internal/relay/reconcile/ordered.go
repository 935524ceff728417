package reconcile

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/batch"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// In ordered mode the pages of a sweep hold the events of one key in any
// order, each shard its own: an event's predecessor may be on a later page,
// or on another shard's page. So an ordered run's sweep publishes nothing:
// it collects the events it finds (collect, up to MaxWaiting, then it stops
// and leaves the rest to its successor), and once the sweep ends it
// processes them, all keys at once, as long as a pass publishes anything:
// the gate sorts each key's events, so the first pass publishes a key's
// whole backlog in order, however its pages came, a hot key's events one
// round trip each while the other keys fill the same calls. A backlog
// larger than one run can sweep is taken oldest first: the shards are
// swept in rounds, a page of each at a time (sweepInTurns), so that each
// key's oldest events are found together, and the sweep stops in time to
// leave WaitingShare of the run to those passes.

// A run ends with its longest key: once a hot key has published what the
// run kept of it, one round trip an event, the run's successor sweeps
// again for its next events. So the more a run keeps, the longer a hot
// key publishes without a pause, the other keys' events filling the same
// calls; but what it keeps it must also hold and publish before its
// deadline, and a run that keeps more than that holds events it leaves
// to wait for their holds to end. So a run keeps KeptPerSecond events for
// each second it has, at least MinKept and at most MaxWaiting. What it
// keeps is in memory, whole items (the pending index projects every
// attribute): no more than Reconciler.MaxKeptBytes of them.

// MaxWaiting bounds the ordered events a run keeps in memory to publish
// after its sweep (Reconciler.MaxKept); those beyond it are its
// successor's. MinKept is what a run of 30 s or less keeps, and
// KeptPerSecond what a longer one keeps per second of its time: 50,000
// from 150 s.
const (
	MaxWaiting    = 50000
	MinKept       = 10000
	KeptPerSecond = MinKept / 30
)

// DefaultMaxKeptBytes is Reconciler.MaxKeptBytes unless set: an eighth of
// 256 MB, a small function's memory (KeptBytesFor).
const DefaultMaxKeptBytes = 32 << 20

// KeptBytesFor is Reconciler.MaxKeptBytes for a function of memoryMB
// megabytes: an eighth of it, the rest left to the holds' copies of the
// items, the publish calls and the runtime.
func KeptBytesFor(memoryMB int) int64 { return int64(memoryMB) << 20 / 8 }

// recordOverhead is what a kept event takes in memory besides its
// variable-length fields (recordBytes).
const recordOverhead = 512

// recordBytes estimates the memory a kept event takes.
func recordBytes(r outbox.Record) int64 {
	n := len(r.Detail) + len(r.PartitionKey) + len(r.SortKey) + len(r.EventID) + len(r.Source) +
		len(r.DetailType) + len(r.TraceHeader) + len(r.TraceParent) + len(r.TraceState) +
		len(r.LastError) + len(r.OrderingKey) + len(r.Origin)
	return int64(n + recordOverhead)
}

// collect keeps items among the ordered events to publish after the sweep,
// and counts them, and their bytes, for the run.
func (res *sweepResult) collect(items []batch.Item) {
	before := len(res.waiting)
	res.wait(items)
	var size int64
	for _, it := range res.waiting[before:] {
		size += recordBytes(it.Record)
	}
	res.collected.Add(int64(len(res.waiting) - before))
	res.collectedBytes.Add(size)
}

// keepsNoMore reports whether the run's ordered sweeps kept what it may.
func (r *Reconciler) keepsNoMore(res *sweepResult) bool {
	return res.collected.Load() >= int64(res.keep) || res.collectedBytes.Load() >= r.maxKeptBytes()
}

// maxKept is the most ordered events the run of ctx keeps: MaxKept when
// set, else KeptPerSecond for each second before its deadline, from
// MinKept to MaxWaiting.
func (r *Reconciler) maxKept(ctx context.Context) int {
	if r.MaxKept > 0 {
		return min(r.MaxKept, MaxWaiting)
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		return MaxWaiting
	}
	return min(max(int(KeptPerSecond*time.Until(deadline).Seconds()), MinKept), MaxWaiting)
}

func (r *Reconciler) maxKeptBytes() int64 {
	if r.MaxKeptBytes > 0 {
		return r.MaxKeptBytes
	}
	return DefaultMaxKeptBytes
}

// longestPending keeps the n events of items that have been pending longest, in
// that order. The shards' sweeps together may collect a little more than
// MaxWaiting (the pages in flight when the count was reached): the events
// left out are the newest, never those of the shards merged last. The
// oldest events are the ones each key needs first, and a shard that holds
// only old events (one above a lowered pending_index.shards) would
// otherwise lose them to the newer events of the busier shards, run after
// run, its keys never publishing their next event.
func longestPending(items []batch.Item, n int) []batch.Item {
	slices.SortStableFunc(items, func(a, b batch.Item) int {
		return cmp.Compare(pendingSince(a.Record), pendingSince(b.Record))
	})
	return items[:min(n, len(items))]
}

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
	BlockCursors(ctx context.Context, keys []string, sequences []int64) []error
}

// retryWaiting processes the waiting events of the sweep (last) again
// while a pass publishes something, and counts what still waits in
// report. After a complete sweep it first starts the cursor of keys whose
// events began before ordered mode (startCursors).
func (r *Reconciler) retryWaiting(ctx context.Context, last sweepResult, minAge, margin time.Duration, m *metrics.Recorder, report *Report) {
	if report.Complete && len(last.waiting) > 0 {
		r.startCursors(ctx, last, minAge, margin)
	}
	for pass := 0; pass < maxWaitingPasses && len(last.waiting) > 0 && retry.TimeLeft(ctx, margin); pass++ {
		res := sweepResult{published: last.published, pace: last.pace}
		// Those that can go now are held before they are published:
		// another run (one that took over a shard) may be processing them
		// too.
		r.processRunnable(ctx, last.waiting, margin, m, &res)
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
// A FAILED event between the cursor and the lowest pending event (one the
// sweep cannot see: FAILED items leave the pending index) is never passed
// over: the cursor moves up to it at most, and is blocked by it (held).
func (r *Reconciler) startCursors(ctx context.Context, sweep sweepResult, minAge, margin time.Duration) {
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
		if len(start) == maxStartKeys {
			break // the others wait for the next run
		}
		start, found, published = append(start, k), append(found, c), append(published, low-1)
	}
	if len(start) == 0 {
		return
	}
	failed, err := r.failedEvents(ctx, start, margin)
	if err != nil {
		r.log().WarnContext(ctx, "looking for FAILED events of the ordering keys to resume failed; their events wait for the next run", "keys", len(start), "error", err)
		return
	}
	held := r.held(found, start, failed, published)
	r.moveCursors(ctx, start, found, published, held)
}

// maxStartKeys bounds the keys a run resumes (startCursors): the operands
// of the IN of the Scan that looks for their FAILED events.
const maxStartKeys = 100

// held lowers published, for each key of start that has a FAILED event
// above its cursor (found) and not above published+1, to just below that
// event, and returns the sequence of the event that holds each key, or 0.
func (r *Reconciler) held(found []outbox.Cursor, start []string, failed map[string][]int64, published []int64) []int64 {
	held := make([]int64, len(start))
	for i, k := range start {
		for _, seq := range failed[k] {
			if seq > found[i].Published && seq <= published[i]+1 && (held[i] == 0 || seq < held[i]) {
				held[i] = seq
			}
		}
		if held[i] > 0 {
			published[i] = held[i] - 1
		}
	}
	return held
}

// moveCursors moves the cursor of each key of start from found to
// published (a key held at its next event needs no move), then blocks the
// held ones (held: the sequence of the FAILED event, or 0).
func (r *Reconciler) moveCursors(ctx context.Context, start []string, found []outbox.Cursor, published, held []int64) {
	var move []int
	for i := range start {
		if published[i] > found[i].Published || !found[i].Exists {
			move = append(move, i)
		}
	}
	moved := make([]bool, len(start))
	errs := r.Ordered.StartCursors(ctx, pick(start, move), pick(found, move), pick(published, move))
	for n, i := range move {
		if errs[n] != nil {
			r.log().WarnContext(ctx, "moving the cursor of an ordering key to its lowest pending event failed; its events wait for the next run", "orderingKey", start[i], "error", errs[n])
			continue
		}
		moved[i] = true
		r.log().InfoContext(ctx, "ordering key resumed at its lowest pending event: the events before it were published outside ordered mode",
			"orderingKey", start[i], "from", found[i].Published, "sequence", published[i]+1)
	}
	var block []int
	for i := range start {
		if held[i] > 0 && (moved[i] || !slices.Contains(move, i)) {
			block = append(block, i)
		}
	}
	for n, err := range r.Ordered.BlockCursors(ctx, pick(start, block), pick(held, block)) {
		i := block[n]
		if err != nil {
			r.log().WarnContext(ctx, "marking an ordering key held by its FAILED event failed; its events wait", "orderingKey", start[i], "sequence", held[i], "error", err)
			continue
		}
		r.log().WarnContext(ctx, "ordering key held by its FAILED event: its later events wait until it is requeued (outbox requeue) or skipped (outbox skip)",
			"orderingKey", start[i], "sequence", held[i])
	}
}

// pick returns the elements of s at the indexes idx.
func pick[T any](s []T, idx []int) []T {
	out := make([]T, len(idx))
	for n, i := range idx {
		out[n] = s[i]
	}
	return out
}

// failedEvents scans the table for the FAILED ordered events of keys, and
// returns the sequences of each key's, broken items included (batch.Readable).
// The Scan reads the whole table; it runs only when a key is to be resumed,
// and a key found held is blocked (moveCursors), so it is not resumed again.
// It gives up, with an error, when no page may start within margin of the
// deadline: no key is then resumed.
func (r *Reconciler) failedEvents(ctx context.Context, keys []string, margin time.Duration) (map[string][]int64, error) {
	names := map[string]string{"#status": outbox.AttrStatus, "#key": outbox.AttrOrderingKey}
	values := map[string]types.AttributeValue{":failed": &types.AttributeValueMemberS{Value: string(outbox.StatusFailed)}}
	operands := make([]string, len(keys))
	for i, k := range keys {
		operands[i] = fmt.Sprintf(":k%d", i)
		values[operands[i]] = &types.AttributeValueMemberS{Value: k}
	}
	in := &dynamodb.ScanInput{
		TableName:                 aws.String(r.Table.Name),
		FilterExpression:          aws.String("#status = :failed AND #key IN (" + strings.Join(operands, ", ") + ")"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}
	failed := map[string][]int64{}
	for {
		if !retry.TimeLeft(ctx, margin) {
			return nil, fmt.Errorf("the deadline came before the Scan of %s ended", r.Table.Name)
		}
		out, err := retried(ctx, r, func() (*dynamodb.ScanOutput, error) { return r.Client.Scan(ctx, in) })
		if err != nil {
			return nil, err
		}
		for _, item := range out.Items {
			if rec := r.Table.ReadableRecord(item); rec.Sequence > 0 {
				failed[rec.OrderingKey] = append(failed[rec.OrderingKey], rec.Sequence)
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return failed, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
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
