package reconcile

import (
	"context"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/batch"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/store"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestPaceBacksOffWhenThrottled: a target that throttles every entry
// halves the run's rate page after page, down to its floor; once it
// accepts again, the rate climbs back by a tenth of the share a page, up to
// the share and no further.
func TestPaceBacksOffWhenThrottled(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "outbox", PendingShards: 1}.WithDefaults()
	fake := relaytest.New(t, table)
	records := relaytest.Records(table, 60, 16)
	fake.PutRecords(records)
	throttling := true
	fake.EntryError = func(string, int) string {
		if throttling {
			return "ThrottlingException"
		}
		return ""
	}
	noSleep := retry.Policy{Attempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }}
	st := &store.Store{Client: fake, Table: table, TTL: time.Hour, Retry: noSleep}
	p := &batch.Processor{Publisher: &targetkind.EventBridgePublisher{Client: fake, EventBus: "default", Retry: noSleep}, Store: st, Action: "mark"}
	page := func(i int) []batch.Item {
		items := make([]batch.Item, 10)
		for k := range items {
			items[k] = batch.Item{Record: records[i*10+k]}
		}
		return items
	}
	pace := newPacer(400)
	want := []float64{200, 100, 50, 50} // the floor: an eighth of 400
	for i, w := range want {
		pace.observe(p.Process(t.Context(), page(i), metrics.New()))
		if got := pace.limit(); got != w {
			t.Errorf("after throttled page %d: %v events/s, want %v", i+1, got, w)
		}
	}
	throttling = false
	pace.observe(p.Process(t.Context(), page(4), metrics.New()))
	if got := pace.limit(); got != 90 {
		t.Errorf("after a page accepted: %v events/s, want 90 (50 + a tenth of 400)", got)
	}
	for range 10 {
		pace.observe(nil)
	}
	if got := pace.limit(); got != 400 {
		t.Errorf("after pages without throttling: %v events/s, want back to the share, 400", got)
	}
	if slow := newPacer(2); slow.pageSize(100) != 40 || pace.pageSize(100) != 100 || newPacer(0).pageSize(100) != 100 {
		t.Errorf("pages at 2 events/s: %d, want 40 (20 s of publishing); at 400: %d, want 100", slow.pageSize(100), pace.pageSize(100))
	}
	if newPacer(0) != nil || newPacer(0).limit() != 0 || !newPacer(0).Wait(t.Context(), 1000) {
		t.Error("no rate: want no pacer, which never waits")
	}
	if low := newPacer(3); low.floor != 3 {
		t.Errorf("a share of 3 events/s: floor %v, want the share itself", low.floor)
	}
}

// TestRunRate: an unordered relay's runs share the rate among the most
// workers that may run; an ordered relay's run, which starts no worker,
// has all of it.
func TestRunRate(t *testing.T) {
	t.Parallel()
	unordered := &Reconciler{MaxEventsPerSecond: 800, MaxWorkers: 8}
	ordered := &Reconciler{MaxEventsPerSecond: 800, MaxWorkers: 8, Ordered: &store.Store{}}
	if unordered.runRate() != 100 || ordered.runRate() != 800 || (&Reconciler{MaxEventsPerSecond: 800}).runRate() != 800 {
		t.Errorf("run rates %v unordered, %v ordered of 800 events/s and 8 workers; want 100 and 800", unordered.runRate(), ordered.runRate())
	}
}

// TestPaceStopsAtTheMargin: a pacer lets nothing through after its stop
// time, even with tokens to spare, nor tokens that would come after it.
func TestPaceStopsAtTheMargin(t *testing.T) {
	t.Parallel()
	p := newPacer(10)
	p.stopBy = time.Now().Add(time.Hour)
	if !p.Wait(t.Context(), 10) {
		t.Fatal("the burst refused an hour before the stop time")
	}
	p.stopBy = time.Now().Add(500 * time.Millisecond)
	if p.Wait(t.Context(), 10) {
		t.Error("10 more events at 10 a second let through with half a second left")
	}
	p.stopBy = time.Now().Add(-time.Second)
	p.lim.SetBurst(paceBurst)
	if p.Wait(t.Context(), 1) {
		t.Error("an event let through after the stop time")
	}
}
