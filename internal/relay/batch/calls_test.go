package batch_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/batch"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/store"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// waitFor bounds every wait of these tests for something another
// goroutine does: far more than it takes on a loaded machine.
const waitFor = 20 * time.Second

// watchedPublisher is the fake SNS FIFO topic's publisher, with a hook run
// before each call with the call's records.
type watchedPublisher struct {
	pub    publish.Publisher
	before func(records []outbox.Record)
}

func (w *watchedPublisher) Publish(ctx context.Context, records []outbox.Record) []publish.Result {
	w.before(records)
	return w.pub.Publish(ctx, records)
}

// orderedGate returns the gate of an ordered relay on the fake's SNS FIFO
// topic, whose calls go through before first, and the pending items of
// perKey[k] events of each key k, put in the table.
func orderedGate(t *testing.T, perKey map[string]int, before func([]outbox.Record)) (*batch.Processor, *relaytest.AWS, []batch.Item) {
	t.Helper()
	table := outbox.Table{Name: "outbox"}.WithDefaults()
	fake := relaytest.New(t, table)
	keys := make([]string, 0, len(perKey))
	total := 0
	for k, n := range perKey {
		keys, total = append(keys, k), total+n
	}
	slices.Sort(keys)
	records := relaytest.Records(table, total, 16)
	i := 0
	for _, k := range keys {
		for seq := 1; seq <= perKey[k]; seq++ {
			records[i].OrderingKey, records[i].Sequence = k, int64(seq)
			i++
		}
	}
	fake.PutRecords(records)
	noSleep := retry.Policy{Attempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }}
	st := &store.Store{Client: fake, Table: table, TTL: time.Hour, Retry: noSleep}
	sns := &targetkind.SNSPublisher{Client: fake, TopicARN: "arn:aws:sns:us-east-1:123456789012:orders.fifo", Retry: noSleep}
	p := &batch.Processor{Publisher: &watchedPublisher{pub: sns, before: before}, Store: st, Cursors: st, Layout: table, Action: config.ActionMark}
	items := make([]batch.Item, len(records))
	for i, r := range records {
		items[i] = batch.Item{Record: r}
	}
	return p, fake, items
}

// checkAllPublished fails t unless every item's outcome is Published and
// its event was published once, in its key's order.
func checkAllPublished(t *testing.T, fake *relaytest.AWS, items []batch.Item, outcomes []batch.Outcome) {
	t.Helper()
	for i, o := range outcomes {
		if o.Status != batch.Published {
			t.Errorf("event %d of %s: outcome %v (%s), want published", items[i].Record.Sequence, items[i].Record.OrderingKey, o.Status, o.Reason)
		}
	}
	byID := map[string]outbox.Record{}
	for _, it := range items {
		byID[it.Record.EventID] = it.Record
	}
	last := map[string]int64{}
	for _, p := range fake.Published() {
		r := byID[p.EventID]
		if r.Sequence != last[r.OrderingKey]+1 {
			t.Fatalf("key %s: event %d published after %d", r.OrderingKey, r.Sequence, last[r.OrderingKey])
		}
		last[r.OrderingKey] = r.Sequence
	}
}

// TestAKeyDoesNotWaitForAnotherKeysCall: a key's next event goes out as
// soon as the call that held its previous one answered, whatever other
// calls are still in flight. The call that holds the eleventh key's only
// event does not answer until the hot key's five events were published;
// in rounds, the hot key's second event would wait for it, for ever.
func TestAKeyDoesNotWaitForAnotherKeysCall(t *testing.T) {
	t.Parallel()
	perKey := map[string]int{"hot": 5}
	for i := range 10 {
		perKey[fmt.Sprintf("cold-%d", i)] = 1
	}
	hotDone := make(chan struct{})
	var once sync.Once
	var late []string
	var mu sync.Mutex
	p, fake, items := orderedGate(t, perKey, func(records []outbox.Record) {
		for _, r := range records {
			if r.OrderingKey == "hot" && r.Sequence == 5 {
				defer once.Do(func() { close(hotDone) })
			}
		}
		if !slices.ContainsFunc(records, func(r outbox.Record) bool { return r.OrderingKey == "cold-9" }) {
			return
		}
		select {
		case <-hotDone:
		case <-time.After(waitFor):
			mu.Lock()
			late = append(late, "cold-9")
			mu.Unlock()
		}
	})
	outcomes := p.Process(context.Background(), items, metrics.New())
	if len(late) > 0 {
		t.Fatalf("the hot key's events were not all sent within %s of the call that holds cold-9's event: they waited for it", waitFor)
	}
	checkAllPublished(t, fake, items, outcomes)
}

