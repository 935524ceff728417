package relay_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// orderedConfig is an ordered relay's configuration: a FIFO queue.
func orderedConfig(table outbox.Table, action config.Action) config.Config {
	cfg := testConfig(table, targetkind.SQS, action)
	cfg.Target.QueueARN += ".fifo"
	cfg.Ordered = true
	return cfg
}

// orderedRecords returns, for each key, perKey records of that ordering key
// with the sequences 1 to perKey, in the order they were written; in a
// shared table they share their key's partition.
func orderedRecords(table outbox.Table, keys []string, perKey int) []outbox.Record {
	records := relaytest.Records(table, len(keys)*perKey, 32)
	for i := range records {
		r := &records[i]
		r.OrderingKey, r.Sequence = keys[i%len(keys)], int64(i/len(keys)+1)
		if table.Layout == outbox.LayoutShared {
			r.PartitionKey = r.OrderingKey
		}
	}
	return records
}

// newOrderedHarness returns a harness of an ordered relay on table that
// holds the records orderedRecords returns, pending, and those records.
func newOrderedHarness(t *testing.T, table outbox.Table, action config.Action, keys []string, perKey int) (*harness, []outbox.Record) {
	t.Helper()
	h := newHarness(t, orderedConfig(table, action))
	records := orderedRecords(table, keys, perKey)
	h.fake.PutRecords(records)
	return h, records
}

// publishedOrder returns, per ordering key, the sequences of the events of
// records in the order the target accepted them, duplicates included.
func publishedOrder(h *harness, records []outbox.Record) map[string][]int64 {
	byID := map[string]outbox.Record{}
	for _, r := range records {
		byID[r.EventID] = r
	}
	order := map[string][]int64{}
	for _, p := range h.fake.Published() {
		if r, ok := byID[p.EventID]; ok {
			order[r.OrderingKey] = append(order[r.OrderingKey], r.Sequence)
		}
	}
	return order
}

// checkInOrder fails when a key's events reached the target out of order:
// an event first published after a later one of its key, or a gap. A
// second copy of an event already published is no inversion: consumers
// drop it by its id. It returns, per key, the highest sequence published.
func checkInOrder(t *testing.T, order map[string][]int64) map[string]int64 {
	t.Helper()
	top := map[string]int64{}
	for key, seqs := range order {
		for _, s := range seqs {
			switch {
			case s <= top[key]:
				// A second copy.
			case s != top[key]+1:
				t.Errorf("key %s: event %d published after %d, before %d: order %v", key, s, top[key], top[key]+1, seqs)
			default:
				top[key] = s
			}
		}
	}
	return top
}

