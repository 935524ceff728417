package reconcile_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/batch"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/store"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// newOrderedReconciler is an ordered relay's reconciler, the gate in front
// of the target and the cursors, with the clock clock.
func newOrderedReconciler(table outbox.Table, fake *relaytest.AWS, pageSize int32, clock func() time.Time) *reconcile.Reconciler {
	st := &store.Store{Client: fake, Table: table, TTL: time.Hour, Now: clock, Retry: noSleep}
	p := &batch.Processor{
		Publisher: &targetkind.EventBridgePublisher{Client: fake, EventBus: "default", Retry: noSleep},
		Store:     st, Action: config.ActionMark, Now: clock, Cursors: st, Layout: table,
	}
	return &reconcile.Reconciler{Client: fake, Table: table, Processor: p, Holder: st, Now: clock, PageSize: pageSize, Retry: noSleep, Ordered: st}
}

// keyNames is n ordering keys, k0 to k(n-1).
func keyNames(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	return keys
}

// orderedBacklog puts perKey ordered events of each key, written in turn
// (the sequences 1, 1, ..., 2, 2, ...), pending and never published: a
// backlog the stream no longer holds. The events go to the pending shards
// in turn, so that each key's events are in several shards, and each
// shard's oldest events are the oldest of the table.
func orderedBacklog(t *testing.T, shards int, keys []string, perKey int) (outbox.Table, *relaytest.AWS, []outbox.Record) {
	t.Helper()
	table, fake, _ := setup(t, shards, 0)
	records := relaytest.Records(table, len(keys)*perKey, 16)
	for i := range records {
		r := &records[i]
		r.OrderingKey, r.Sequence = keys[i%len(keys)], int64(i/len(keys)+1)
		r.PendingShard = outbox.PendingShardKey(i % shards)
	}
	fake.PutRecords(records)
	return table, fake, records
}

// TestOrderedBacklogLargerThanARun: a backlog of ordered events that one
// run cannot sweep, each key's events spread over every shard, as after a
// relay outage longer than the stream's retention. Every page costs time,
// and the deadline comes near before the last shards are reached. A run
// still publishes each key's oldest events in order: it reads the shards
// in turns, a page at a time, so that what it found is the oldest of every
// shard, and it stops sweeping in time to go over the events that waited
// for an earlier one found on another shard. Swept a shard after another,
// and out of time for the waiting events, each run would find events whose
// predecessors are on shards it does not reach, publish none of them, and
// find them again on the next run, for ever.
func TestOrderedBacklogLargerThanARun(t *testing.T) {
	t.Parallel()
	const shards, perKey, pageSize = 8, 150, 10
	keys := []string{"k1", "k2"}
	table, fake, records := orderedBacklog(t, shards, keys, perKey)
	// Each run comes a reconciler period after the last: the events that
	// waited in it are due again.
	at := now
	r := newOrderedReconciler(table, fake, pageSize, func() time.Time { return at })
	r.StopMargin = 30 * time.Second
	// The 300 events take 30 full pages and a last one per shard: 38
	// queries. Each query takes 20 s of the run's 10 minutes, so that the
	// sweep could start 28 of them before the margin; it leaves a third of
	// the time to the waiting events, and starts 19. In turns, those are
	// at least the first two pages of every shard: the 160 oldest events.
	const far, perPage = 10 * time.Minute, 20 * time.Second
	for run := 1; ; run++ {
		at = at.Add(2 * time.Minute)
		ctx := withNearingDeadline(far)
		base := fake.Calls(relaytest.OpQuery)
		fake.CallError = func(op string, n int) error {
			if op == relaytest.OpQuery {
				ctx.approach(far - time.Duration(n-base)*perPage)
			}
			return nil
		}
		rep := r.Run(ctx, time.Minute, metrics.New())
		ctx.cancel()
		published := 0
		for _, rec := range records {
			if fake.Status(rec) == string(outbox.StatusPublished) {
				published++
			}
		}
		t.Logf("run %d: %d of %d events published; %+v", run, published, len(records), rep)
		if run == 1 && published < 160 {

			t.Errorf("the first run published %d of the %d events, want the 160 oldest at least", published, len(records))
		}
		if published == len(records) {
			break
		}
		if run == 4 {
			t.Fatalf("after %d runs, %d of %d events published", run, published, len(records))
		}
	}
	seen := map[string]int64{}
	for _, p := range fake.Published() {
		for _, rec := range records {
			if rec.EventID != p.EventID {
				continue
			}
			if rec.Sequence != seen[rec.OrderingKey]+1 {
				t.Errorf("key %s: event %d published after %d", rec.OrderingKey, rec.Sequence, seen[rec.OrderingKey])
			}
			seen[rec.OrderingKey] = max(seen[rec.OrderingKey], rec.Sequence)
		}
	}
	for _, k := range keys {
		if seen[k] != perKey {
			t.Errorf("key %s: published up to %d, want %d", k, seen[k], perKey)
		}
	}
}

