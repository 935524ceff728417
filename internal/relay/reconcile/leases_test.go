package reconcile_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/batch"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// workers is an Invoker that runs each worker in a goroutine, as Lambda
// runs an asynchronous invocation, with a reconciler of its own.
type workers struct {
	t       testing.TB
	newRun  func() *reconciler
	wg      sync.WaitGroup
	mu      sync.Mutex
	reports []reconcile.Report
}

type reconciler = reconcile.Reconciler

func (w *workers) StartWorker(_ context.Context, minAge time.Duration) error {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		r := w.newRun()
		r.Invoker = w
		rep := r.Run(reconcile.AsWorker(context.Background()), minAge, metrics.New())
		w.mu.Lock()
		defer w.mu.Unlock()
		w.reports = append(w.reports, rep)
	}()
	return nil
}

// wait waits for every worker started, successors included, within a
// bounded time, and returns their reports.
func (w *workers) wait() []reconcile.Report {
	w.t.Helper()
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		w.t.Fatal("the workers did not finish within 3 minutes")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reports
}

// publishedOnce checks that every record is PUBLISHED and was published
// exactly once.
func publishedOnce(t *testing.T, fake *relaytest.AWS, records []outbox.Record) {
	t.Helper()
	times := map[string]int{}
	for _, p := range fake.Published() {
		times[p.EventID]++
	}
	for _, rec := range records {
		if s := fake.Status(rec); s != string(outbox.StatusPublished) || times[rec.EventID] != 1 {
			t.Errorf("event %s: %s, published %d times; want PUBLISHED, once", rec.EventID, s, times[rec.EventID])
		}
	}
}

// TestLeaseOfAKilledRunExpires: a run killed while it held every shard's
// lease leaves them until they expire: a run within LeaseDuration sweeps
// nothing, the first one after takes them over and publishes everything.
func TestLeaseOfAKilledRunExpires(t *testing.T) {
	t.Parallel()
	const shards = 4
	table, fake, records := setup(t, shards, 40)
	for shard := range shards {
		if _, err := fake.UpdateItem(t.Context(), table.AcquireLease(outbox.LeaseShard{Shard: shard}, "killed", now, now.Add(reconcile.LeaseDuration))); err != nil {
			t.Fatal(err)
		}
	}
	at := now.Add(reconcile.LeaseDuration / 2)
	r := newReconcilerAt(table, fake, 10, "mark", func() time.Time { return at })
	r.Leases = fake
	if rep := r.Run(t.Context(), 5*time.Minute, metrics.New()); rep.ShardsLeased != 0 || rep.Found != 0 || rep.Complete {
		t.Errorf("while the leases last: %+v; want no shard leased, nothing found", rep)
	}
	at = now.Add(reconcile.LeaseDuration + time.Second)
	if rep := r.Run(t.Context(), 5*time.Minute, metrics.New()); rep.ShardsLeased != shards || rep.Published != len(records) || !rep.Complete {
		t.Errorf("after the leases expired: %+v; want %d shards leased, %d published", rep, shards, len(records))
	}
	publishedOnce(t, fake, records)
}

// nested runs another reconciler's run on its first Process call, while
// its own run holds the lease of the shard.
type nested struct {
	reconcile.Processor
	once  sync.Once
	other func()
}

func (n *nested) Process(ctx context.Context, items []batch.Item, m *metrics.Recorder) []batch.Outcome {
	n.once.Do(n.other)
	return n.Processor.Process(ctx, items, m)
}

