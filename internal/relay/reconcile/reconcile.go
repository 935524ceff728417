// Package reconcile sweeps the sparse pending index for events the stream
// path has not published (a relay outage longer than the stream's retention,
// records dropped after the retries ran out, items marked while a write
// failed) and publishes them like the stream path does. A table without the
// pending index (outbox.Table.NoPendingIndex) is swept with a parallel Scan
// instead, its segments sized to the table.
//
// Before publishing an item, the reconciler holds it with a conditional
// update (outbox.Table.Hold): of the reconciler and a stream invocation that
// both see the item, only the one whose hold succeeds publishes it. The hold
// of an unordered event ends at a time that grows with the item's attempts,
// which is also its backoff: an item whose publishing or marking keeps
// failing is tried again later and later, not on every run; that of an
// ordered event ends with the run (store.HoldPolicy.UntilWithin). An item
// that cannot be held (the role may not update the table) is not published
// at all, since it could not be marked either.
package reconcile

import (
	"cmp"
	"context"
	"log/slog"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/batch"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/logging"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/store"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Defaults of a Reconciler.
const (
	DefaultPageSize = 100
	// OrderedPageSize is the largest Limit of an ordered sweep's Query,
	// which publishes nothing while it reads (ordered.go): a page is what
	// DynamoDB returns in one call, at most 1 MB, so that the sweep takes
	// as few round trips as the items' size and the run's bound allow
	// (orderedPageSize). The pages in flight when the run's bounds are
	// reached (keepsNoMore) are kept beyond them: Concurrency pages of
	// 1 MB at most.
	OrderedPageSize    = 1000
	DefaultConcurrency = 4
	DefaultStopMargin  = 5 * time.Second
)

// ReadAPI is the part of the DynamoDB client the reconciler uses to find
// pending items.
type ReadAPI interface {
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// Holder holds items before they are published; *store.Store is one.
type Holder interface {
	Hold(ctx context.Context, records []outbox.Record, until func(outbox.Record) time.Time) []store.Held
}

// Processor publishes and settles items; *batch.Processor is one.
type Processor interface {
	Process(ctx context.Context, items []batch.Item, m *metrics.Recorder) []batch.Outcome
}

// Reconciler queries every shard of the pending index (or scans every
// segment of a table without it) for old pending events and processes them,
// page by page, in rounds of one page of every shard or segment, several
// at once.
type Reconciler struct {
	Client ReadAPI
	Table  outbox.Table
	// Shards is the number of pending index shards swept, 0 to Shards-1; 0
	// means Table.PendingShards. It exceeds that after the shard count was
	// lowered, while the higher shards may still hold items.
	Shards    int
	Processor Processor
	Holder    Holder
	// Hold is how long a held item stays the reconciler's.
	Hold store.HoldPolicy
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// PageSize is the Limit of each Query; 0 means DefaultPageSize, or in
	// ordered mode the run's orderedPageSize.
	PageSize int32
	// Concurrency is the number of shards swept at once; 0 means
	// DefaultConcurrency.
	Concurrency int
	// StopMargin is the time kept before the deadline: no page is started
	// with less left. 0 means DefaultStopMargin. It is capped at a quarter
	// of the time the invocation has when Run starts.
	StopMargin time.Duration
	// LeaseRenewal is how often the run renews its leases in the
	// background; 0 means DefaultLeaseRenewal.
	LeaseRenewal time.Duration
	// Retry bounds the retries of throttled queries.
	Retry retry.Policy
	Log   *slog.Logger
	// Ordered, when not nil, is the cursor store of an ordered relay: the
	// ordered events that wait for an earlier event of their key are tried
	// again at the end of the run (ordered.go).
	Ordered Cursors
	// Leases, when not nil, writes the lease items: the run sweeps only the
	// shards it leases (leases.go); nil sweeps every shard.
	Leases LeaseAPI
	// LeaseRegion is the Region of a multi-Region pipeline's reconciler,
	// whose leases are its own (outbox.LeaseShard); "" for a single-Region
	// pipeline.
	LeaseRegion string
	// MaxWorkers bounds the runs that sweep at once, workers included;
	// 0 or 1 starts no worker.
	MaxWorkers int
	// Invoker starts workers; nil starts none.
	Invoker Invoker
	// MaxEventsPerSecond is the publishing rate of all runs together,
	// divided among MaxWorkers (pace.go); 0 is no limit.
	MaxEventsPerSecond float64
	// MaxKept bounds the ordered events a run keeps to publish after its
	// sweep; 0 means KeptPerSecond for each second the run has, from
	// MinKept to MaxWaiting, which also bounds it. MaxKeptBytes bounds
	// their size in memory (recordBytes); 0 means DefaultMaxKeptBytes.
	MaxKept      int
	MaxKeptBytes int64
}

// Report is the result of a run, returned as the invocation's response.
type Report struct {
	// Found counts pending events older than the minimum age (in ordered
	// mode, those held by a relay too).
	Found int `json:"found"`
	// Published counts events published and marked (or deleted), those
	// registered on a cursor and published after the event they waited
	// for included (batch.Outcome.Chained).
	Published int `json:"published"`
	// Failed counts events left pending after publishing or marking failed;
	// the next run tries them again.
	Failed int `json:"failed"`
	// Poison counts events that can never be published, marked FAILED.
	Poison int `json:"poison"`
	// Skipped counts items found that were no longer pending.
	Skipped int `json:"skipped"`
	// Complete is true when every shard was swept to its end.
	Complete bool `json:"complete"`
	// RemainingShards counts shards not swept to their end, because the
	// deadline came near or a query failed.
	RemainingShards int `json:"remainingShards"`
	// OldestPendingAgeSeconds is the age of the oldest pending event found.
	OldestPendingAgeSeconds float64 `json:"oldestPendingAgeSeconds"`
	// MinAgeSeconds is the minimum age the run used.
	MinAgeSeconds float64 `json:"minAgeSeconds"`
	// Segments counts the shards queried, or the segments of the Scan of a
	// table without the pending index.
	Segments int `json:"segments"`
	// ReadUnits are the read capacity units the queries or scans consumed,
	// as DynamoDB reported them.
	ReadUnits float64 `json:"readUnits"`
	// Waiting counts ordered events left pending because an earlier event
	// of their key is not published yet: held behind their key, they are
	// neither published, failed nor poison (metrics.EventsWaiting).
	Waiting int `json:"waiting"`
	// Blocked counts those of them whose key waits behind a FAILED event.
	Blocked int `json:"blocked"`
	// PublishRate is Published per second of the run (metrics.PublishRate).
	PublishRate float64 `json:"publishRate"`
	// Workers counts the workers the run started, its successor included.
	Workers int `json:"workers"`
	// ShardsLeased counts the shards the run leased.
	ShardsLeased int `json:"shardsLeased"`
	// Continued is true when the run's deadline came with shards still
	// pending and it started a successor.
	Continued bool `json:"continued"`
}

// Add adds o, the report of another run of the same invocation (another
// Region's events), to r: its counts and its oldest age; r is complete
// only if both are. The rate is the caller's to work out over both.
func (r *Report) Add(o Report) {
	r.Found += o.Found
	r.Published += o.Published
	r.Failed += o.Failed
	r.Poison += o.Poison
	r.Skipped += o.Skipped
	r.Complete = r.Complete && o.Complete
	r.RemainingShards += o.RemainingShards
	r.OldestPendingAgeSeconds = max(r.OldestPendingAgeSeconds, o.OldestPendingAgeSeconds)
	r.Segments += o.Segments
	r.ReadUnits += o.ReadUnits
	r.Waiting += o.Waiting
	r.Blocked += o.Blocked
	r.Workers += o.Workers
	r.ShardsLeased += o.ShardsLeased
	r.Continued = r.Continued || o.Continued
}

// Run sweeps every shard or segment for events pending since before
// now - minAge and not held, holds them and processes them. It stops
// starting pages when the deadline comes near.
func (r *Reconciler) Run(ctx context.Context, minAge time.Duration, m *metrics.Recorder) Report {
	now := r.now()
	cutoff := now.Add(-minAge)
	margin := r.StopMargin
	if margin <= 0 {
		margin = DefaultStopMargin
	}
	if deadline, ok := ctx.Deadline(); ok {
		margin = min(margin, time.Until(deadline)/4)
	}
	concurrency := r.Concurrency
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}

	report := Report{MinAgeSeconds: minAge.Seconds()}
	var oldest int64         // pendingSince of the oldest event found, Unix ms
	published := &eventSet{} // the events published in this run
	pace := newPacer(r.runRate())
	if pace != nil {
		if deadline, ok := ctx.Deadline(); ok {
			pace.stopBy = deadline.Add(-margin)
		}
		ctx = publish.WithPace(ctx, pace)
	}
	waiting := sweepResult{published: published, pace: pace} // the ordered events that wait, of every shard
	keep := r.maxKept(ctx)                                   // the most the sweeps keep (collect)
	sources := r.sources(ctx, cutoff, now)
	report.Segments = len(sources)
	sweeps := newSweepers(sources, sweepResult{published: published, pace: pace, keep: keep, orderedPage: orderedPageSize(keep, len(sources)),
		collected: &atomic.Int64{}, collectedBytes: &atomic.Int64{}})
	leases := r.lease(ctx, sweeps, minAge)
	stopRenewing := leases.keepAlive(ctx, r.LeaseRenewal)
	r.sweepInTurns(ctx, sweeps, concurrency, r.sweepMargin(ctx, margin), m, leases)
	for _, sw := range sweeps {
		s := sw.res
		report.Found += s.found
		report.Published += s.publishedCount
		report.Failed += s.failed
		report.Poison += s.poison
		report.Skipped += s.skipped
		report.ReadUnits += s.readUnits
		waiting.waiting = append(waiting.waiting, s.waiting...)
		waiting.blocked += s.blocked
		var all []batch.Item
		for k, low := range s.lowest {
			all = append(all, batch.Item{Record: outbox.Record{OrderingKey: k, Sequence: low}})
		}
		waiting.note(all)
		if !s.complete {
			report.RemainingShards++
		}
		if s.oldest > 0 && (oldest == 0 || s.oldest < oldest) {
			oldest = s.oldest
		}
	}
	waiting.waiting = longestPending(waiting.waiting, keep)
	report.Complete = report.RemainingShards == 0
	if r.Ordered != nil {
		r.retryWaiting(ctx, waiting, minAge, margin, m, &report)
	}
	stopRenewing()
	leases.finish(ctx, published, &report)
	if oldest > 0 {
		report.OldestPendingAgeSeconds = now.Sub(time.UnixMilli(oldest)).Seconds()
	}
	m.Add(metrics.PendingFound, report.Found)
	if r.Ordered != nil {
		m.Add(metrics.EventsWaiting, report.Waiting)
	}
	m.Observe(metrics.OldestPendingAge, metrics.Seconds, report.OldestPendingAgeSeconds)
	if elapsed := r.now().Sub(now).Seconds(); elapsed > 0 {
		report.PublishRate = float64(report.Published) / elapsed
	}
	m.Observe(metrics.Backlog, metrics.Count, float64(report.Found))
	m.Observe(metrics.PublishRate, metrics.CountPerSecond, report.PublishRate)
	return report
}

type sweepResult struct {
	found, publishedCount, failed, poison, skipped int
	// published are the events the run published, shared by its sweeps:
	// an event published after the one it waited for (batch.Outcome.Chained)
	// may also be on a later page, settled there, and counts once.
	published *eventSet
	// pace is the run's publishing rate, shared by its sweeps.
	pace *pacer
	// collected counts the events the run's ordered sweeps kept, shared by
	// them (collect).
	collected *atomic.Int64
	// collectedBytes is their size in memory (recordBytes), shared alike;
	// keep the most events they keep (maxKept).
	collectedBytes *atomic.Int64
	keep           int
	// orderedPage is the Limit of an ordered sweep's queries
	// (orderedPageSize).
	orderedPage int32
	complete    bool
	oldest      int64
	readUnits   float64
	// waiting are the ordered events that wait for an earlier one, blocked
	// counts those of them behind a FAILED event.
	waiting []batch.Item
	blocked int
	// lowest is, per ordering key, the lowest sequence found pending.
	lowest map[string]int64
}

// note notes the lowest sequence of each key among the ordered items.
func (res *sweepResult) note(items []batch.Item) {
	for _, it := range items {
		r := it.Record
		if r.Sequence == 0 {
			// A broken item counts when its key and sequence can be read
			// (batch.Malformed): it holds its key like any other event.
			continue
		}
		if res.lowest == nil {
			res.lowest = map[string]int64{}
		}
		if low, ok := res.lowest[r.OrderingKey]; !ok || r.Sequence < low {
			res.lowest[r.OrderingKey] = r.Sequence
		}
	}
}

// newSweepers returns the sweepers of sources, each result starting as
// shared, whose counters they share.
func newSweepers(sources []source, shared sweepResult) []*sweeper {
	sweeps := make([]*sweeper, len(sources))
	for i, src := range sources {
		sweeps[i] = &sweeper{src: src, shard: i, res: shared}
	}
	return sweeps
}

// sweeper is the sweep of one shard or segment: where its next page
// starts, and what it found.
type sweeper struct {
	src   source
	shard int
	start map[string]types.AttributeValue
	res   sweepResult
	// leased is true while the run holds the shard's lease (or without
	// leases); lease is the run's leases, nil without.
	leased bool
	lease  *leaseRun
	// tried is true once the run tried to lease the shard.
	tried bool
	// reached is the pending time (Unix ms) of the last event of its
	// last page: how far in pending time the sweep has read the shard.
	reached int64
}

// sweepInTurns sweeps every source a page at a time, in rounds: a round
// processes the next page of every source not yet swept (concurrency pages
// at once), and the next round starts once it is done. A run that cannot
// sweep everything has so read the oldest pages of every source rather
// than some sources whole: the events of an ordering key are in every
// shard, and its oldest ones are found together.
//
// Only the leased sources are swept. A scheduled run that may start
// workers first sweeps a page of its own share: when those pages are
// full, the other shards most likely hold a backlog too (events are
// spread over the shards evenly), and it hands them to workers at once
// (leaseRun.fanOut) rather than after a round of every shard at its own
// share of the rate. Otherwise the first round goes on with the other
// shards, and the run may still hand sources to workers after it.
func (r *Reconciler) sweepInTurns(ctx context.Context, sweeps []*sweeper, concurrency int, margin time.Duration, m *metrics.Recorder, leases *leaseRun) {
	var active []*sweeper
	for _, s := range sweeps {
		if s.leased {
			active = append(active, s)
		}
	}
	published := sweeps[0].res.published
	fanned := false
	if leases.mayFanOut(len(active)) {
		own, others := active[:leases.share], active[leases.share:]
		if more := r.sweepRound(ctx, own, concurrency, margin, m); len(more) > 0 {
			active, fanned = leases.fanOut(ctx, append(more, others...), published), true
		} else {
			active = others
		}
	}
	for round := 0; len(active) > 0; round++ {
		if r.Ordered != nil && round > 0 {
			active = r.sweepBehind(ctx, active, concurrency, margin, m)
			continue
		}
		active = r.sweepRound(ctx, active, concurrency, margin, m)
		if round == 0 && !fanned {
			active = leases.fanOut(ctx, active, published)
		}
		active = leases.refill(ctx, sweeps, active)
	}
}

// sweepRound processes the next page of every source of active,
// concurrency at once, and returns those that have more to sweep.
func (r *Reconciler) sweepRound(ctx context.Context, active []*sweeper, concurrency int, margin time.Duration, m *metrics.Recorder) []*sweeper {
	more := make([]bool, len(active))
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for i, s := range active {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			more[i] = r.sweepPage(ctx, s, margin, m)
		})
	}
	wg.Wait()
	var next []*sweeper
	for i, s := range active {
		if more[i] {
			next = append(next, s)
		}
	}
	return next
}

