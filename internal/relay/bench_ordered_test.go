package relay_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/outboxkit/terraform-provider-outbox/internal/perfreport"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/internal/stats"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// BenchmarkOrdered relays batches of 100 ordered events to an SQS FIFO
// queue under the AWS latency model, the events spread over 1, 10 or 1,000
// ordering keys, with ordered mode on and, as the baseline, off (the same
// events, each key a FIFO group, no cursor): one invocation's events per
// second, AWS calls per event and the relay's DynamoDB write units per
// event (marking each event published, and the cursors). Ordered mode sends one event of a key per
// call and reads and advances each key's cursor once per batch, so a batch
// of one key takes a call per event, and of many keys the calls of the
// unordered relay plus the cursors'.
func BenchmarkOrdered(b *testing.B) {
	table := outbox.Table{Name: "orders-outbox"}.WithDefaults()
	for _, c := range []struct {
		keys    int
		ordered bool
	}{{1000, false}, {1, true}, {10, true}, {1000, true}} {
		name := fmt.Sprintf("keys-%d", c.keys)
		if !c.ordered {
			name = "unordered"
		}
		b.Run(name, func(b *testing.B) {
			cfg := orderedConfig(table, config.ActionMark)
			cfg.Ordered = c.ordered
			load := newOrderedLoad(b, cfg, c.keys)
			var calls int
			var units float64
			var elapsed time.Duration
			for b.Loop() {
				b.StopTimer()
				records, ev := load.next()
				load.capacity.Reset()
				b.StartTimer()
				start := time.Now()
				_, n := relayBatch(b, load.handle, load.fake, records, ev)
				elapsed, calls = elapsed+time.Since(start), calls+n
				units += load.capacity.Units(cfg.Table.Name).Total()
			}
			events := float64(b.N * batchSize)
			b.ReportMetric(events/elapsed.Seconds(), perfreport.UnitOrderedEventsPerSec)
			b.ReportMetric(float64(calls)/events, perfreport.UnitOrderedCalls)
			b.ReportMetric(units/events, perfreport.UnitOrderedWriteUnits)
		})
	}
}

// BenchmarkOrderedPoison measures what a poisoned key costs the others:
// the load of BenchmarkOrdered in ordered mode (batches of 100 events over
// 10 or 1,000 keys, to an SQS FIFO queue under the AWS latency model),
// relayed in each iteration by two pipelines: a clean one, and one whose
// target refuses the first event of one key for good (the entry fails with
// InvalidMessageContents), so that the key's every later event waits
// behind it. It reports the p99 delivery latency of the other keys' events
// (from the start of the invocation to the target accepting the event) in
// both, and the ratio, bounded by perfreport.MaxPoisonedLatencyRatio.
func BenchmarkOrderedPoison(b *testing.B) {
	table := outbox.Table{Name: "orders-outbox"}.WithDefaults()
	for _, keys := range []int{10, 1000} {
		b.Run(fmt.Sprintf("keys-%d", keys), func(b *testing.B) {
			cfg := orderedConfig(table, config.ActionMark)
			clean, poisoned := newOrderedLoad(b, cfg, keys), newOrderedLoad(b, cfg, keys)
			poisoned.poison()
			for b.Loop() {
				clean.relayMeasured(b)
				poisoned.relayMeasured(b)
			}
			c, p := stats.Percentile(clean.latencies, 99), stats.Percentile(poisoned.latencies, 99)
			b.ReportMetric(float64(c)/float64(time.Millisecond), perfreport.UnitPoisonCleanP99)
			b.ReportMetric(float64(p)/float64(time.Millisecond), perfreport.UnitPoisonedP99)
			b.ReportMetric(float64(p)/float64(c), perfreport.UnitPoisonRatio)
		})
	}
}

// orderedLoad is a relay under the AWS latency model and the ordered
// events it is fed: batches spread round-robin over the keys, each event
// numbered its key's next sequence.
type orderedLoad struct {
	table outbox.Table
	fake  *relaytest.AWS
	// capacity counts the write units of every call through fake.
	capacity *perfreport.CapacityCounter
	handle   streamHandler
	keys     []string
	seq      map[string]int64
	sent     int
	// refused is the event id the target refuses, once poison chose it.
	refused  string
	poisoned bool
	// latencies are the delivery latencies of the events of every key
	// but the first (the one poison poisons), of relayMeasured.
	latencies []time.Duration
}

func newOrderedLoad(b *testing.B, cfg config.Config, keys int) *orderedLoad {
	b.Helper()
	capacity := perfreport.NewCapacityCounter()
	l := &orderedLoad{table: cfg.Table, fake: relaytest.New(b, cfg.Table, capacity.Option), capacity: capacity, seq: map[string]int64{}}
	l.fake.CallLatency = perfreport.ModelLatency(perfreport.AWSLatencyModel)
	l.handle = newRelay(b, cfg, l.fake, relay.Options{Now: func() time.Time { return streamNow }}).HandleStream
	for i := range keys {
		l.keys = append(l.keys, fmt.Sprintf("ORDER#%d", i))
	}
	return l
}

