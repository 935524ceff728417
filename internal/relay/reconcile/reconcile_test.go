package reconcile_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/batch"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/store"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

var (
	now     = relaytest.Clock.Add(time.Hour)
	noSleep = retry.Policy{Attempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }}
)

func newReconciler(table outbox.Table, fake *relaytest.AWS, pageSize int32) *reconcile.Reconciler {
	return newReconcilerAt(table, fake, pageSize, config.ActionMark, func() time.Time { return now })
}

func newReconcilerAt(table outbox.Table, fake *relaytest.AWS, pageSize int32, action config.Action, clock func() time.Time) *reconcile.Reconciler {
	st := &store.Store{Client: fake, Table: table, TTL: time.Hour, Now: clock, Retry: noSleep}
	p := &batch.Processor{
		Publisher: &targetkind.EventBridgePublisher{Client: fake, EventBus: "default", Retry: noSleep},
		Store:     st, Action: action, Now: clock, NoPendingIndex: table.NoPendingIndex,
	}
	return &reconcile.Reconciler{Client: fake, Table: table, Processor: p, Holder: st, Now: clock, PageSize: pageSize, Retry: noSleep}
}

func setup(t *testing.T, shards, n int) (outbox.Table, *relaytest.AWS, []outbox.Record) {
	t.Helper()
	table := outbox.Table{Name: "outbox", PendingShards: shards}.WithDefaults()
	fake := relaytest.New(t, table)
	records := relaytest.Records(table, n, 16)
	fake.PutRecords(records)
	return table, fake, records
}

func TestPaging(t *testing.T) {
	t.Parallel()
	table, fake, records := setup(t, 3, 50)
	perShard := map[int]int{}
	for _, r := range records {
		perShard[table.ShardFor(r.EventID)]++
	}
	// DynamoDB returns a LastEvaluatedKey whenever a page is full, even if
	// it holds the shard's last items: a shard of 14 takes 3 queries.
	wantQueries := 0
	for shard := range 3 {
		wantQueries += perShard[shard]/7 + 1
	}
	m := metrics.New()
	rep := newReconciler(table, fake, 7).Run(context.Background(), 5*time.Minute, m)
	rep.ReadUnits = 0
	want := reconcile.Report{Found: 50, Published: 50, Complete: true, OldestPendingAgeSeconds: 3600, MinAgeSeconds: 300, Segments: 3}
	if rep != want {
		t.Errorf("report %+v\nwant   %+v", rep, want)
	}
	if got := fake.Calls(relaytest.OpQuery); got != wantQueries {
		t.Errorf("%d queries, want %d (pages of 7 over shards of %v)", got, wantQueries, perShard)
	}
	for i, r := range records {
		if s := fake.Status(r); s != string(outbox.StatusPublished) {
			t.Errorf("record %d: %s", i, s)
		}
	}
	if m.Count(metrics.PendingFound) != 50 {
		t.Errorf("PendingFound = %v", m.Count(metrics.PendingFound))
	}
}

// nearingDeadline is an invocation's context whose deadline, far off at
// first, comes near when approach is called, as it would after a slow run;
// the context ends at its deadline.
type nearingDeadline struct {
	context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	deadline time.Time
}

func withNearingDeadline(far time.Duration) *nearingDeadline {
	ctx, cancel := context.WithCancel(context.Background())
	d := &nearingDeadline{Context: ctx, cancel: cancel}
	d.approach(far)
	return d
}

// approach moves the deadline to left from now.
func (d *nearingDeadline) approach(left time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deadline = time.Now().Add(left)
	time.AfterFunc(left, d.cancel)
}

func (d *nearingDeadline) Deadline() (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.deadline, true
}