// sweepBehind processes the next page of the sources of active that the
// sweep has read least far in pending time (the half of them, at most
// concurrency), and returns active without those that have no more to
// sweep. An ordered run sweeps so after its first round: a page of each
// shard at a time would read the busiest shards least far in time, and the
// events a run keeps (MaxWaiting) would not be the longest pending of all,
// but of each shard alike: a key's events would be cut at the time the
// busiest shard was read to, and its run of events to publish with them.
func (r *Reconciler) sweepBehind(ctx context.Context, active []*sweeper, concurrency int, margin time.Duration, m *metrics.Recorder) []*sweeper {
	slices.SortStableFunc(active, func(a, b *sweeper) int { return cmp.Compare(a.reached, b.reached) })
	n := min(concurrency, max(1, len(active)/2))
	more := r.sweepRound(ctx, active[:n], concurrency, margin, m)
	return append(more, active[n:]...)
}

// sweepPage processes the next page of s, and reports whether s has more
// to sweep: false once it is swept to its end, a query failed, or no page
// may be started within margin of the deadline.
func (r *Reconciler) sweepPage(ctx context.Context, s *sweeper, margin time.Duration, m *metrics.Recorder) bool {
	if !retry.TimeLeft(ctx, margin) {
		r.log().InfoContext(ctx, "reconcile stopped before the deadline", "source", s.src.name)
		return false
	}
	if !s.lease.renew(ctx, s) {
		return false
	}
	if r.Ordered != nil && r.keepsNoMore(&s.res) {
		// The run keeps no more: the rest of the shard is its successor's.
		return false
	}
	pg, err := s.src.page(ctx, r.pageSize(&s.res), s.start)
	if err != nil {
		r.log().ErrorContext(ctx, "finding pending items failed", "source", s.src.name, "error", err)
		return false
	}
	res := &s.res
	res.readUnits += pg.readUnits
	items := make([]batch.Item, len(pg.items))
	for i, raw := range pg.items {
		items[i] = batch.ParsePending(r.Table, raw)
		since := pendingSince(items[i].Record)
		if since > 0 && (res.oldest == 0 || since < res.oldest) {
			res.oldest = since
		}
		s.reached = max(s.reached, since)
	}
	res.found += len(items)
	res.note(items)
	switch {
	case r.Ordered != nil:
		res.collect(items)
	case len(items) > 0:
		r.process(ctx, r.hold(ctx, items), m, res)
	}
	if len(pg.last) == 0 {
		res.complete = true
		return false
	}
	s.start = pg.last
	return true
}

