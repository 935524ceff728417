package reconcile_test

import (
	"context"
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
	"github.com/outboxkit/terraform-provider-outbox/internal/target"
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
		Publisher: &target.EventBridgePublisher{Client: fake, EventBus: "default", Retry: noSleep},
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

func TestDeadline(t *testing.T) {
	t.Parallel()
	table, fake, records := setup(t, 1, 100)
	// A page takes at least four sequential calls (query, hold, publish,
	// marks): 200 ms, and the engine's own time, well within the margin, so 20
	// pages take longer than the deadline allows.
	fake.Latency = 50 * time.Millisecond
	r := newReconciler(table, fake, 5)
	r.StopMargin = time.Second // capped to a quarter of the time left
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rep := r.Run(ctx, time.Minute, metrics.New())
	if ctx.Err() != nil {
		t.Error("Run did not return before the deadline")
	}
	if rep.Complete || rep.RemainingShards != 1 {
		t.Errorf("report %+v: want incomplete", rep)
	}
	if rep.Found == 0 || rep.Found >= 100 || rep.Published != rep.Found || rep.Failed != 0 {
		t.Errorf("report %+v: want some pages fully processed", rep)
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
	if pending != 100-rep.Found {
		t.Errorf("%d pending, want %d", pending, 100-rep.Found)
	}

	// The next run picks up the rest.
	fake.Latency = 0
	rep2 := r.Run(context.Background(), time.Minute, metrics.New())
	if !rep2.Complete || rep2.Found != 100-rep.Found || rep2.Published != rep2.Found {
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