// TestOrderedRunCountsWaiting: events held behind an earlier event of
// their key (here event 1, not found: written just before, it may not be
// in the pending index yet) are neither published, failed nor poison. The
// run's report counts them as waiting, and so does the EventsWaiting
// metric, so that a run that publishes nothing is not read as one that
// found nothing to do.
func TestOrderedRunCountsWaiting(t *testing.T) {
	t.Parallel()
	table, fake, _ := setup(t, 2, 0)
	records := relaytest.Records(table, 4, 16)
	for i := range records {
		records[i].OrderingKey, records[i].Sequence = "k", int64(i+2)
		records[i].PendingShard = outbox.PendingShardKey(i % 2)
	}
	fake.PutRecords(records)
	young := relaytest.Clock.Add(time.Minute)
	m := metrics.New()
	rep := newOrderedReconciler(table, fake, 10, func() time.Time { return young }).Run(t.Context(), 0, m)
	if rep.Found != 4 || rep.Published != 0 || rep.Failed != 0 || rep.Poison != 0 || rep.Waiting != 4 {
		t.Errorf("report %+v, want 4 found, all 4 waiting", rep)
	}
	if got := m.Count(metrics.EventsWaiting); got != 4 {
		t.Errorf("EventsWaiting = %v, want 4", got)
	}
}

// TestOrderedWaitingEventsAreNotHeld: a backlog of two hot keys, each
// key's events on every shard, so that on every page nearly every event
// waits for one on another shard. The run reads the keys' cursors before
// holding, and holds only what follows a cursor without a gap: each event
// is held once and marked once, and the writes beyond that are the
// cursors' (an advance per key and pass, a registration per key and
// page), not a hold and a release each time an event is found waiting.
func TestOrderedWaitingEventsAreNotHeld(t *testing.T) {
	t.Parallel()
	const shards, perKey, pageSize = 8, 100, 10
	keys := []string{"k1", "k2"}
	table, fake, records := orderedBacklog(t, shards, keys, perKey)
	r := newOrderedReconciler(table, fake, pageSize, func() time.Time { return now })
	rep := r.Run(t.Context(), time.Minute, metrics.New())
	if rep.Published != len(records) {
		t.Fatalf("report %+v, want all %d published in one run", rep, len(records))
	}
	// The backlog is 20 pages; the run makes at most maxWaitingPasses
	// passes after them.
	pages, passes := len(keys)*perKey/pageSize, 8
	writes, bound := fake.Calls(relaytest.OpUpdateItem), 2*len(records)+len(keys)*(pages+passes)
	if writes > bound {
		t.Errorf("%d UpdateItem calls for %d events, want at most %d: a hold and a mark each, and the cursors' writes", writes, len(records), bound)
	}
}