// pageSize is the Limit of the sweep's next Query. An ordered sweep
// publishes nothing while it reads, so its pages are as large as the
// run's bound allows (orderedPageSize); an unordered sweep publishes each
// page, in no longer than maxPageTime at the run's rate (pacer.pageSize).
func (r *Reconciler) pageSize(res *sweepResult) int32 {
	if r.Ordered != nil {
		return cmp.Or(r.PageSize, res.orderedPage)
	}
	return res.pace.pageSize(cmp.Or(r.PageSize, DefaultPageSize))
}

// orderedPageSize is the Limit of the queries of an ordered run that keeps
// keep events of sources shards: OrderedPageSize, or fewer, so that a page
// of every shard takes at most half of keep, and at least
// minOrderedPageSize (2,560 events of 256 shards, within MinKept).
// The sweep reads a page of each shard first, then the shards it has read
// least far (sweepBehind), and stops at keep: pages that took it all in
// the first round would leave shards unread, and every key whose next
// event is on one of them waiting, run after run, with its later events
// kept in its stead.
func orderedPageSize(keep, sources int) int32 {
	return int32(min(OrderedPageSize, max(minOrderedPageSize, keep/(2*max(sources, 1)))))
}

// minOrderedPageSize is the least Limit of an ordered sweep's queries.
const minOrderedPageSize = 10