// cursor returns the published sequence of key's cursor item; 0 without one.
func cursor(t *testing.T, h *harness, key string) outbox.Cursor {
	t.Helper()
	c, err := outbox.ParseCursor(h.fake.Item(key, outbox.CursorSortKey))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (h *harness) stream(t *testing.T, records []outbox.Record) []string {
	t.Helper()
	return h.handleInserts(t, records)
}

// TestOrderedOutOfOrderBatch: a batch whose records surface shuffled is
// published in sequence per key, one event of a key per call, and every
// key's cursor ends at its last event, in both published actions.
func TestOrderedOutOfOrderBatch(t *testing.T) {
	t.Parallel()
	eachLayoutAndAction(t, func(t *testing.T, table outbox.Table, action config.Action) {
		keys := []string{"account-1", "account-2", "account-3"}
		h, records := newOrderedHarness(t, table, action, keys, 5)
		shuffled := slices.Clone(records)
		rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got := h.stream(t, shuffled); len(got) != 0 {
			t.Fatalf("batchItemFailures = %v, want none", got)
		}
		top := checkInOrder(t, publishedOrder(h, records))
		for _, k := range keys {
			if top[k] != 5 {
				t.Errorf("key %s: published up to %d, want 5", k, top[k])
			}
			if c := cursor(t, h, k); c.Published != 5 {
				t.Errorf("key %s: cursor at %d, want 5", k, c.Published)
			}
		}
		if got := h.fake.Calls(relaytest.OpSendMessageBatch); got != 5 {
			t.Errorf("%d publish calls, want 5: one round per sequence, the 3 keys together", got)
		}
		for _, r := range records {
			want := string(outbox.StatusPublished)
			if action == config.ActionDelete {
				want = ""
			}
			if got := h.fake.Status(r); got != want {
				t.Errorf("event %d of %s: status %q, want %q", r.Sequence, r.OrderingKey, got, want)
			}
		}
	})
}

// TestOrderedGapChainedFromCursor: young events whose predecessor has not
// surfaced yet are not published but registered on their key's cursor, so
// their records need no retry; the invocation that publishes the
// predecessor publishes them next, in order.
func TestOrderedGapChainedFromCursor(t *testing.T) {
	t.Parallel()
	eachAction(t, func(t *testing.T, action config.Action) {
		table := layouts["dedicated"]
		h, records := newOrderedHarness(t, table, action, []string{"k"}, 4)
		if got := h.stream(t, records[2:]); len(got) != 0 {
			t.Fatalf("batchItemFailures = %v, want none: the events are registered", got)
		}
		if got := h.fake.Published(); len(got) != 0 {
			t.Fatalf("published %d events while event 2 is missing, want none", len(got))
		}
		if got := h.stream(t, records[1:2]); len(got) != 0 {
			t.Fatalf("event 2: batchItemFailures = %v, want none: it registers too", got)
		}
		if c := cursor(t, h, "k"); len(c.Waiting) != 3 || c.Exists {
			t.Fatalf("cursor %+v: want events 2 to 4 registered, nothing published", c)
		}
		if got := h.stream(t, records[:1]); len(got) != 0 {
			t.Fatalf("event 1: batchItemFailures = %v", got)
		}
		order := publishedOrder(h, records)
		if !slices.Equal(order["k"], []int64{1, 2, 3, 4}) {
			t.Errorf("published %v, want 1 to 4", order["k"])
		}
		if c := cursor(t, h, "k"); c.Published != 4 || len(c.Waiting) != 0 {
			t.Errorf("cursor %+v: want at 4 with nothing registered", c)
		}
		for _, r := range records {
			want := map[config.Action]string{config.ActionMark: string(outbox.StatusPublished), config.ActionDelete: ""}[action]
			if got := h.fake.Status(r); got != want {
				t.Errorf("event %d: status %q, want %q", r.Sequence, got, want)
			}
		}
	})
}

// TestOrderedChainLeavesAHeldEventToItsHolder: an event registered on its
// key's cursor that another invocation holds (a reconciler run that found
// it on its own, and publishes it) is not published by the invocation that
// publishes its predecessor: it goes out once, from its holder.
func TestOrderedChainLeavesAHeldEventToItsHolder(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	h, records := newOrderedHarness(t, table, config.ActionMark, []string{"k"}, 3)
	if got := h.stream(t, records[1:]); len(got) != 0 {
		t.Fatalf("events 2 and 3: batchItemFailures = %v, want none: they register", got)
	}
	if _, err := h.fake.UpdateItem(context.Background(), table.Hold(records[1], now, now.Add(time.Hour))); err != nil {
		t.Fatalf("holding event 2 as another invocation: %v", err)
	}
	if got := h.stream(t, records[:1]); len(got) != 0 {
		t.Fatalf("event 1: batchItemFailures = %v", got)
	}
	if order := publishedOrder(h, records); !slices.Equal(order["k"], []int64{1}) {
		t.Errorf("published %v, want 1 only: event 2 is its holder's to publish, and 3 follows it", order["k"])
	}
	if got := h.fake.Status(records[1]); got != string(outbox.StatusPending) {
		t.Errorf("event 2 is %s, want PENDING, held by its holder", got)
	}
	if c := cursor(t, h, "k"); c.Published != 1 {
		t.Errorf("cursor %+v, want at 1", c)
	}
}

// TestOrderedGapWaitsForStreamRetry: a young event after a gap that its
// key's cursor cannot register (it holds as many as it may) is retried by
// the stream instead, and published once its predecessor is.
func TestOrderedGapWaitsForStreamRetry(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	h := newHarness(t, orderedConfig(table, config.ActionMark))
	full := map[string]types.AttributeValue{
		table.PartitionKey: &types.AttributeValueMemberS{Value: "k"}, table.SortKey: &types.AttributeValueMemberS{Value: outbox.CursorSortKey},
	}
	for n := range outbox.MaxWaitingRegistered {
		full[fmt.Sprintf("%s%d", outbox.WaitingAttributePrefix, 1000+n)] = &types.AttributeValueMemberL{Value: []types.AttributeValue{
			&types.AttributeValueMemberS{Value: "none"}, &types.AttributeValueMemberS{Value: "none"}}}
	}
	h.fake.Put(full)
	records := orderedRecords(table, []string{"k"}, 3)
	h.fake.PutRecords(records)
	if got := h.stream(t, records[1:]); len(got) != 2 {
		t.Fatalf("batchItemFailures = %v, want the 2 events after the gap", got)
	}
	if got := h.stream(t, records[:1]); len(got) != 0 {
		t.Fatalf("event 1: batchItemFailures = %v", got)
	}
	if got := h.stream(t, records[1:]); len(got) != 0 {
		t.Fatalf("retry: batchItemFailures = %v", got)
	}
	if top := checkInOrder(t, publishedOrder(h, records)); top["k"] != 3 {
		t.Errorf("published up to %d, want 3", top["k"])
	}
}

// TestOrderedGapResolvedFromTable: old events after a gap leave the stream
// (no batch item failure, so the shard moves on), and the reconciler finds
// the key's pending events in the table, whatever their pending-index
// shards, and publishes them all in order in one run.
func TestOrderedGapResolvedFromTable(t *testing.T) {
	t.Parallel()
	for layoutName, table := range layouts {
		t.Run(layoutName, func(t *testing.T) {
			t.Parallel()
			h := newHarnessAt(t, orderedConfig(table, config.ActionDelete), now)
			records := orderedRecords(table, []string{"k1", "k2"}, 6)
			h.fake.PutRecords(records)
			late := slices.DeleteFunc(slices.Clone(records), func(r outbox.Record) bool { return r.Sequence == 1 })
			if got := h.stream(t, late); len(got) != 0 {
				t.Fatalf("batchItemFailures = %v, want none for old events: the reconciler takes them", got)
			}
			if got := h.fake.Published(); len(got) != 0 {
				t.Fatalf("published %d events while event 1 is missing, want none", len(got))
			}
			report, err := h.relay.Reconcile(context.Background(), relay.ReconcileRequest{Action: relay.ActionReconcile})
			if err != nil {
				t.Fatal(err)
			}
			if report.Waiting != 0 || report.Published == 0 {
				t.Errorf("report %+v: want events published, none waiting", report)
			}
			top := checkInOrder(t, publishedOrder(h, records))
			if top["k1"] != 6 || top["k2"] != 6 {
				t.Errorf("published up to %v, want 6 for both keys", top)
			}
			for _, r := range records {
				if got := h.fake.Status(r); got != "" {
					t.Errorf("event %d of %s: status %q, want deleted", r.Sequence, r.OrderingKey, got)
				}
			}
		})
	}
}

// TestOrderedCrashBetweenPublishAndCursor: when the cursor cannot be
// advanced after the target accepted the events, they stay pending and
// their records are retried: the retry publishes them again (a second
// copy), in order, and nothing after them is published before.
func TestOrderedCrashBetweenPublishAndCursor(t *testing.T) {
	t.Parallel()
	table := layouts["shared"]
	h, records := newOrderedHarness(t, table, config.ActionMark, []string{"k"}, 4)
	h.fake.WriteError = func(sk string, _ int) error {
		if sk == outbox.CursorSortKey {
			return &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "not authorized to perform dynamodb:UpdateItem"}
		}
		return nil
	}
	if got := h.stream(t, records[:2]); len(got) != 2 {
		t.Fatalf("batchItemFailures = %v, want both: published, but not recorded", got)
	}
	for _, r := range records[:2] {
		if got := h.fake.Status(r); got != string(outbox.StatusPending) {
			t.Errorf("event %d: status %q, want PENDING until the cursor moves", r.Sequence, got)
		}
	}
	if c := cursor(t, h, "k"); c.Published != 0 {
		t.Fatalf("cursor at %d, want 0", c.Published)
	}
	h.fake.WriteError = nil
	if got := h.stream(t, records); len(got) != 0 {
		t.Fatalf("retry: batchItemFailures = %v", got)
	}
	order := publishedOrder(h, records)
	if want := []int64{1, 2, 1, 2, 3, 4}; !slices.Equal(order["k"], want) {
		t.Errorf("published %v, want %v: 1 and 2 again, then the rest", order["k"], want)
	}
	checkInOrder(t, order)
}

