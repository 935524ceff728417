package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/perfreport"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/batch"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/store"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// backlogKeys are the ordering keys of BenchmarkBacklog: the first
// hotKeys hold every other event, half of the backlog.
const backlogEvents, backlogKeys, hotKeys = 20_000, 1000, 10

// hotPrefix begins the names of the hot keys.
const hotPrefix = "hot-"

// BenchmarkBacklog drains an outage's backlog of 20,000 pending events
// (1,000 keys, 10 of them hot holding half the events) with the runs and
// workers a pipeline starts (goroutines here, asynchronous invocations on
// AWS), against the in-memory table and target under the AWS latency
// model: what the reconciler itself reaches, without the local stack,
// whose HTTP, JSON and streams share the two cores of the recovery bench
// (perfreport.BenchmarkRecovery). Unordered on an EventBridge bus at
// 5,000 events a second, ordered on an SNS FIFO topic at 2,400, the rates
// the recovery bench sets. It reports events a second, the slowest hot
// key's, and the runs, and fails on an event lost or published out of
// its key's order.
func BenchmarkBacklog(b *testing.B) {
	for _, mode := range []struct {
		name    string
		ordered bool
		rate    float64
	}{{"eventbridge-unordered", false, 5000}, {"sns-fifo-ordered", true, 2400}} {
		b.Run(mode.name, func(b *testing.B) {
			var elapsed, hot time.Duration
			runs := 0
			for b.Loop() {
				b.StopTimer()
				table, fake, records := backlog(b, mode.ordered)
				newRun := func() *reconciler {
					r := backlogReconciler(table, fake, mode.ordered)
					r.Leases, r.MaxWorkers, r.MaxEventsPerSecond = fake, 8, mode.rate
					return r
				}
				var start time.Time // when the first run began
				for tick := 0; ; tick++ {
					// The schedule fires again while events are pending;
					// counting them is not the reconciler's time.
					pending := pendingCount(fake, records)
					if pending == 0 {
						break
					}
					if tick == 20 {
						b.Fatalf("%d events still pending after %d scheduled runs", pending, tick)
					}
					b.StartTimer()
					pool := &workers{t: b, newRun: newRun}
					r := newRun()
					r.Invoker = pool
					ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
					t0 := time.Now()
					if tick == 0 {
						start = t0
					}
					r.Run(ctx, time.Minute, metrics.New())
					runs += 1 + len(pool.wait())
					elapsed += time.Since(t0)
					cancel()
					b.StopTimer()
				}
				hot += checkBacklog(b, fake, records, mode.ordered).Sub(start)
				b.StartTimer() // b.Loop runs with the timer on
			}
			n := float64(b.N)
			b.ReportMetric(backlogEvents*n/elapsed.Seconds(), "events/s")
			b.ReportMetric(backlogEvents/2/hotKeys*n/hot.Seconds(), "hotkey-events/s")
			b.ReportMetric(float64(runs)/n, "runs")
		})
	}
}

// backlog is the table and target of BenchmarkBacklog, with its pending
// events; ordered, each key's events have its sequence.
func backlog(b *testing.B, ordered bool) (outbox.Table, *relaytest.AWS, []outbox.Record) {
	table := outbox.Table{Name: "outbox"}.WithDefaults()
	fake := relaytest.New(b, table)
	fake.CallLatency = perfreport.ModelLatency(perfreport.AWSLatencyModel)
	records := relaytest.Records(table, backlogEvents, 256)
	next := map[string]int64{}
	for i := range records {
		key := fmt.Sprintf("%s%d", hotPrefix, i/2%hotKeys)
		if i%2 == 1 {
			key = fmt.Sprintf("key-%d", i/2%(backlogKeys-hotKeys))
		}
		records[i].OrderingKey = key
		if ordered {
			next[key]++
			records[i].Sequence = next[key]
		}
	}
	fake.PutRecords(records)
	return table, fake, records
}

// backlogReconciler is a pipeline's reconciler: an EventBridge bus, or an
// ordered relay's SNS FIFO topic.
func backlogReconciler(table outbox.Table, fake *relaytest.AWS, ordered bool) *reconciler {
	clock := func() time.Time { return now }
	st := &store.Store{Client: fake, Table: table, TTL: time.Hour, Now: clock, Retry: noSleep}
	var pub publish.Publisher = &targetkind.EventBridgePublisher{Client: fake, EventBus: "default", Retry: noSleep}
	p := &batch.Processor{Publisher: pub, Store: st, Action: config.ActionMark, Now: clock}
	r := &reconciler{Client: fake, Table: table, Processor: p, Holder: st, Now: clock, Retry: noSleep}
	if ordered {
		p.Publisher = &targetkind.SNSPublisher{Client: fake, TopicARN: "arn:aws:sns:us-east-1:123456789012:orders.fifo", Retry: noSleep}
		p.Cursors, p.Layout = st, table
		r.Ordered = st
	}
	return r
}

func pendingCount(fake *relaytest.AWS, records []outbox.Record) int {
	n := 0
	for _, r := range records {
		if fake.Status(r) == string(outbox.StatusPending) {
			n++
		}
	}
	return n
}

// checkBacklog fails b unless every event was published, ordered in its
// key's order (a copy of one published before aside, which a FIFO target
// drops by its deduplication id), and returns when the slowest hot key's
// last event was accepted.
func checkBacklog(b *testing.B, fake *relaytest.AWS, records []outbox.Record, ordered bool) time.Time {
	b.Helper()
	byID := make(map[string]outbox.Record, len(records))
	for _, r := range records {
		byID[r.EventID] = r
	}
	seen := map[string]int64{}
	done := map[string]bool{}
	var hotDone time.Time
	for _, p := range fake.Published() {
		r, ok := byID[p.EventID]
		if !ok || done[p.EventID] {
			continue
		}
		done[p.EventID] = true
		if ordered && r.Sequence != seen[r.OrderingKey]+1 {
			b.Fatalf("key %s: event %d published after %d", r.OrderingKey, r.Sequence, seen[r.OrderingKey])
		}
		seen[r.OrderingKey] = r.Sequence
		if strings.HasPrefix(r.OrderingKey, hotPrefix) && p.Accepted.After(hotDone) {
			hotDone = p.Accepted
		}
	}
	if len(done) != len(records) {
		b.Fatalf("%d of %d events published", len(done), len(records))
	}
	return hotDone
}