// TestLeasesOfAnotherRegion: on a global table the lease items of another
// Region's reconciler replicate here; they lease that Region's shards, not
// this Region's, whose run leases every shard and publishes everything.
func TestLeasesOfAnotherRegion(t *testing.T) {
	t.Parallel()
	const shards = 4
	table, fake, records := setup(t, shards, 40)
	for shard := range shards {
		if _, err := fake.UpdateItem(t.Context(), table.AcquireLease(outbox.LeaseShard{Region: "us-east-1", Shard: shard}, "elsewhere", now, now.Add(reconcile.LeaseDuration))); err != nil {
			t.Fatal(err)
		}
	}
	r := newReconcilerAt(table, fake, 10, "mark", func() time.Time { return now })
	r.Leases, r.LeaseRegion = fake, "eu-west-1"
	if rep := r.Run(t.Context(), 5*time.Minute, metrics.New()); rep.ShardsLeased != shards || rep.Published != len(records) {
		t.Errorf("with another Region's leases live: %+v; want %d shards leased and %d published", rep, shards, len(records))
	}
	own := fake.Item(outbox.LeasePartitionKey(outbox.LeaseShard{Region: "eu-west-1", Shard: 0}), outbox.LeaseSortKey)
	if l, err := outbox.ParseLease(own); err != nil || l.Owner == "" {
		t.Errorf("the run's lease of shard 0 under its Region's key: %+v, %v", own, err)
	}
}

// TestTwoRunsOneShard: a run that starts while another holds the only
// shard's lease skips it; the holder publishes everything, once, and
// releases the lease for the next run.
func TestTwoRunsOneShard(t *testing.T) {
	t.Parallel()
	table, fake, records := setup(t, 1, 30)
	a := newReconciler(table, fake, 10)
	b := newReconciler(table, fake, 10)
	a.Leases, b.Leases = fake, fake
	var second reconcile.Report
	a.Processor = &nested{Processor: a.Processor, other: func() { second = b.Run(t.Context(), 5*time.Minute, metrics.New()) }}
	first := a.Run(t.Context(), 5*time.Minute, metrics.New())
	if second.ShardsLeased != 0 || second.Found != 0 {
		t.Errorf("the second run: %+v; want the shard skipped", second)
	}
	if first.ShardsLeased != 1 || first.Published != len(records) {
		t.Errorf("the first run: %+v; want the shard leased, %d published", first, len(records))
	}
	publishedOnce(t, fake, records)
	if third := b.Run(t.Context(), 5*time.Minute, metrics.New()); third.ShardsLeased != 1 || !third.Complete {
		t.Errorf("a run after: %+v; want the released shard leased", third)
	}
}

// TestWorkersSweepABacklog: a backlog larger than one run's share is
// published by the run and the workers it starts, each on its own shards,
// every event once. The run starts them as soon as its own share's first
// pages are full, having queried only that share, not after a page of
// every shard.
func TestWorkersSweepABacklog(t *testing.T) {
	t.Parallel()
	const shards, maxWorkers = 8, 4
	table, fake, records := setup(t, shards, 400)
	newRun := func() *reconciler {
		r := newReconciler(table, fake, 5)
		r.Leases, r.MaxWorkers = fake, maxWorkers
		return r
	}
	pool := &firstStart{workers: &workers{t: t, newRun: newRun}, fake: fake}
	r := newRun()
	r.Invoker = pool
	rep := r.Run(t.Context(), 5*time.Minute, metrics.New())
	reports := pool.wait()
	if rep.ShardsLeased != shards || rep.Workers != maxWorkers-1 || len(reports) != maxWorkers-1 {
		t.Fatalf("the run: %+v, %d workers ran; want %d shards leased, %d workers", rep, len(reports), shards, maxWorkers-1)
	}
	if share := shards / maxWorkers; pool.queries != share {
		t.Errorf("the first worker started after %d queries, want after the %d of the run's own share", pool.queries, share)
	}
	total := rep.Published
	for _, w := range reports {
		total += w.Published
		if w.Workers != 0 {
			t.Errorf("a worker: %+v; want no worker of its own", w)
		}
	}
	if total != len(records) {
		t.Errorf("%d published by the run and its workers, want %d", total, len(records))
	}
	publishedOnce(t, fake, records)
}