// TestOrderedCrashBetweenCursorAndSettle: events the cursor covers but that
// are still pending (the relay stopped after moving the cursor) are
// settled without being published again: a copy published after later
// events would reach the consumer out of order.
func TestOrderedCrashBetweenCursorAndSettle(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	h, records := newOrderedHarness(t, table, config.ActionDelete, []string{"k"}, 5)
	h.fake.Put(map[string]types.AttributeValue{
		table.PartitionKey: &types.AttributeValueMemberS{Value: "k"}, table.SortKey: &types.AttributeValueMemberS{Value: outbox.CursorSortKey},
		outbox.AttrPublishedSequence: nAttr(3),
	})
	if got := h.stream(t, records); len(got) != 0 {
		t.Fatalf("batchItemFailures = %v", got)
	}
	if order := publishedOrder(h, records); !slices.Equal(order["k"], []int64{4, 5}) {
		t.Errorf("published %v, want only 4 and 5", order["k"])
	}
	for _, r := range records {
		if got := h.fake.Status(r); got != "" {
			t.Errorf("event %d: status %q, want deleted", r.Sequence, got)
		}
	}
}

// TestOrderedPoisonHoldsItsKeyOnly: a poison event is marked FAILED and
// counted in EventsFailed; the later events of its key wait behind it
// without holding the stream, and every other key is published.
func TestOrderedPoisonHoldsItsKeyOnly(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	h, records := newOrderedHarness(t, table, config.ActionMark, []string{"bad", "good"}, 4)
	poison := records[2] // "bad", sequence 2
	h.fake.EntryError = relaytest.FailEvent(poison.EventID, "InvalidMessageContents")
	if got := h.stream(t, records); len(got) != 0 {
		t.Fatalf("batchItemFailures = %v, want none: a poisoned key holds no shard", got)
	}
	top := checkInOrder(t, publishedOrder(h, records))
	if top["good"] != 4 || top["bad"] != 1 {
		t.Errorf("published up to %v, want good 4 and bad 1", top)
	}
	if got := h.fake.Status(poison); got != string(outbox.StatusFailed) {
		t.Errorf("poison event: status %q, want FAILED", got)
	}
	if c := cursor(t, h, "bad"); !c.IsBlocked() || c.Blocked != 2 {
		t.Errorf("cursor of the poisoned key %+v, want blocked by 2", c)
	}
	h.checkMetrics(t, map[string]float64{"EventsFailed": 1})

	// The next delivery of the waiting events is done with at once, even
	// while young: the key waits behind a FAILED event.
	if got := h.stream(t, records[4:]); len(got) != 0 {
		t.Fatalf("redelivery: batchItemFailures = %v, want none", got)
	}
	// Requeued after a fix, the event and those behind it are published
	// in order by the reconciler.
	h.fake.EntryError = nil
	if _, err := h.fake.UpdateItem(context.Background(), table.Requeue(poison)); err != nil {
		t.Fatalf("requeueing the poison event: %v", err)
	}
	report := reconcileWith(t, h, now)
	if report.Published != 3 || report.Waiting != 0 {
		t.Errorf("report %+v: want events 2 to 4 of bad published", report)
	}
	if top := checkInOrder(t, publishedOrder(h, records)); top["bad"] != 4 {
		t.Errorf("bad published up to %d after requeue, want 4", top["bad"])
	}
}