// poison makes the target refuse the first event of the first key that
// the load sends, from then on.
func (l *orderedLoad) poison() {
	l.poisoned = true
	l.fake.EntryError = func(id string, _ int) string {
		if id == l.refused {
			return "InvalidMessageContents"
		}
		return ""
	}
}

// next stores the next batch of pending items and returns their records
// and stream event, the fake's counters reset.
func (l *orderedLoad) next() ([]outbox.Record, events.DynamoDBEvent) {
	records := relaytest.Records(l.table, batchSize, 256)
	for i := range records {
		k := l.keys[(l.sent+i)%len(l.keys)]
		l.seq[k]++
		records[i].OrderingKey, records[i].Sequence = k, l.seq[k]
		if l.poisoned && l.refused == "" && k == l.keys[0] {
			l.refused = records[i].EventID
		}
	}
	l.sent += batchSize
	l.fake.PutRecords(records)
	l.fake.ResetCounters()
	return records, relaytest.StreamEvent(l.table, relaytest.Inserts(l.table, records)...)
}

// relayMeasured relays the next batch and notes the delivery latency of
// every event of the other keys than the first. It fails when the batch
// asks for a retry, when an event of the first key is published while it
// is poisoned, or when any other event is not.
func (l *orderedLoad) relayMeasured(b *testing.B) {
	b.Helper()
	records, ev := l.next()
	start := time.Now()
	resp, err := l.handle(context.Background(), ev)
	if err != nil {
		b.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 0 {
		b.Fatalf("%d batch item failures, want none: a poisoned key holds no shard", len(resp.BatchItemFailures))
	}
	keyOf := map[string]string{}
	want := 0
	for _, r := range records {
		keyOf[r.EventID] = r.OrderingKey
		if r.OrderingKey != l.keys[0] {
			want++
		}
	}
	got := 0
	for _, p := range l.fake.Published() {
		if keyOf[p.EventID] == l.keys[0] {
			if l.poisoned {
				b.Fatalf("event %s of the poisoned key published", p.EventID)
			}
			continue
		}
		l.latencies = append(l.latencies, p.Accepted.Sub(start))
		got++
	}
	if got != want {
		b.Fatalf("%d events of the other keys published, want %d", got, want)
	}
}

// BenchmarkOrderedHotKeyBacklog relays a backlog of 400 events of one
// ordering key, read by the stream in one batch, to an SQS FIFO queue under
// the AWS latency model, with invocations whose deadline is 2 s away:
// shorter than the backlog's round trips, one per event. Each invocation
// stops publishing near its deadline, advances the key's cursor past what
// was accepted, and reports the rest as batch item failures, which the next
// invocation is handed, as the stream's retry would. It reports the key's
// events per second and the invocations the backlog took; it fails when an
// invocation gets no further.
func BenchmarkOrderedHotKeyBacklog(b *testing.B) {
	table := outbox.Table{Name: "orders-outbox"}.WithDefaults()
	cfg := orderedConfig(table, config.ActionMark)
	const backlog, deadline = 400, 2 * time.Second
	var elapsed time.Duration
	invocations := 0
	for b.Loop() {
		b.StopTimer()
		fake := relaytest.New(b, table)
		fake.CallLatency = perfreport.ModelLatency(perfreport.AWSLatencyModel)
		handle := newRelay(b, cfg, fake, relay.Options{Now: func() time.Time { return streamNow }}).HandleStream
		pending := orderedRecords(table, []string{"hot"}, backlog)
		fake.PutRecords(pending)
		b.StartTimer()
		start := time.Now()
		for len(pending) > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			resp, err := handle(ctx, relaytest.StreamEvent(table, relaytest.Inserts(table, pending)...))
			cancel()
			if err != nil {
				b.Fatal(err)
			}
			invocations++
			rest := firstFailed(pending, resp)
			if rest == 0 {
				b.Fatalf("an invocation published nothing of the %d events left", len(pending))
			}
			pending = pending[rest:]
		}
		elapsed += time.Since(start)
		if c, err := outbox.ParseCursor(fake.Item("hot", outbox.CursorSortKey)); err != nil || c.Published != backlog {
			b.Fatalf("cursor %+v (%v), want %d", c, err, backlog)
		}
	}
	b.ReportMetric(float64(b.N*backlog)/elapsed.Seconds(), perfreport.UnitOrderedEventsPerSec)
	b.ReportMetric(float64(invocations)/float64(b.N), "invocations")
}

// firstFailed returns the index in records of the first record resp
// reports failed (the stream's retry starts there), len(records) for none.
func firstFailed(records []outbox.Record, resp events.DynamoDBEventResponse) int {
	first := len(records)
	for i := range records {
		for _, f := range resp.BatchItemFailures {
			if f.ItemIdentifier == relaytest.SequenceNumber(i) {
				first = min(first, i)
			}
		}
	}
	return first
}
