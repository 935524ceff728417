package relay_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestOrderedPartialBatchFailure: a FIFO target answers a batch entry by
// entry, and a failed entry may be followed by accepted ones of the same
// message group. The target here fails entry k of a hot key (its event 3)
// on every attempt of one invocation while the other entries of the same
// calls are accepted: the hot key stops at 2, no later event of it
// overtakes 3, the other keys go to their end, and once the target accepts
// 3 the key's backlog follows in order, with no inversion.
func TestOrderedPartialBatchFailure(t *testing.T) {
	t.Parallel()
	eachLayoutAndAction(t, func(t *testing.T, table outbox.Table, action config.Action) {
		keys := []string{"hot", "cold-1", "cold-2"}
		h, records := newOrderedHarness(t, table, action, keys, 8)
		var mu sync.Mutex
		failing := ""
		for _, r := range records {
			if r.OrderingKey == "hot" && r.Sequence == 3 {
				failing = r.EventID
			}
		}
		h.fake.SNSSenderFault = func(string) bool { return false }
		h.fake.EntryError = func(id string, _ int) string {
			mu.Lock()
			defer mu.Unlock()
			if id == failing {
				return "InternalError"
			}
			return ""
		}
		h.stream(t, records)
		top := checkInOrder(t, publishedOrder(h, records))
		if top["hot"] != 2 || top["cold-1"] != 8 || top["cold-2"] != 8 {
			t.Errorf("published up to %v, want hot 2 (stopped at its failed event 3), cold-1 and cold-2 8", top)
		}
		if c := cursor(t, h, "hot"); c.Published != 2 {
			t.Errorf("cursor of the hot key at %d, want 2: it never passes a failed event", c.Published)
		}
		for _, r := range records {
			if r.OrderingKey == "hot" && r.Sequence >= 3 && h.fake.Status(r) != string(outbox.StatusPending) {
				t.Errorf("event %d of hot: status %q, want PENDING behind the failed event 3", r.Sequence, h.fake.Status(r))
			}
		}

		mu.Lock()
		failing = ""
		mu.Unlock()
		before := h.fake.Calls(relaytest.OpSendMessageBatch)
		hot := slices.DeleteFunc(slices.Clone(records), func(r outbox.Record) bool { return r.OrderingKey != "hot" || r.Sequence < 3 })
		if got := h.stream(t, hot); len(got) != 0 {
			t.Fatalf("redelivery: batchItemFailures = %v, want none", got)
		}
		top = checkInOrder(t, publishedOrder(h, records))
		if top["hot"] != 8 {
			t.Errorf("hot key published up to %d after the target accepted event 3, want 8", top["hot"])
		}
		if c := cursor(t, h, "hot"); c.Published != 8 {
			t.Errorf("cursor of the hot key at %d, want 8", c.Published)
		}
		if n := h.fake.Calls(relaytest.OpSendMessageBatch) - before; n != 6 {
			t.Errorf("%d publish calls for the hot key's events 3 to 8, want 6: one event of a key per call", n)
		}
	})
}

// TestOrderedDeadlineAdvancesWhatWasPublished: a key's events go out one
// round trip each, so one key's large batch can outlast the invocation.
// The gate starts no round in the last batch.DeadlineReserve: the cursor
// moves past what was accepted, the rest stays pending as a batch item
// failure, and the stream's retry goes on from there, in order.
func TestOrderedDeadlineAdvancesWhatWasPublished(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	cfg := orderedConfig(table, config.ActionMark)
	// Each publish call takes a second of an invocation of 10 s; the
	// reserve is 10/4 = 2.5 s: rounds start while 2.5 s or more are left.
	h, budget := newDeadlineHarness(t, cfg, 10*time.Second)
	records := orderedRecords(table, []string{"hot"}, 12)
	h.fake.PutRecords(records)
	failed := h.stream(t, records)
	top := checkInOrder(t, publishedOrder(h, records))
	if top["hot"] != 8 {
		t.Errorf("published up to %d before the deadline, want 8 (rounds started with 10 to 3 s left)", top["hot"])
	}
	if c := cursor(t, h, "hot"); c.Published != top["hot"] {
		t.Errorf("cursor at %d, want %d: advanced past what was accepted", c.Published, top["hot"])
	}
	var want []string
	for i := 8; i < len(records); i++ {
		want = append(want, relaytest.SequenceNumber(i))
	}
	if !slices.Equal(failed, want) {
		t.Errorf("batchItemFailures = %v, want %v: the events not tried, the stream retries from the first", failed, want)
	}
	for _, r := range records[8:] {
		if got := h.fake.Status(r); got != string(outbox.StatusPending) {
			t.Errorf("event %d: status %q, want PENDING", r.Sequence, got)
		}
	}

	budget.set(time.Hour)
	if got := h.stream(t, records[8:]); len(got) != 0 {
		t.Fatalf("retry: batchItemFailures = %v, want none", got)
	}
	if top := checkInOrder(t, publishedOrder(h, records)); top["hot"] != 12 {
		t.Errorf("published up to %d after the retry, want 12", top["hot"])
	}
}

// TestOrderedDeadlineStopsChaining: near the deadline, the invocation that
// publishes a key's missing event does not go on with the events
// registered after it: they stay registered, pending, for the next relay
// that advances the cursor or for the reconciler.
func TestOrderedDeadlineStopsChaining(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	cfg := orderedConfig(table, config.ActionMark)
	// 1.2 s left, a reserve of 0.3 s: after the first call, 0.2 s is left.
	h, _ := newDeadlineHarness(t, cfg, 1200*time.Millisecond)
	records := orderedRecords(table, []string{"k"}, 4)
	h.fake.PutRecords(records)
	if got := h.stream(t, records[1:]); len(got) != 0 {
		t.Fatalf("batchItemFailures = %v, want none: the events are registered", got)
	}
	if got := h.stream(t, records[:1]); len(got) != 0 {
		t.Fatalf("event 1: batchItemFailures = %v, want none", got)
	}
	if order := publishedOrder(h, records); !slices.Equal(order["k"], []int64{1}) {
		t.Errorf("published %v, want only 1: the deadline is near once it is", order["k"])
	}
	if c := cursor(t, h, "k"); c.Published != 1 || len(c.Waiting) != 3 {
		t.Errorf("cursor %+v: want at 1 with events 2 to 4 registered", c)
	}
	for _, r := range records[1:] {
		if got := h.fake.Status(r); got != string(outbox.StatusPending) {
			t.Errorf("event %d: status %q, want PENDING", r.Sequence, got)
		}
	}
}

// budget is the time an invocation has, less a second per publish call
// (newDeadlineHarness).
type budget struct {
	mu   sync.Mutex
	left time.Duration
}

func (b *budget) set(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left = d
}

// newDeadlineHarness returns a harness whose invocations have b's time,
// each publish call taking a second of it, and b.
func newDeadlineHarness(t *testing.T, cfg config.Config, left time.Duration) (*harness, *budget) {
	t.Helper()
	h := newHarness(t, cfg)
	b := &budget{left: left}
	h.relay = newRelay(t, cfg, h.fake, relay.Options{
		Now: func() time.Time { return streamNow }, Retry: &noSleep,
		Remaining: func(context.Context) (time.Duration, bool) {
			b.mu.Lock()
			defer b.mu.Unlock()
			return b.left - time.Duration(h.fake.Calls(relaytest.OpSendMessageBatch))*time.Second, true
		},
	})
	return h, b
}