// TestOrderedSkipReleasesKey: once an operator skipped the FAILED event
// (outbox.Table.SkipActions, applied here one update after the other), the
// reconciler publishes the events behind it, and never the skipped one.
func TestOrderedSkipReleasesKey(t *testing.T) {
	t.Parallel()
	table := layouts["shared"]
	h, records := newOrderedHarness(t, table, config.ActionDelete, []string{"k"}, 3)
	h.fake.EntryError = relaytest.FailEvent(records[1].EventID, "InvalidMessageContents")
	if got := h.stream(t, records); len(got) != 0 {
		t.Fatalf("batchItemFailures = %v", got)
	}
	skipped := records[1]
	skipped.Status = outbox.StatusFailed
	for _, action := range table.SkipActions(skipped, now) {
		u := action.Update
		if _, err := h.fake.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
			TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression, ConditionExpression: u.ConditionExpression,
			ExpressionAttributeNames: u.ExpressionAttributeNames, ExpressionAttributeValues: u.ExpressionAttributeValues,
		}); err != nil {
			t.Fatalf("skipping: %v", err)
		}
	}
	if report := reconcileWith(t, h, now); report.Published != 1 {
		t.Errorf("report %+v, want event 3 published", report)
	}
	if order := publishedOrder(h, records); !slices.Equal(order["k"], []int64{1, 3}) {
		t.Errorf("published %v, want 1 then 3", order["k"])
	}
	if got := h.fake.Status(skipped); got != string(outbox.StatusSkipped) {
		t.Errorf("skipped event: status %q, want SKIPPED", got)
	}
}