func pendingSince(rec outbox.Record) int64 {
	if rec.PendingSince > 0 {
		return rec.PendingSince
	}
	if !rec.OccurredAt.IsZero() {
		return rec.OccurredAt.UnixMilli()
	}
	return 0
}

// hold takes the pending items among items (outbox.Table.Hold) and returns
// items with each held one replaced by its current state, and the others
// marked to skip or as unavailable.
func (r *Reconciler) hold(ctx context.Context, items []batch.Item) []batch.Item {
	now := r.now()
	var idx []int
	var records []outbox.Record
	for i, it := range items {
		if it.Malformed == nil && it.Record.Status == outbox.StatusPending {
			idx = append(idx, i)
			records = append(records, it.Record)
		}
	}
	if len(records) == 0 {
		return items
	}
	held := r.Holder.Hold(ctx, records, r.Hold.Within(ctx, now))
	for k, i := range idx {
		switch h := held[k]; {
		case h.Err != nil:
			items[i].Unavailable = h.Err
		case h.Item == nil:
			items[i].Skip = "no longer pending, held by another invocation, or gone"
		default:
			items[i] = batch.ParsePending(r.Table, h.Item)
			items[i].Held = true
		}
	}
	return items
}

// processRunnable holds and processes the ordered items the gate can
// publish now (runnable), and keeps the others, unheld, among the waiting
// events. The keys with more than FirstStepRanks runnable events (long) are
// processed beside the others (short), each part in steps (inSteps).
func (r *Reconciler) processRunnable(ctx context.Context, items []batch.Item, margin time.Duration, m *metrics.Recorder, res *sweepResult) {
	now, waiting := r.runnable(ctx, items)
	res.wait(waiting)
	short, long := byRunLength(now)
	parts := []sweepResult{{published: res.published, pace: res.pace}, {published: res.published, pace: res.pace}}
	var wg sync.WaitGroup
	for n, part := range [][]batch.Item{short, long} {
		wg.Go(func() { r.processInSteps(ctx, inSteps(part), margin, m, &parts[n]) })
	}
	wg.Wait()
	for _, part := range parts {
		res.add(part)
	}
}

