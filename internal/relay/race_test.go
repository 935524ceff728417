package relay_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/store"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// maxLagDuplicates is the most duplicates allowed in the lag case, out of
// 100 events.
const maxLagDuplicates = 5

// duplicates returns how many publications repeated an event already
// published, and how many distinct events were published.
func duplicates(published []relaytest.Published) (dups, distinct int) {
	seen := map[string]bool{}
	for _, p := range published {
		if seen[p.EventID] {
			dups++
		}
		seen[p.EventID] = true
	}
	return dups, len(seen)
}

// eachAction runs test for each published action, each a parallel
// subtest named for it.
func eachAction(t *testing.T, test func(*testing.T, config.Action)) {
	t.Helper()
	for _, action := range []config.Action{config.ActionMark, config.ActionDelete} {
		t.Run(string(action), func(t *testing.T) {
			t.Parallel()
			test(t, action)
		})
	}
}

// eachLayoutAndAction runs test for each table layout and published
// action, each a parallel subtest named layout/action.
func eachLayoutAndAction(t *testing.T, test func(*testing.T, outbox.Table, config.Action)) {
	t.Helper()
	for layoutName, table := range layouts {
		t.Run(layoutName, func(t *testing.T) {
			t.Parallel()
			eachAction(t, func(t *testing.T, action config.Action) { test(t, table, action) })
		})
	}
}

// TestLagBothPaths: the stream lags 15 s behind a 10 s minimum age, so the
// reconciler and the stream invocation see the same 100 pending events at
// the same time. Each event is published once: the stream relay holds the
// events that are old enough for the reconciler, as the reconciler does,
// and only one hold succeeds.
func TestLagBothPaths(t *testing.T) {
	t.Parallel()
	eachAction(t, func(t *testing.T, action config.Action) {
		table := layouts["dedicated"]
		records := relaytest.Records(table, 100, 64)
		fake, dups, distinct := lagRun(t, table, action, records, 10*time.Second)
		t.Logf("lag case (%s): %d duplicates out of %d events", action, dups, len(records))
		if distinct != len(records) || dups > maxLagDuplicates {
			t.Errorf("%d events published, %d duplicates; want %d and at most %d", distinct, dups, len(records), maxLagDuplicates)
		}
		for i, r := range records {
			want := string(outbox.StatusPublished)
			if action == config.ActionDelete {
				want = ""
			}
			if got := fake.Status(r); got != want {
				t.Errorf("record %d: status %q, want %q", i, got, want)
			}
		}
	})
}

// TestLagCheckOnly measures the status check alone, without the stream
// relay's hold: a stream relay that takes the lagging events for young
// (its minimum age is an hour) reads them as pending while the reconciler
// publishes them, so both publish. It shows what the hold prevents.
func TestLagCheckOnly(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	records := relaytest.Records(table, 100, 64)
	_, dups, distinct := lagRun(t, table, config.ActionMark, records, time.Hour)
	t.Logf("lag case with the status check only: %d duplicates out of %d events", dups, len(records))
	if distinct != len(records) {
		t.Errorf("%d events published, want %d", distinct, len(records))
	}
}

// lagRun runs a stream invocation and the reconciler at once on records,
// 15 s after they occurred, with a 10 s minimum age for the reconciler and
// streamMinAge for the stream relay. It returns the fake, the duplicates
// and the events published.
func lagRun(t *testing.T, table outbox.Table, action config.Action, records []outbox.Record, streamMinAge time.Duration) (*relaytest.AWS, int, int) {
	t.Helper()
	fake := relaytest.New(t, table)
	fake.Latency = 2 * time.Millisecond // calls of both paths overlap
	cfg := testConfig(table, config.TargetEventBridge, action)
	cfg.ReconcileMinAge = 10 * time.Second
	streamCfg := cfg
	streamCfg.ReconcileMinAge = streamMinAge
	clock := func() time.Time { return relaytest.Clock.Add(15 * time.Second) }
	stream, reconciler := newRelay(t, streamCfg, fake, retryingAt(clock)), newRelay(t, cfg, fake, retryingAt(clock))
	fake.PutRecords(records)
	ev := relaytest.StreamEvent(table, relaytest.Inserts(table, records)...)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var resp events.DynamoDBEventResponse
	var report any
	var streamErr, reconcileErr error
	wg.Go(func() { resp, streamErr = stream.HandleStream(ctx, ev) })
	wg.Go(func() { report, reconcileErr = reconciler.Handle(ctx, json.RawMessage(`{"action":"reconcile"}`)) })
	wg.Wait()
	if streamErr != nil || reconcileErr != nil {
		t.Fatalf("stream: %v; reconcile: %v", streamErr, reconcileErr)
	}
	// Lambda retries the batch from its lowest failed record, as often as
	// it takes (events held by the reconciler are reported for a retry).
	for retries := 0; len(resp.BatchItemFailures) > 0; retries++ {
		if retries == 10 {
			t.Fatalf("still %d batch item failures after 10 retries", len(resp.BatchItemFailures))
		}
		first := slices.IndexFunc(ev.Records, func(r events.DynamoDBEventRecord) bool {
			return r.Change.SequenceNumber == resp.BatchItemFailures[0].ItemIdentifier
		})
		ev.Records = ev.Records[first:]
		if resp, streamErr = stream.HandleStream(ctx, ev); streamErr != nil {
			t.Fatal(streamErr)
		}
	}
	t.Logf("reconciler: %+v", report)
	dups, distinct := duplicates(fake.Published())
	return fake, dups, distinct
}