// reconcileWith runs a reconciler on h's table at clock at, with the
// request's minimum age when one is given.
func reconcileWith(t *testing.T, h *harness, at time.Time, minAgeSeconds ...float64) reconcile.Report {
	t.Helper()
	action := config.ActionMark
	if h.fake.Table.NoPendingIndex {
		action = config.ActionDelete
	}
	cfg := orderedConfig(h.fake.Table, action)
	r := newRelay(t, cfg, h.fake, retryingAt(func() time.Time { return at }))
	req := relay.ReconcileRequest{Action: relay.ActionReconcile}
	if len(minAgeSeconds) > 0 {
		req.MinAgeSeconds = &minAgeSeconds[0]
	}
	report, err := r.Reconcile(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return report.Report
}

// TestOrderedKeyStartsWithoutCursor: a key whose earlier events the relay
// published before ordered mode has no cursor; a complete reconciler run
// starts it at the key's lowest pending event, so that nothing is stranded.
func TestOrderedKeyStartsWithoutCursor(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	h := newHarnessAt(t, orderedConfig(table, config.ActionMark), now)
	records := orderedRecords(table, []string{"k"}, 6)
	h.fake.PutRecords(records[3:]) // 1 to 3 were published and deleted before
	report := reconcileWith(t, h, now)
	if report.Published != 3 {
		t.Errorf("report %+v, want events 4 to 6 published", report)
	}
	if order := publishedOrder(h, records); !slices.Equal(order["k"], []int64{4, 5, 6}) {
		t.Errorf("published %v, want 4, 5, 6", order["k"])
	}
	// An event of the key that was FAILED then, requeued now, is below the
	// cursor but never went through it: it is published late, not dropped.
	h.fake.PutRecord(records[1])
	if got := h.stream(t, records[1:2]); len(got) != 0 {
		t.Fatalf("the requeued event 2: batchItemFailures = %v", got)
	}
	if order := publishedOrder(h, records); !slices.Equal(order["k"], []int64{4, 5, 6, 2}) {
		t.Errorf("published %v, want 4, 5, 6, then 2 late", order["k"])
	}
	if got := h.fake.Status(records[1]); got != string(outbox.StatusPublished) {
		t.Errorf("the requeued event 2: status %q, want PUBLISHED", got)
	}
	// A young key is not started: its first event may be in flight.
	young := newHarness(t, orderedConfig(table, config.ActionMark))
	fresh := orderedRecords(table, []string{"k"}, 3)
	young.fake.PutRecords(fresh[1:])
	if report := reconcileWith(t, young, streamNow.Add(6*time.Minute)); report.Published != 0 || report.Waiting != 2 {
		t.Errorf("young key: report %+v, want its 2 events waiting", report)
	}
	// Nor by an operator's run without minimum age: the first event may
	// not be in the pending index yet.
	if report := reconcileWith(t, young, streamNow.Add(time.Minute), 0); report.Published != 0 || report.Waiting != 2 {
		t.Errorf("young key, a run without minimum age: report %+v, want its 2 events waiting", report)
	}
}

// TestOrderedKeyResumesAfterOrderedModeWasOff: a cursor that stayed behind
// while ordered mode was off moves to the key's lowest pending event, but
// never past a held one: a relay may be publishing it.
func TestOrderedKeyResumesAfterOrderedModeWasOff(t *testing.T) {
	t.Parallel()
	for name, table := range map[string]outbox.Table{
		"pending index": layouts["dedicated"],
		"scan":          outbox.Table{Name: "orders-outbox", NoPendingIndex: true}.WithDefaults(),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkResumesAfterOff(t, table)
		})
	}
}