// A step is done when its last key's events are: a thousand keys of a
// hundred events each, paced, take far longer than a hot key's first
// FirstStepRanks events, one round trip each. Were the hot key's next step
// to wait for them, it would publish nothing for most of the first step.
// So the keys whose events fill more than the first step (long, the only
// ones in the later steps) go through their steps beside the others, which
// all fit in one: neither waits for the other, and a key is in one part
// only, so its order is the gate's as before.

// byRunLength splits items into those of the keys with at most
// FirstStepRanks events among them (and those without a sequence), and
// those of the keys with more, each in the order of items.
func byRunLength(items []batch.Item) (short, long []batch.Item) {
	count := map[string]int{}
	for _, it := range items {
		if it.Record.Sequence > 0 {
			count[it.Record.OrderingKey]++
		}
	}
	for _, it := range items {
		if it.Record.Sequence > 0 && count[it.Record.OrderingKey] > FirstStepRanks {
			long = append(long, it)
		} else {
			short = append(short, it)
		}
	}
	return short, long
}

// processInSteps holds and processes steps one after the other, each
// step's holds taken while the step before is published, until margin
// before the deadline: the steps not held by then wait.
func (r *Reconciler) processInSteps(ctx context.Context, steps [][]batch.Item, margin time.Duration, m *metrics.Recorder, res *sweepResult) {
	if len(steps) == 0 {
		return
	}
	held := make(chan []batch.Item, 1)
	holdStep := func(step []batch.Item) { held <- r.hold(ctx, step) }
	go holdStep(steps[0])
	for n := range steps {
		step := <-held
		next := n+1 < len(steps) && retry.TimeLeft(ctx, margin)
		if next {
			go holdStep(steps[n+1])
		}
		r.process(ctx, step, m, res)
		if !next {
			for _, later := range steps[n+1:] {
				res.wait(later)
			}
			return
		}
	}
}