// TestStreamAfterReconciler: the reconciler published the events before
// their stream records arrived; the stream relay's status check skips
// them, whether they were marked or deleted.
func TestStreamAfterReconciler(t *testing.T) {
	t.Parallel()
	eachAction(t, func(t *testing.T, action config.Action) {
		table := layouts["dedicated"]
		fake := relaytest.New(t, table)
		cfg := testConfig(table, config.TargetEventBridge, action)
		records := relaytest.Records(table, 50, 64)
		fake.PutRecords(records)
		if _, err := newRelay(t, cfg, fake, retryingAt(func() time.Time { return now })).Handle(context.Background(), json.RawMessage(`{"action":"reconcile"}`)); err != nil {
			t.Fatal(err)
		}
		// The stream's records come late, but they are young for a
		// relay whose clock is a second after they occurred.
		resp, err := newRelay(t, cfg, fake, retryingAt(func() time.Time { return streamNow })).HandleStream(context.Background(),
			relaytest.StreamEvent(table, relaytest.Inserts(table, records)...))
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("stream: %v, %d failures", err, len(resp.BatchItemFailures))
		}
		if dups, distinct := duplicates(fake.Published()); dups != 0 || distinct != len(records) {
			t.Errorf("%d duplicates, %d events published; want 0 and %d", dups, distinct, len(records))
		}
	})
}

// TestStreamSkipsHeldItems: an item held by the reconciler (or backing off
// after a failed attempt) is not published by a stream invocation, which
// reports it for a retry: the holder settles it meanwhile, or its hold ends.
func TestStreamSkipsHeldItems(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	h := newHarness(t, testConfig(table, config.TargetEventBridge, config.ActionMark))
	records := relaytest.Records(table, 3, 32)
	records[1].NextAttemptAt = streamNow.Add(time.Minute).UnixMilli()
	records[2].NextAttemptAt = streamNow.Add(-time.Minute).UnixMilli() // expired
	for _, r := range records {
		item := table.Item(r)
		if r.NextAttemptAt != 0 {
			item[outbox.AttrNextAttemptAt] = nAttr(r.NextAttemptAt)
		}
		h.fake.Put(item)
	}
	resp, err := h.relay.HandleStream(context.Background(), relaytest.StreamEvent(table, relaytest.Inserts(table, records)...))
	if err != nil || !slices.Equal(failures(resp), []string{relaytest.SequenceNumber(1)}) {
		t.Fatalf("%v, failures %v; want record 1 retried", err, failures(resp))
	}
	if got := h.classMetric(t, "environment") + h.classMetric(t, "transient") + h.classMetric(t, "throttling"); got != 0 {
		t.Errorf("PublishErrors = %v: a held item is no error", got)
	}
	want := []string{"PUBLISHED", "PENDING", "PUBLISHED"}
	for i, r := range records {
		if got := h.fake.Status(r); got != want[i] {
			t.Errorf("record %d: %s, want %s", i, got, want[i])
		}
	}
}