func checkResumesAfterOff(t *testing.T, table outbox.Table) {
	cursorAt := func(h *harness, key string, n int64) {
		h.fake.Put(map[string]types.AttributeValue{
			table.PartitionKey: &types.AttributeValueMemberS{Value: key}, table.SortKey: &types.AttributeValueMemberS{Value: outbox.CursorSortKey},
			outbox.AttrPublishedSequence: nAttr(n),
		})
	}
	h := newHarnessAt(t, orderedConfig(table, config.ActionDelete), now)
	records := orderedRecords(table, []string{"k"}, 6)
	cursorAt(h, "k", 2)
	h.fake.PutRecords(records[4:]) // 3 and 4 were published while ordered mode was off
	if report := reconcileWith(t, h, now); report.Published != 2 {
		t.Errorf("report %+v, want events 5 and 6 published", report)
	}
	if c := cursor(t, h, "k"); c.Published != 6 {
		t.Errorf("cursor at %d, want 6", c.Published)
	}

	held := newHarnessAt(t, orderedConfig(table, config.ActionDelete), now)
	cursorAt(held, "k", 2)
	held.fake.PutRecords(records[3:])
	third := table.Item(records[2])
	third[outbox.AttrNextAttemptAt] = nAttr(now.Add(time.Minute).UnixMilli())
	held.fake.Put(third)
	if report := reconcileWith(t, held, now); report.Published != 0 {
		t.Errorf("with event 3 held: report %+v, want nothing published", report)
	}
	if c := cursor(t, held, "k"); c.Published != 2 {
		t.Errorf("with event 3 held: cursor at %d, want it left at 2", c.Published)
	}
}

// TestOrderedUnsequencedEvents: events without a sequence are published as
// in unordered mode, beside ordered ones.
func TestOrderedUnsequencedEvents(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	h := newHarness(t, orderedConfig(table, config.ActionMark))
	plain := h.stored(3)
	ordered := orderedRecords(table, []string{"k"}, 2)
	h.fake.PutRecords(ordered)
	if got := h.stream(t, append(slices.Clone(plain), ordered...)); len(got) != 0 {
		t.Fatalf("batchItemFailures = %v", got)
	}
	for _, r := range append(plain, ordered...) {
		if got := h.fake.Status(r); got != string(outbox.StatusPublished) {
			t.Errorf("%s: status %q, want PUBLISHED", fmt.Sprint(r.EventID, "/", r.Sequence), got)
		}
	}
}

// TestOrderedWaitingEventGetsIndexKeys: an event written without the
// pending index keys that waits behind a gap gets them, so that the
// reconciler finds it if the stream's retries run out.
func TestOrderedWaitingEventGetsIndexKeys(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	h := newHarness(t, orderedConfig(table, config.ActionMark))
	records := orderedRecords(table, []string{"k"}, 2)
	second := records[1]
	second.PendingShard, second.PendingSince = "", 0
	h.fake.PutRecord(second)
	if got := h.stream(t, []outbox.Record{second}); len(got) != 0 {
		t.Fatalf("batchItemFailures = %v, want none: it is registered", got)
	}
	if _, ok := h.fake.Item(second.PartitionKey, second.SortKey)[outbox.AttrPendingShard]; !ok {
		t.Errorf("the waiting event has no %s: the reconciler cannot find it", outbox.AttrPendingShard)
	}
}

// TestOrderedReconcileCountsChainedEvents: the events registered on a
// key's cursor that a reconciler run publishes after the event they waited
// for, without having found them itself (they are younger than its
// minimum age), count as published in its report.
func TestOrderedReconcileCountsChainedEvents(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	h := newHarness(t, orderedConfig(table, config.ActionMark))
	records := orderedRecords(table, []string{"k"}, 4)
	first := &records[0]
	first.OccurredAt = first.OccurredAt.Add(-time.Hour)
	first.PendingSince = first.OccurredAt.UnixMilli()
	h.fake.PutRecords(records)
	if got := h.stream(t, records[1:]); len(got) != 0 {
		t.Fatalf("batchItemFailures = %v, want none: the events are registered", got)
	}
	if c := cursor(t, h, "k"); len(c.Waiting) != 3 {
		t.Fatalf("cursor %+v: want events 2 to 4 registered", c)
	}
	h.fake.ResetCounters()
	report := reconcileWith(t, h, streamNow, time.Minute.Seconds())
	if report.Found != 1 || report.Published != 4 || report.Waiting != 0 {
		t.Errorf("report %+v: want event 1 found, it and the 3 registered after it published", report)
	}
	if order := publishedOrder(h, records); !slices.Equal(order["k"], []int64{1, 2, 3, 4}) {
		t.Errorf("published %v, want 1 to 4", order["k"])
	}
}