// TestWorkerGoesOnToTheShardsLeft: a worker leases one share, starting at
// a random shard; when that shard was already swept by another run, the
// worker goes on to the shards it has not tried, so the one shard that
// still holds events is published, whichever shard the worker tried first.
func TestWorkerGoesOnToTheShardsLeft(t *testing.T) {
	t.Parallel()
	const shards = 4
	for range 4 {
		table := outbox.Table{Name: "outbox", PendingShards: shards}.WithDefaults()
		fake := relaytest.New(t, table)
		var left []outbox.Record
		for _, r := range relaytest.Records(table, 80, 16) {
			if table.ShardFor(r.EventID) == shards-1 {
				left = append(left, r)
			}
		}
		fake.PutRecords(left)
		r := newReconciler(table, fake, 10)
		r.Leases, r.MaxWorkers = fake, shards
		rep := r.Run(reconcile.AsWorker(t.Context()), 5*time.Minute, metrics.New())
		if len(left) == 0 || rep.Published != len(left) {
			t.Fatalf("a worker with %d events on the last shard only: %+v; want them all published", len(left), rep)
		}
		publishedOnce(t, fake, left)
	}
}

// TestSuccessorGoesOn: a run whose deadline comes while its shard still
// holds pending events starts a successor, which publishes the rest; with
// one worker at most, it starts none.
func TestSuccessorGoesOn(t *testing.T) {
	t.Parallel()
	for _, maxWorkers := range []int{2, 1} {
		table, fake, records := setup(t, 1, 60)
		newRun := func() *reconciler {
			r := newReconciler(table, fake, 10)
			r.Leases, r.MaxWorkers = fake, maxWorkers
			return r
		}
		pool := &workers{t: t, newRun: newRun}
		r := newRun()
		r.Invoker, r.StopMargin = pool, 30*time.Second
		ctx := withNearingDeadline(10 * time.Minute)
		fake.CallError = func(op string, n int) error {
			if op == relaytest.OpQuery && n == 2 {
				ctx.approach(20 * time.Second)
			}
			return nil
		}
		rep := r.Run(ctx, 5*time.Minute, metrics.New())
		ctx.cancel()
		reports := pool.wait()
		if maxWorkers == 1 {
			if rep.Continued || len(reports) != 0 || rep.Published != 20 {
				t.Errorf("one worker at most: %+v, %d successors; want the two pages published, no successor", rep, len(reports))
			}
			continue
		}
		if !rep.Continued || rep.Workers != 1 || len(reports) != 1 || rep.Published+reports[0].Published != len(records) {
			t.Fatalf("the run %+v and its successors %+v; want one successor publishing the rest", rep, reports)
		}
		publishedOnce(t, fake, records)
	}
}

// leaseSignal closes taken once the run's first lease write answered.
type leaseSignal struct {
	reconcile.LeaseAPI
	once  sync.Once
	taken chan struct{}
}

func (l *leaseSignal) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	defer l.once.Do(func() { close(l.taken) })
	return l.LeaseAPI.UpdateItem(ctx, in, opts...)
}