// Holding a backlog's runnable events takes a write each: thousands before
// the first is published, while a hot key's publishing, one round trip per
// event, is what the run's time is made of. So the events are held and
// processed in steps by their rank in their key, each step held while the
// step before is published: first each key's next FirstStepRanks events
// (most keys' all), then the next 2×FirstStepRanks, then 4×, and so on.
// A later step holds only the hot keys' events, twice as many as the step
// before publishes one round trip each, far fewer writes than that step
// takes round trips; the hot keys go through their steps beside the other
// keys' one (processRunnable), so that no step waits for theirs. The
// gate reads the cursors again at each step, which the step before
// advanced: a cursor read and an advance more per step, a few steps per
// run.

// FirstStepRanks is the number of each key's events in the first step of
// processRunnable.
const FirstStepRanks = 128

// inSteps splits the runnable items of processRunnable, each key's in order
// of sequence, into steps by their rank in their key: ranks below
// FirstStepRanks, then the next 2×FirstStepRanks, and so on. Items without
// a sequence go in the first step.
func inSteps(items []batch.Item) [][]batch.Item {
	rank := map[string]int{}
	var steps [][]batch.Item
	for _, it := range items {
		step := 0
		if it.Record.Sequence > 0 {
			k := it.Record.OrderingKey
			step = bits.Len(uint(rank[k]/FirstStepRanks+1)) - 1
			rank[k]++
		}
		for len(steps) <= step {
			steps = append(steps, nil)
		}
		steps[step] = append(steps[step], it)
	}
	return steps
}