// brokenItem returns the item of r with a detail that is not a JSON object:
// it breaks the record contract, but its ordering key and sequence can be
// read.
func brokenItem(table outbox.Table, r outbox.Record, status outbox.Status) map[string]types.AttributeValue {
	item := table.Item(r)
	item[outbox.AttrDetail] = &types.AttributeValueMemberS{Value: `["not","an","object"]`}
	item[outbox.AttrStatus] = &types.AttributeValueMemberS{Value: string(status)}
	if status != outbox.StatusPending {
		delete(item, outbox.AttrPendingShard)
		delete(item, outbox.AttrPendingSince)
	}
	return item
}

// skip applies outbox.Table.SkipActions to the FAILED event r, one update
// after the other.
func skip(t *testing.T, h *harness, r outbox.Record) {
	t.Helper()
	r.Status = outbox.StatusFailed
	for _, action := range h.fake.Table.SkipActions(r, now) {
		u := action.Update
		if _, err := h.fake.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
			TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression, ConditionExpression: u.ConditionExpression,
			ExpressionAttributeNames: u.ExpressionAttributeNames, ExpressionAttributeValues: u.ExpressionAttributeValues,
		}); err != nil {
			t.Fatalf("skipping: %v", err)
		}
	}
}

// TestOrderedBrokenEventHoldsItsKey: an ordered event whose item breaks the
// record contract, with a readable ordering key and sequence, holds its key
// like a rejected one, however it is met: its cursor is blocked at it, and
// the events after it are never published, not even by a reconciler run
// long past MinStartAge, until it is skipped. A FAILED broken event whose
// cursor was never blocked (marked so by an earlier relay) holds its key
// too: the reconciler blocks the cursor at it instead of passing it over.
func TestOrderedBrokenEventHoldsItsKey(t *testing.T) {
	t.Parallel()
	for name, meet := range map[string]func(t *testing.T, h *harness, records []outbox.Record){
		"one stream batch": func(t *testing.T, h *harness, records []outbox.Record) {
			h.fake.Put(brokenItem(h.fake.Table, records[3], outbox.StatusPending))
			recs := relaytest.Inserts(h.fake.Table, records)
			recs[3] = relaytest.StreamRecord{NewImage: brokenItem(h.fake.Table, records[3], outbox.StatusPending)}
			resp, err := h.relay.HandleStream(context.Background(), relaytest.StreamEvent(h.fake.Table, recs...))
			if err != nil || len(failures(resp)) != 0 {
				t.Fatalf("stream: batchItemFailures %v, error %v", failures(resp), err)
			}
		},
		"after the events behind it": func(t *testing.T, h *harness, records []outbox.Record) {
			broken := brokenItem(h.fake.Table, records[3], outbox.StatusPending)
			h.fake.Put(broken)
			if got := h.stream(t, slices.Concat(records[:3], records[4:])); len(got) != 0 {
				t.Fatalf("stream: batchItemFailures %v", got)
			}
			resp, err := h.relay.HandleStream(context.Background(), relaytest.StreamEvent(h.fake.Table, relaytest.StreamRecord{NewImage: broken}))
			if err != nil || len(failures(resp)) != 0 {
				t.Fatalf("stream of the broken event: batchItemFailures %v, error %v", failures(resp), err)
			}
		},
		"by the reconciler": func(t *testing.T, h *harness, records []outbox.Record) {
			h.fake.Put(brokenItem(h.fake.Table, records[3], outbox.StatusPending))
			if report := reconcileWith(t, h, now); report.Published != 3 || report.Poison != 1 || report.Blocked != 6 {
				t.Errorf("report %+v, want 1 to 3 published, 4 poison, 5 to 10 blocked", report)
			}
		},
		"FAILED, its cursor not blocked": func(t *testing.T, h *harness, records []outbox.Record) {
			if got := h.stream(t, records[:3]); len(got) != 0 {
				t.Fatalf("stream: batchItemFailures %v", got)
			}
			h.fake.Put(brokenItem(h.fake.Table, records[3], outbox.StatusFailed))
			if report := reconcileWith(t, h, now); report.Published != 0 || report.Waiting != 6 {
				t.Errorf("report %+v, want 5 to 10 waiting", report)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, orderedConfig(layouts["dedicated"], config.ActionMark))
			records := orderedRecords(h.fake.Table, []string{"k"}, 10)
			h.fake.PutRecords(slices.Concat(records[:3], records[4:]))
			meet(t, h, records)
			checkHeldByBroken(t, h, records)
		})
	}
}