// TestOrderedEventsBehindAGapAreNotWritten: events whose key's first event
// was not found (written just before, not in the pending index yet) wait
// behind it. The run reads their keys' cursors and writes nothing to them:
// no hold, no release, on any pass.
func TestOrderedEventsBehindAGapAreNotWritten(t *testing.T) {
	t.Parallel()
	const shards, perKey = 4, 20
	table, fake, records := orderedBacklog(t, shards, []string{"k1", "k2"}, perKey)
	var found []outbox.Record
	for _, r := range records {
		if r.Sequence == 1 {
			if _, err := fake.DeleteItem(t.Context(), &dynamodb.DeleteItemInput{TableName: &table.Name, Key: table.Key(r)}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		found = append(found, r)
	}
	fake.ResetCounters()
	young := relaytest.Clock.Add(time.Minute)
	rep := newOrderedReconciler(table, fake, 10, func() time.Time { return young }).Run(t.Context(), 0, metrics.New())
	if rep.Published != 0 || rep.Waiting != len(found) {
		t.Errorf("report %+v, want none published, all %d waiting", rep, len(found))
	}
	if writes := fake.Calls(relaytest.OpUpdateItem); writes != 0 {
		t.Errorf("%d UpdateItem calls for events that wait behind a gap, want none", writes)
	}
}

// TestOrderedRunKeepsTheLongestPending: more ordered events than a run
// keeps (MaxKept), in two shards, as after pending_index.shards was
// lowered: the last shard holds only the oldest events, a key's, and the
// first shard a newer event of each of MaxKept other keys, each behind
// its key's first event, not found yet. The run
// sweeps both shards in turns and keeps the longest pending of what it
// found, so the old key's events are published in its first run. Merged
// shard after shard and cut at MaxKept, the run kept the first shard's
// newer events and dropped the old key's, run after run.
func TestOrderedRunKeepsTheLongestPending(t *testing.T) {
	t.Parallel()
	const oldEvents, kept = 5, 10000
	table, fake, _ := setup(t, 2, 0)
	records := relaytest.Records(table, kept+oldEvents, 16)
	for i := range records {
		r := &records[i]
		if i < oldEvents {
			r.OrderingKey, r.Sequence, r.PendingShard = "old", int64(i+1), outbox.PendingShardKey(1)
			continue
		}
		// Each waits for its key's first event, not found yet, so that the
		// run writes and publishes nothing for them.
		r.OrderingKey, r.Sequence, r.PendingShard = fmt.Sprintf("new-%d", i), 2, outbox.PendingShardKey(0)
	}
	fake.PutRecords(records)
	r := newOrderedReconciler(table, fake, 1000, func() time.Time { return now })
	r.MaxKept = kept
	rep := r.Run(t.Context(), time.Minute, metrics.New())
	for _, rec := range records[:oldEvents] {
		if got := fake.Status(rec); got != string(outbox.StatusPublished) {
			t.Errorf("event %d of the old key is %s after the first run, want PUBLISHED; report %+v", rec.Sequence, got, rep)
		}
	}
}

// TestOrderedSweepReadsTheShardBehind: a key's events alternate between two
// shards; the first also holds many events of other keys between them,
// the second many newer ones after them, more than a run keeps
// (MaxKept, 10,000 here) in all. After a page of each, the run reads on the shard
// it has read least far in pending time, so that what it keeps is the
// longest pending of both together, and publishes most of the key's run.
// A page of each in turn would have read the second shard's newer events
// instead, and cut the key's run at the time the first was read to.
func TestOrderedSweepReadsTheShardBehind(t *testing.T) {
	t.Parallel()
	const perShard, pageSize = 1000, 1000
	const fillers0, fillers1 = 9 * perShard, 5 * perShard
	table, fake, _ := setup(t, 2, 0)
	records := relaytest.Records(table, 2*perShard+fillers0+fillers1, 16)
	var keyed []outbox.Record
	place := func(r *outbox.Record, shard int, at int64, key string, seq int64) {
		r.PendingShard, r.PendingSince, r.OrderingKey, r.Sequence = outbox.PendingShardKey(shard), relaytest.Clock.UnixMilli()+at, key, seq
	}
	i := 0
	for n := range 2 * perShard {
		// Event n+1 of k at 10n ms, in shard n%2; in shard 0, nine other
		// events after each of k's (each waiting for its key's first
		// event, not found yet: the run writes nothing for them).
		place(&records[i], n%2, int64(10*n), "k", int64(n+1))
		keyed = append(keyed, records[i])
		i++
		if n%2 == 0 {
			for f := range 9 {
				place(&records[i], 0, int64(10*n+f+1), fmt.Sprintf("other-%d", i), 2)
				i++
			}
		}
	}
	for ; i < len(records); i++ {
		place(&records[i], 1, int64(10*2*perShard+i), fmt.Sprintf("newer-%d", i), 2)
	}
	fake.PutRecords(records)
	r := newOrderedReconciler(table, fake, pageSize, func() time.Time { return now })
	r.MaxKept = 10000
	rep := r.Run(t.Context(), time.Minute, metrics.New())
	published := 0
	for _, rec := range keyed {
		if fake.Status(rec) == string(outbox.StatusPublished) {
			published++
		}
	}
	// The 10,000 longest pending events are k's first 1,800 and the
	// events between them; a page of each shard in turn keeps k's first
	// 1,000.
	if published < 1600 {
		t.Errorf("%d of k's %d events published in the first run, want at least 1,600; report %+v", published, len(keyed), rep)
	}
}

// TestOrderedSweepReadsWholePages: an ordered sweep publishes nothing
// while it reads, so its pages are as large as its run's bound allows (on
// one shard, reconcile.OrderedPageSize), not the unordered sweep's, which
// it publishes page by page: a backlog of 2,500 small events takes three
// pages, not twenty-five.
func TestOrderedSweepReadsWholePages(t *testing.T) {
	t.Parallel()
	table, fake, records := orderedBacklog(t, 1, keyNames(50), 50)
	r := newOrderedReconciler(table, fake, 0, func() time.Time { return now })
	rep := r.Run(t.Context(), time.Minute, metrics.New())
	if rep.Published != len(records) {
		t.Fatalf("published %d of %d events; report %+v", rep.Published, len(records), rep)
	}
	want := (len(records) + reconcile.OrderedPageSize - 1) / reconcile.OrderedPageSize
	if got := fake.Calls(relaytest.OpQuery); got > want+1 {
		t.Errorf("the sweep made %d queries, want %d pages of %d events (and an empty one at most)", got, want, reconcile.OrderedPageSize)
	}
}

// TestOrderedRunReadsEveryShard: a run that keeps 10,000 events of a
// table of 64 pending shards, and of 128, each key's events on every shard
// in turn. Its first round reads a page of every shard, so its pages are
// small enough for all of them to fit in half of what it keeps (78 and 39
// events): the oldest pages of every shard are read, and each key
// publishes its run of them. Pages of reconcile.OrderedPageSize would
// fill the run's bound after a dozen shards, pages of 100 after 100, and
// every key would stop at its first event on the others (35 and 103
// events published).
func TestOrderedRunReadsEveryShard(t *testing.T) {
	t.Parallel()
	keys := keyNames(10)
	for _, c := range []struct{ shards, perKey, firstRound int }{{64, 2000, 64 * 78}, {128, 1500, 128 * 39}} {
		t.Run(fmt.Sprintf("%d shards", c.shards), func(t *testing.T) {
			t.Parallel()
			table, fake, _ := orderedBacklog(t, c.shards, keys, c.perKey)
			r := newOrderedReconciler(table, fake, 0, func() time.Time { return now })
			r.MaxKept = reconcile.MinKept
			rep := r.Run(t.Context(), time.Minute, metrics.New())
			if rep.Published < c.firstRound {
				t.Errorf("the run published %d events, want the %d of its first round at least; report %+v", rep.Published, c.firstRound, rep)
			}
		})
	}
}

// TestOrderedStepsAreHeldWhileTheStepBeforePublishes: a run holds a key's
// next reconcile.FirstStepRanks events, and publishes them while it holds
// the key's next ones, so that the key's publishing does not wait for the
// holds of its whole backlog. The hold of the second step's first event
// does not end before the first event is published; by the time the first
// step's last event is sent, it is held; and every event is published, in
// order.
func TestOrderedStepsAreHeldWhileTheStepBeforePublishes(t *testing.T) {
	t.Parallel()
	const perKey = reconcile.FirstStepRanks + 20
	table, fake, records := orderedBacklog(t, 2, []string{"hot"}, perKey)
	r := newOrderedReconciler(table, fake, 1000, func() time.Time { return now })
	var heldEarly, heldFirst error
	second := records[reconcile.FirstStepRanks]
	fake.WriteError = func(sortKey string, attempt int) error {
		if sortKey != second.SortKey || attempt > 1 {
			return nil
		}
		deadline := time.Now().Add(20 * time.Second)
		for len(fake.Published()) == 0 {
			if time.Now().After(deadline) {
				heldFirst = fmt.Errorf("nothing published while event %d is being held: the run held every step before publishing", second.Sequence)
				return nil
			}
			time.Sleep(time.Millisecond)
		}
		return nil
	}
	fake.CallError = func(op string, _ int) error {
		if op != relaytest.OpPutEvents {
			return nil
		}
		// Calls of the first step carry sequences up to FirstStepRanks;
		// the last of them waits until the next step's first event is
		// held, which does not come before that step starts if the steps
		// are held one after the other.
		if pub := len(fake.Published()); pub != reconcile.FirstStepRanks-1 {
			return nil
		}
		next := records[reconcile.FirstStepRanks]
		deadline := time.Now().Add(20 * time.Second)
		for fake.Item(next.PartitionKey, next.SortKey)[outbox.AttrNextAttemptAt] == nil {
			if time.Now().After(deadline) {
				heldEarly = fmt.Errorf("event %d not held when event %d is sent", next.Sequence, next.Sequence-1)
				return nil
			}
			time.Sleep(time.Millisecond)
		}
		return nil
	}
	rep := r.Run(context.Background(), time.Minute, metrics.New())
	if err := errors.Join(heldFirst, heldEarly); err != nil {
		t.Fatal(err)
	}
	if rep.Published != perKey {
		t.Fatalf("published %d of %d: %+v", rep.Published, perKey, rep)
	}
	for i, p := range fake.Published() {
		if p.EventID != records[i].EventID {
			t.Fatalf("publication %d is %s, want event %d (%s)", i, p.EventID, records[i].Sequence, records[i].EventID)
		}
	}
}

// TestALongKeysStepsDoNotWaitForTheOtherKeys: a key with more events than
// the first step goes on to its next step while the other keys' events,
// all in the first step, are still being held (or published): the hold of
// a short key's first event does not end until the long key's first event
// of its second step is published.
func TestALongKeysStepsDoNotWaitForTheOtherKeys(t *testing.T) {
	t.Parallel()
	const long, short = reconcile.FirstStepRanks + 10, 3
	table, fake, _ := setup(t, 2, 0)
	records := relaytest.Records(table, long+short, 16)
	for i := range records {
		r := &records[i]
		r.OrderingKey, r.Sequence = "long", int64(i+1)
		if i >= long {
			r.OrderingKey, r.Sequence = "short", int64(i-long+1)
		}
		r.PendingShard = outbox.PendingShardKey(i % 2)
	}
	fake.PutRecords(records)
	r := newOrderedReconciler(table, fake, 1000, func() time.Time { return now })
	nextStep, shortFirst := records[reconcile.FirstStepRanks], records[long]
	var waited error
	fake.WriteError = func(sortKey string, attempt int) error {
		if sortKey != shortFirst.SortKey || attempt > 1 {
			return nil
		}
		deadline := time.Now().Add(20 * time.Second)
		for fake.Status(nextStep) != string(outbox.StatusPublished) {
			if time.Now().After(deadline) {
				waited = fmt.Errorf("event %d of the long key not published while the short key's first event is being held: its second step waited for the short keys", nextStep.Sequence)
				return nil
			}
			time.Sleep(time.Millisecond)
		}
		return nil
	}
	rep := r.Run(context.Background(), time.Minute, metrics.New())
	if waited != nil {
		t.Fatal(waited)
	}
	if rep.Published != long+short {
		t.Fatalf("published %d of %d: %+v", rep.Published, long+short, rep)
	}
	seen := map[string]int64{}
	for _, p := range fake.Published() {
		key, seq := "long", int64(0)
		for _, rec := range records {
			if rec.EventID == p.EventID {
				key, seq = rec.OrderingKey, rec.Sequence
			}
		}
		if seq != seen[key]+1 {
			t.Fatalf("key %q: event %d published after %d", key, seq, seen[key])
		}
		seen[key] = seq
	}
}

// TestOrderedRunKeepsNoMoreBytesThanItMay: a run keeps its ordered events
// in memory, whole items, so it stops sweeping once they take
// MaxKeptBytes: of a key's 200 events of 10 KB, a run allowed about 50
// of them publishes those (and the page in flight when it stopped), and
// leaves the rest pending for its successor, in order.
func TestOrderedRunKeepsNoMoreBytesThanItMay(t *testing.T) {
	t.Parallel()
	const events, detail, allowed, pageSize = 200, 10 << 10, 50, 10
	table, fake, records := orderedBacklog(t, 1, []string{"k"}, events)
	for i := range records {
		records[i].Detail = json.RawMessage(fmt.Sprintf(`{"pad":%q}`, strings.Repeat("x", detail)))
	}
	fake.PutRecords(records)
	r := newOrderedReconciler(table, fake, pageSize, func() time.Time { return now })
	r.MaxKeptBytes = allowed * (detail + 512)
	rep := r.Run(t.Context(), time.Minute, metrics.New())
	if rep.Published < allowed || rep.Published > allowed+pageSize {
		t.Fatalf("published %d of %d events, want %d to %d: the run keeps no more than MaxKeptBytes; report %+v", rep.Published, events, allowed, allowed+pageSize, rep)
	}
	for i, rec := range records {
		want := string(outbox.StatusPending)
		if i < rep.Published {
			want = string(outbox.StatusPublished)
		}
		if got := fake.Status(rec); got != want {
			t.Fatalf("event %d is %s, want %s", rec.Sequence, got, want)
		}
	}
}