// TestWorkersKeepOrder: an ordered backlog whose keys' events are on every
// shard, and two runs at once (an ordered relay's run starts no worker,
// but a successor and a scheduled run may start together). The one that
// takes the first shard's lease takes every shard; the other finds it
// leased and sweeps none, so that the shards are never split, which would
// leave each run each key's events with gaps. Every event is published in
// its key's order.
func TestWorkersKeepOrder(t *testing.T) {
	t.Parallel()
	const shards, perKey = 4, 40
	keys := []string{"k1", "k2", "k3"}
	table, fake, records := orderedBacklog(t, shards, keys, perKey)
	at := now
	newRun := func() *reconciler {
		r := newOrderedReconciler(table, fake, 5, func() time.Time { return at })
		r.Leases, r.MaxWorkers = fake, 2
		return r
	}
	split := false
	for run := 1; ; run++ {
		// The worker leases its share first; the scheduled run, started
		// once the worker's first lease is written, takes what is left.
		signal := &leaseSignal{LeaseAPI: fake, taken: make(chan struct{})}
		pool := &workers{t: t, newRun: func() *reconciler {
			r := newRun()
			r.Leases = signal
			return r
		}}
		if err := pool.StartWorker(t.Context(), time.Minute); err != nil {
			t.Fatal(err)
		}
		<-signal.taken
		r := newRun()
		r.Invoker = pool
		rep := r.Run(t.Context(), time.Minute, metrics.New())
		reports := pool.wait()
		if workers := rep.Workers - btoi(rep.Continued); workers != 0 {
			t.Errorf("the ordered run started %d workers beside its successor, want none", workers)
		}
		split = split || rep.ShardsLeased > 0 && len(reports) > 0 && reports[0].ShardsLeased > 0
		published := 0
		for _, rec := range records {
			if fake.Status(rec) == string(outbox.StatusPublished) {
				published++
			}
		}
		if published == len(records) {
			break
		}
		if run == 4 {
			t.Fatalf("after %d runs, %d of %d events published", run, published, len(records))
		}
		at = at.Add(2 * time.Minute)
	}
	if split {
		t.Error("the shards were split between two runs, want every shard leased by one run")
	}
	// What a consumer of the FIFO target sees: a copy of an event already
	// published is dropped by the queue's deduplication (its id is the
	// event id), as a relay racing another may publish one.
	seen := map[string]int64{}
	first := map[string]bool{}
	copies := 0
	for _, p := range fake.Published() {
		if first[p.EventID] {
			copies++
			continue
		}
		first[p.EventID] = true
		for _, rec := range records {
			if rec.EventID == p.EventID {
				if rec.Sequence != seen[rec.OrderingKey]+1 {
					t.Errorf("key %s: event %d published after %d", rec.OrderingKey, rec.Sequence, seen[rec.OrderingKey])
				}
				seen[rec.OrderingKey] = max(seen[rec.OrderingKey], rec.Sequence)
			}
		}
	}
	for _, k := range keys {
		if seen[k] != perKey {
			t.Errorf("key %s: published up to %d, want %d", k, seen[k], perKey)
		}
	}
	t.Logf("%d copies of events published before, dropped by the FIFO deduplication", copies)
}

// firstStart is an Invoker that notes how many pages the scheduled run
// had queried when it started its first worker.
type firstStart struct {
	*workers
	fake    *relaytest.AWS
	once    sync.Once
	queries int
}

func (f *firstStart) StartWorker(ctx context.Context, minAge time.Duration) error {
	f.once.Do(func() { f.queries = f.fake.Calls(relaytest.OpQuery) })
	return f.workers.StartWorker(ctx, minAge)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestLeasesAreKeptWhileTheRunPublishes: a run renews its leases in the
// background while it runs, not only before its pages: an ordered run's
// passes publish after its sweep for most of the run. When the run's first
// event is published, the clock is moved past the end of the leases it
// took; they are renewed, live at the new time, before it goes on.
func TestLeasesAreKeptWhileTheRunPublishes(t *testing.T) {
	t.Parallel()
	const shards = 4
	table, fake, _ := orderedBacklog(t, shards, []string{"k1", "k2"}, 20)
	var clock atomic.Int64
	clock.Store(now.UnixNano())
	r := newOrderedReconciler(table, fake, 100, func() time.Time { return time.Unix(0, clock.Load()) })
	r.Leases, r.LeaseRenewal = fake, time.Millisecond
	var kept error
	var once sync.Once
	fake.CallError = func(op string, _ int) error {
		if op != relaytest.OpPutEvents {
			return nil
		}
		once.Do(func() {
			later := now.Add(2 * reconcile.LeaseDuration)
			clock.Store(later.UnixNano())
			deadline := time.Now().Add(20 * time.Second)
			for shard := range shards {
				for {
					l, err := outbox.ParseLease(fake.Item(outbox.LeasePartitionKey(outbox.LeaseShard{Shard: shard}), outbox.LeaseSortKey))
					if err == nil && l.Live(later) {
						break
					}
					if time.Now().After(deadline) {
						kept = fmt.Errorf("the lease of shard %d ended while its run was publishing: %+v (%w)", shard, l, err)
						return
					}
					time.Sleep(time.Millisecond)
				}
			}
		})
		return nil
	}
	rep := r.Run(t.Context(), time.Minute, metrics.New())
	if kept != nil {
		t.Fatal(kept)
	}
	if rep.ShardsLeased != shards || rep.Published != 40 {
		t.Errorf("%+v: want %d shards leased and 40 events published", rep, shards)
	}
}