// checkHeldByBroken checks that key k is held by its FAILED event 4, after
// a reconciler run past MinStartAge too, and that once 4 is skipped, 5 to
// 10 are published in order.
func checkHeldByBroken(t *testing.T, h *harness, records []outbox.Record) {
	t.Helper()
	for run := range 2 {
		if got := h.fake.Status(records[3]); got != string(outbox.StatusFailed) {
			t.Fatalf("run %d: the broken event: status %q, want FAILED", run, got)
		}
		if c := cursor(t, h, "k"); c.Published != 3 || !c.IsBlocked() || c.Blocked != 4 {
			t.Fatalf("run %d: cursor %+v, want at 3, blocked by 4", run, c)
		}
		if order := publishedOrder(h, records); !slices.Equal(order["k"], []int64{1, 2, 3}) {
			t.Fatalf("run %d: published %v, want 1 to 3 only", run, order["k"])
		}
		for _, r := range records[4:] {
			if got := h.fake.Status(r); got != string(outbox.StatusPending) {
				t.Fatalf("run %d: event %d: status %q, want PENDING", run, r.Sequence, got)
			}
		}
		if report := reconcileWith(t, h, now.Add(2*reconcile.MinStartAge)); report.Published != 0 || report.Blocked != 6 {
			t.Errorf("run %d: report %+v, want nothing published and 5 to 10 blocked", run, report)
		}
	}
	skip(t, h, records[3])
	if report := reconcileWith(t, h, now.Add(3*reconcile.MinStartAge)); report.Published != 6 {
		t.Errorf("after the skip: report %+v, want 5 to 10 published", report)
	}
	// A second copy of an event already published is no inversion
	// (checkInOrder): consumers drop it by its id.
	var first []int64
	for _, seq := range publishedOrder(h, records)["k"] {
		if !slices.Contains(first, seq) {
			first = append(first, seq)
		}
	}
	if !slices.Equal(first, []int64{1, 2, 3, 5, 6, 7, 8, 9, 10}) {
		t.Errorf("after the skip: published first %v, want 1 to 3, then 5 to 10, never 4", first)
	}
}

// TestOrderedKeyStartsAtFailedEvent: a key without a cursor whose events
// 1 and 2 were published before ordered mode, and whose event 3 was marked
// FAILED then, is started up to 3, not past it: its cursor is at 2,
// blocked by 3, and 4 to 6 wait until 3 is requeued, then are published in
// order after it.
func TestOrderedKeyStartsAtFailedEvent(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	h := newHarnessAt(t, orderedConfig(table, config.ActionMark), now)
	records := orderedRecords(table, []string{"k"}, 6)
	failed := records[2]
	failed.Status, failed.PendingShard, failed.PendingSince, failed.LastError = outbox.StatusFailed, "", 0, "rejected before ordered mode"
	h.fake.PutRecord(failed)
	h.fake.PutRecords(records[3:])
	if report := reconcileWith(t, h, now); report.Published != 0 || report.Waiting != 3 {
		t.Errorf("report %+v, want 4 to 6 waiting", report)
	}
	if c := cursor(t, h, "k"); c.Published != 2 || c.Started != 3 || !c.IsBlocked() || c.Blocked != 3 {
		t.Fatalf("cursor %+v, want at 2, started at 3, blocked by 3", c)
	}
	if order := publishedOrder(h, records); len(order["k"]) != 0 {
		t.Fatalf("published %v before the FAILED event was requeued, want nothing", order["k"])
	}
	if _, err := h.fake.UpdateItem(context.Background(), table.Requeue(failed)); err != nil {
		t.Fatalf("requeueing the FAILED event: %v", err)
	}
	if report := reconcileWith(t, h, now.Add(reconcile.MinStartAge)); report.Published != 4 {
		t.Errorf("after the requeue: report %+v, want 3 to 6 published", report)
	}
	if order := publishedOrder(h, records); !slices.Equal(order["k"], []int64{3, 4, 5, 6}) {
		t.Errorf("after the requeue: published %v, want 3 to 6", order["k"])
	}
}