// add adds to res what part, a part of the same pass, published, failed
// and left waiting; both count the run's events in the same set.
func (res *sweepResult) add(part sweepResult) {
	res.publishedCount += part.publishedCount
	res.failed += part.failed
	res.poison += part.poison
	res.skipped += part.skipped
	res.blocked += part.blocked
	res.wait(part.waiting)
}

// wait keeps items among the waiting events, up to MaxWaiting.
func (res *sweepResult) wait(items []batch.Item) {
	for _, it := range items {
		if len(res.waiting) == MaxWaiting {
			return
		}
		res.waiting = append(res.waiting, batch.Item{Record: it.Record, Malformed: it.Malformed})
	}
}

func (r *Reconciler) process(ctx context.Context, items []batch.Item, m *metrics.Recorder, res *sweepResult) {
	outcomes := r.Processor.Process(ctx, items, m)
	res.pace.observe(outcomes)
	for i, o := range outcomes {
		for _, id := range o.Chained {
			res.countPublished(id)
		}
		switch o.Status {
		case batch.Waiting:
			if o.Blocked {
				res.blocked++
			}
			res.wait(items[i : i+1])
		case batch.Published:
			res.countPublished(items[i].Record.EventID)
		case batch.Poison:
			res.poison++
		case batch.LeftPending:
			res.failed++
		case batch.Skipped:
			res.skipped++
		}
	}
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler) log() *slog.Logger { return logging.OrDiscard(r.Log) }

// countPublished counts the event id published, once per run.
func (res *sweepResult) countPublished(id string) {
	if res.published.add(id) {
		res.publishedCount++
	}
}

// eventSet is a set of event ids, safe for concurrent use; a nil set
// takes every id as new.
type eventSet struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

// add adds id and reports whether it was not in the set.
func (s *eventSet) add(id string) bool {
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ids[id]; ok {
		return false
	}
	if s.ids == nil {
		s.ids = map[string]struct{}{}
	}
	s.ids[id] = struct{}{}
	return true
}

// size is the number of ids in the set.
func (s *eventSet) size() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ids)
}