func TestDeadline(t *testing.T) {
	t.Parallel()
	const pageSize, pagesInTime = 5, 3
	table, fake, records := setup(t, 1, 100)
	r := newReconciler(table, fake, pageSize)
	// The margin is 30 s: the quarter of the 10 minutes left at the start
	// does not cap it. While the third page is being queried, the deadline
	// comes within the margin, 20 s away: that page is processed, no other
	// page is started, and Run returns well before the deadline.
	r.StopMargin = 30 * time.Second
	ctx := withNearingDeadline(10 * time.Minute)
	defer ctx.cancel()
	fake.CallError = func(op string, n int) error {
		if op == relaytest.OpQuery && n == pagesInTime {
			ctx.approach(20 * time.Second)
		}
		return nil
	}
	rep := r.Run(ctx, time.Minute, metrics.New())
	if ctx.Err() != nil {
		t.Error("Run did not return before the deadline")
	}
	if rep.Complete || rep.RemainingShards != 1 {
		t.Errorf("report %+v: want incomplete", rep)
	}
	const found = pagesInTime * pageSize
	if rep.Found != found || rep.Published != found || rep.Failed != 0 {
		t.Errorf("report %+v: want the %d pages started in time fully processed, %d events", rep, pagesInTime, found)
	}
	if got := fake.Calls(relaytest.OpQuery); got != pagesInTime {
		t.Errorf("%d queries, want %d: no page started within the margin", got, pagesInTime)
	}
	pending := 0
	for _, rec := range records {
		switch fake.Status(rec) {
		case string(outbox.StatusPending):
			pending++
		case string(outbox.StatusPublished):
		default:
			t.Errorf("record %s: %s", rec.EventID, fake.Status(rec))
		}
	}
	if pending != 100-found {
		t.Errorf("%d pending, want %d", pending, 100-found)
	}

	// The next run picks up the rest.
	fake.CallError = nil
	rep2 := r.Run(context.Background(), time.Minute, metrics.New())
	if !rep2.Complete || rep2.Found != 100-found || rep2.Published != rep2.Found {
		t.Errorf("second run %+v", rep2)
	}
}

func TestQueryErrors(t *testing.T) {
	t.Parallel()
	table, fake, _ := setup(t, 4, 40)
	fake.CallError = func(op string, n int) error {
		switch {
		case op != relaytest.OpQuery:
		case n == 1:
			return &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException", Message: "slow down"}
		case n == 3:
			return &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "no dynamodb:Query"}
		}
		return nil
	}
	r := newReconciler(table, fake, 100)
	r.Concurrency = 1 // shards in order, so the call numbers are predictable
	rep := r.Run(context.Background(), time.Minute, metrics.New())
	if rep.Complete || rep.RemainingShards != 1 {
		t.Errorf("report %+v: want one shard left by the permanent error", rep)
	}
	if rep.Found == 0 || rep.Found == 40 || rep.Published != rep.Found {
		t.Errorf("report %+v", rep)
	}
}

func TestNothingPending(t *testing.T) {
	t.Parallel()
	table, fake, _ := setup(t, 2, 0)
	m := metrics.New()
	rep := newReconciler(table, fake, 0).Run(context.Background(), time.Minute, m)
	if !rep.Complete || rep.Found != 0 || rep.OldestPendingAgeSeconds != 0 {
		t.Errorf("report %+v", rep)
	}
	if v := m.Values(metrics.OldestPendingAge); len(v) != 1 || v[0] != 0 {
		t.Errorf("OldestPendingAge %v, want [0]", v)
	}
}

// TestRunPacesWhatItPublishes: a run at 20 events a second with 4 s to
// go publishes the limiter's burst at once and no more than the rate
// allows after it, until its stop margin (a quarter of the 4 s), which it
// keeps for marking what it published; the events it had no time for stay
// pending, untried (its page of 100 included), and only the published ones
// reach the target.
func TestRunPacesWhatItPublishes(t *testing.T) {
	t.Parallel()
	table, fake, records := setup(t, 1, 200)
	r := newReconciler(table, fake, 100)
	r.MaxEventsPerSecond = 20
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Second)
	defer cancel()
	rep := r.Run(ctx, 5*time.Minute, metrics.New())
	if rep.Published < 10 || rep.Published > 10+20*3 {
		t.Errorf("published %d in the 3 s before the margin at 20 events/s, want at least the burst of 10 and at most 70", rep.Published)
	}
	if rep.Found == 0 || rep.Published+rep.Failed != rep.Found || rep.Poison != 0 {
		t.Errorf("report %+v: want every event found published or left pending", rep)
	}
	pending := 0
	for _, rec := range records {
		if fake.Status(rec) == string(outbox.StatusPending) {
			pending++
		}
	}
	if sent := len(fake.Published()); sent != rep.Published || pending != len(records)-rep.Published {
		t.Errorf("%d entries sent, %d events pending; want %d sent (the published ones, all marked) and %d pending", sent, pending, rep.Published, len(records)-rep.Published)
	}
}