// TestAcceptedEventsAreRecordedWhilePublishing: the events a key published
// are recorded (its cursor advanced over them, then their items marked
// PUBLISHED) while its later events are still going out, not all at the
// end of the batch. Before its last event is sent, its first
// batch.CheckpointEvents are recorded.
func TestAcceptedEventsAreRecordedWhilePublishing(t *testing.T) {
	t.Parallel()
	const events = batch.CheckpointEvents + 50
	var fake *relaytest.AWS
	var items []batch.Item
	var recorded error
	p, fake, items := orderedGate(t, map[string]int{"hot": events}, func(records []outbox.Record) {
		if records[0].Sequence != events {
			return
		}
		deadline := time.Now().Add(waitFor)
		for {
			c, err := outbox.ParseCursor(fake.Item("hot", outbox.CursorSortKey))
			first := items[batch.CheckpointEvents-1].Record
			if err == nil && c.Published >= batch.CheckpointEvents && fake.Status(first) == string(outbox.StatusPublished) {
				return
			}
			if time.Now().After(deadline) {
				recorded = fmt.Errorf("cursor %d, event %d %s, when the last event is sent: nothing was recorded while publishing", c.Published, first.Sequence, fake.Status(first))
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	outcomes := p.Process(context.Background(), items, metrics.New())
	if recorded != nil {
		t.Fatal(recorded)
	}
	checkAllPublished(t, fake, items, outcomes)
	if c, err := outbox.ParseCursor(fake.Item("hot", outbox.CursorSortKey)); err != nil || c.Published != events {
		t.Errorf("cursor %+v (%v), want at %d", c, err, events)
	}
}

// TestAFailedCheckpointIsRecordedLater: while the cursor cannot be
// written, no checkpoint records anything and no event is marked; once it
// can, the advance at the end of the batch records every event.
func TestAFailedCheckpointIsRecordedLater(t *testing.T) {
	t.Parallel()
	const events = 2 * batch.CheckpointEvents
	var mu sync.Mutex
	failing := true
	var fake *relaytest.AWS
	var items []batch.Item
	marked := 0
	p, fake, items := orderedGate(t, map[string]int{"hot": events}, func(records []outbox.Record) {
		if records[0].Sequence != events {
			return
		}
		for _, it := range items {
			if fake.Status(it.Record) == string(outbox.StatusPublished) {
				marked++
			}
		}
		mu.Lock()
		failing = false
		mu.Unlock()
	})
	fake.WriteError = func(sortKey string, _ int) error {
		mu.Lock()
		defer mu.Unlock()
		if sortKey == outbox.CursorSortKey && failing {
			return errors.New("AccessDeniedException: not now")
		}
		return nil
	}
	outcomes := p.Process(context.Background(), items, metrics.New())
	if marked > 0 {
		t.Errorf("%d events marked PUBLISHED while their cursor could not be advanced", marked)
	}
	checkAllPublished(t, fake, items, outcomes)
	for _, it := range items {
		if s := fake.Status(it.Record); s != string(outbox.StatusPublished) {
			t.Fatalf("event %d: status %s, want PUBLISHED", it.Record.Sequence, s)
		}
	}
}