// TestFailedItemGetsPendingKeys: an item written without the pending index
// keys (by an old writer) whose publishing fails gets them, so that the
// reconciler finds it once the cause is fixed; one published at once gets
// no extra write.
func TestFailedItemGetsPendingKeys(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	h := newHarness(t, testConfig(table, config.TargetEventBridge, config.ActionMark))
	records := relaytest.Records(table, 2, 32)
	for i := range records {
		records[i].PendingShard, records[i].PendingSince = "", 0
		h.fake.PutRecord(records[i])
	}
	h.fake.EntryError = relaytest.FailEvent(records[1].EventID, "AccessDeniedException")
	resp, err := h.relay.HandleStream(context.Background(), relaytest.StreamEvent(table, relaytest.Inserts(table, records)...))
	if err != nil || len(resp.BatchItemFailures) != 1 {
		t.Fatalf("%v, failures %v", err, failures(resp))
	}
	// One mark of record 0, one conditional update of record 1.
	if got := h.fake.Calls(relaytest.OpUpdateItem); got != 2 {
		t.Errorf("%d UpdateItem calls, want 2", got)
	}
	item := h.fake.Item(records[1].PartitionKey, records[1].SortKey)
	shard, _ := item[outbox.AttrPendingShard].(*types.AttributeValueMemberS)
	if shard == nil || shard.Value != outbox.PendingShardKey(table.ShardFor(records[1].EventID)) {
		t.Fatalf("failed item's pending shard %v", item[outbox.AttrPendingShard])
	}
	// The permission is back: the reconciler publishes it.
	h.fake.EntryError = nil
	rep, err := newRelay(t, testConfig(table, config.TargetEventBridge, config.ActionMark), h.fake, retryingAt(func() time.Time { return now })).
		Reconcile(context.Background(), relay.ReconcileRequest{Action: relay.ActionReconcile})
	if err != nil || rep.Published != 1 {
		t.Errorf("reconcile %+v, %v: want the failed event published", rep, err)
	}
	if got := h.fake.Status(records[1]); got != string(outbox.StatusPublished) {
		t.Errorf("status %s", got)
	}
}

// TestStreamReadDenied: when the status check cannot read the table, the
// events are published from their stream images instead of stalling the
// shard.
func TestStreamReadDenied(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	h := newHarness(t, testConfig(table, config.TargetEventBridge, config.ActionMark))
	records := h.stored(3)
	h.fake.ReadError = func(string) error {
		return &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "not authorized to perform dynamodb:BatchGetItem"}
	}
	resp, err := h.relay.HandleStream(context.Background(), relaytest.StreamEvent(table, relaytest.Inserts(table, records)...))
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%v, failures %v", err, failures(resp))
	}
	for i, r := range records {
		if got := h.fake.Status(r); got != string(outbox.StatusPublished) {
			t.Errorf("record %d: %s", i, got)
		}
	}
	if !strings.Contains(h.logs.String(), "may lack dynamodb:BatchGetItem") {
		t.Errorf("no hint in the logs:\n%s", h.logs.String())
	}
}

// TestHeldItemStaysFindable: an item without the pending index keys that a
// lagging stream invocation holds gets the keys with the hold, so that when
// the invocation dies before publishing, the reconciler finds it after the
// hold.
func TestHeldItemStaysFindable(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	fake := relaytest.New(t, table)
	cfg := testConfig(table, config.TargetEventBridge, config.ActionMark)
	records := relaytest.Records(table, 1, 32)
	records[0].PendingShard, records[0].PendingSince = "", 0
	fake.PutRecords(records)
	// The hold of an invocation that dies right after it.
	st := &store.Store{Client: fake, Table: table, Now: func() time.Time { return now }, Retry: noSleep}
	held := st.Hold(context.Background(), records, func(outbox.Record) time.Time { return now.Add(time.Minute) })
	if held[0].Err != nil || held[0].Item == nil {
		t.Fatalf("hold: %+v", held[0])
	}
	later := newRelay(t, cfg, fake, retryingAt(func() time.Time { return now.Add(2 * time.Minute) }))
	rep, err := later.Reconcile(context.Background(), relay.ReconcileRequest{Action: relay.ActionReconcile})
	if err != nil || rep.Published != 1 {
		t.Errorf("reconcile after the hold: %+v, %v; want the event published", rep, err)
	}
}

// TestStreamReleasesHoldWhenPublishingFails: a lagging stream invocation
// holds old items before publishing them. When publishing an event fails
// (here, the role may not put events), nothing was published, so the
// invocation gives its hold back without counting the attempt, in the
// writing wave: the mapping's retry of the record publishes it at once.
// When the event was published but marking it failed, the hold stays, as
// the item's backoff.
func TestStreamReleasesHoldWhenPublishingFails(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	h := newHarnessAt(t, testConfig(table, config.TargetEventBridge, config.ActionMark), now)
	records := h.stored(3)
	// Hold, publish, then one writing wave: marks and the release at once.
	waves := []relaytest.Wave{{Op: relaytest.OpUpdateItem, Calls: 3}, {Op: relaytest.OpPutEvents, Calls: 1}, {Op: relaytest.OpUpdateItem, Calls: 3}}
	h.fake.Lockstep(waves, 30*time.Second)
	denied := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "not authorized to perform dynamodb:UpdateItem"}
	// Record 0 cannot be published; record 1 is published, but only its
	// first update (the hold) succeeds; record 2 goes through.
	h.fake.EntryError = relaytest.FailEvent(records[0].EventID, "AccessDeniedException")
	h.fake.WriteError = func(sk string, attempt int) error {
		if sk == records[1].SortKey && attempt > 1 {
			return denied
		}
		return nil
	}
	ev := relaytest.StreamEvent(table, relaytest.Inserts(table, records)...)
	resp, err := h.relay.HandleStream(context.Background(), ev)
	if want := []string{relaytest.SequenceNumber(0), relaytest.SequenceNumber(1)}; err != nil || !slices.Equal(failures(resp), want) {
		t.Fatalf("%v, failures %v; want %v", err, failures(resp), want)
	}
	if got := h.fake.Waves(); !slices.Equal(got, waves) {
		t.Errorf("calls in round trips %v, want %v", got, waves)
	}
	released := h.fake.Item(records[0].PartitionKey, records[0].SortKey)
	if next, ok := released[outbox.AttrNextAttemptAt]; ok {
		t.Errorf("record 0 still held until %v after publishing it failed", next)
	}
	if got := attempts(t, table, released); got != records[0].Attempts {
		t.Errorf("record 0: attempts = %d, want %d: a failed publish is no attempt", got, records[0].Attempts)
	}
	kept := h.fake.Item(records[1].PartitionKey, records[1].SortKey)
	wantUntil := store.HoldPolicy{}.Until(now, records[1].Attempts).UnixMilli()
	if got, _ := kept[outbox.AttrNextAttemptAt].(*types.AttributeValueMemberN); got == nil || got.Value != strconv.FormatInt(wantUntil, 10) {
		t.Errorf("record 1: nextAttemptAt = %v, want the hold until %d kept after marking failed", kept[outbox.AttrNextAttemptAt], wantUntil)
	}
	if got := attempts(t, table, kept); got != records[1].Attempts+1 {
		t.Errorf("record 1: attempts = %d, want %d", got, records[1].Attempts+1)
	}

	// The mapping retries both records with the causes fixed: record 0 is
	// published at once; record 1 backs off, held.
	h.fake.EntryError, h.fake.WriteError = nil, nil
	resp, err = h.relay.HandleStream(context.Background(), relaytest.StreamEvent(table, relaytest.Inserts(table, records[:2])...))
	if want := []string{relaytest.SequenceNumber(1)}; err != nil || !slices.Equal(failures(resp), want) {
		t.Fatalf("retry: %v, failures %v; want %v", err, failures(resp), want)
	}
	want := []string{"PUBLISHED", "PENDING", "PUBLISHED"}
	for i, r := range records {
		if got := h.fake.Status(r); got != want[i] {
			t.Errorf("record %d: %s, want %s", i, got, want[i])
		}
	}
	if got := attempts(t, table, h.fake.Item(records[0].PartitionKey, records[0].SortKey)); got != records[0].Attempts+1 {
		t.Errorf("record 0: attempts = %d after it was published, want %d", got, records[0].Attempts+1)
	}
	if dups, distinct := duplicates(h.fake.Published()); dups != 0 || distinct != len(records) {
		t.Errorf("%d duplicates, %d events published; want 0 and %d", dups, distinct, len(records))
	}
}

// attempts is the attempts recorded on item.
func attempts(t *testing.T, table outbox.Table, item map[string]types.AttributeValue) int {
	t.Helper()
	r, err := table.ParseItem(item)
	if err != nil {
		t.Fatalf("parsing %v: %v", item, err)
	}
	return r.Attempts
}
