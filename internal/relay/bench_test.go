package relay_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/outboxkit/terraform-provider-outbox/internal/perfreport"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/naive"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// batchSize is the stream batch of the benchmark: the event source
// mapping's default for DynamoDB streams.
const batchSize = 100

// Targets of the relay for a 100-record batch.
const (
	maxRoundTrips = 3
	// 10 PutEvents, 1 BatchGetItem, then 100 UpdateItem or 4 BatchWriteItem.
	maxCallsPerEventMark   = 1.12
	maxCallsPerEventDelete = 0.16
	// One strongly consistent read unit per item of up to 4 KB.
	maxReadsPerEvent = 1.0
)

// streamHandler is what both relays offer.
type streamHandler func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

func newHandler(tb testing.TB, impl string, fake *relaytest.AWS, cfg config.Config) streamHandler {
	tb.Helper()
	switch impl {
	case "naive":
		n := &naive.Relay{DynamoDB: fake, EventBridge: fake, Config: cfg}
		return n.HandleStream
	default:
		// The stream keeps up: the records are a second old. When it lags,
		// they are an hour old, and the relay holds them instead of
		// reading them.
		clock := streamNow
		if impl == "relay-lagging" {
			clock = now
		}
		return newRelay(tb, cfg, fake, relay.Options{Now: func() time.Time { return clock }}).HandleStream
	}
}

// runBatch stores a fresh batch of pending items, relays their stream
// records and returns the round trips and calls it took.
func runBatch(tb testing.TB, h streamHandler, fake *relaytest.AWS, records []outbox.Record, ev events.DynamoDBEvent) (roundTrips, calls int) {
	tb.Helper()
	fake.PutRecords(records)
	fake.ResetCounters()
	return relayBatch(tb, h, fake, records, ev)
}

// relayBatch relays the stream records of stored pending items and returns
// the round trips and calls it took.
func relayBatch(tb testing.TB, h streamHandler, fake *relaytest.AWS, records []outbox.Record, ev events.DynamoDBEvent) (roundTrips, calls int) {
	resp, err := h(context.Background(), ev)
	if err != nil {
		tb.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 0 {
		tb.Fatalf("%d batch item failures", len(resp.BatchItemFailures))
	}
	if got := len(fake.Published()); got != len(records) {
		tb.Fatalf("%d events published, want %d", got, len(records))
	}
	return fake.RoundTrips(), fake.Calls("")
}

// BenchmarkRelay relays a 100-record batch through the fake AWS, whose
// DynamoDB is a real engine, with 3 ms added to every call, with this relay
// and with the naive one, and reports the sequential round trips per batch,
// the AWS calls per event and the read units per event (this relay's status
// check; the naive relay reads nothing). relay-lagging is this relay on a
// stream that lags past half the reconciler's minimum age: it holds the
// items (a conditional write each) instead of reading them. Time per batch
// includes the engine's own.
func BenchmarkRelay(b *testing.B) {
	table := outbox.Table{Name: "orders-outbox"}.WithDefaults()
	records := relaytest.Records(table, batchSize, 256)
	ev := relaytest.StreamEvent(table, relaytest.Inserts(table, records)...)
	for _, impl := range []string{"relay", "relay-lagging", "naive"} {
		for _, action := range []config.Action{config.ActionMark, config.ActionDelete} {
			b.Run(fmt.Sprintf("%s/%s", impl, action), func(b *testing.B) {
				fake := relaytest.New(b, table)
				fake.Latency = 3 * time.Millisecond
				h := newHandler(b, impl, fake, testConfig(table, config.TargetEventBridge, action))
				var roundTrips, calls int
				var reads float64
				for b.Loop() {
					b.StopTimer()
					fake.PutRecords(records)
					fake.ResetCounters()
					b.StartTimer()
					rt, c := relayBatch(b, h, fake, records, ev)
					roundTrips += rt
					calls += c
					reads += fake.ReadUnits()
				}
				n := float64(b.N)
				b.ReportMetric(float64(roundTrips)/n, "roundtrips/batch")
				b.ReportMetric(float64(calls)/n/batchSize, "calls/event")
				b.ReportMetric(reads/n/batchSize, "reads/event")
			})
		}
	}
}

// roundTrips are the waves of calls, each in flight all at once, in which
// the relay relays a 100-record batch: the status check (a read, or a hold
// per item when the stream lags), 10 PutEvents, then a mark per item or 4
// BatchWriteItem deletes.
func roundTrips(impl string, action config.Action) []relaytest.Wave {
	check := relaytest.Wave{Op: relaytest.OpBatchGetItem, Calls: 1}
	if impl == "relay-lagging" {
		check = relaytest.Wave{Op: relaytest.OpUpdateItem, Calls: batchSize}
	}
	settle := relaytest.Wave{Op: relaytest.OpUpdateItem, Calls: batchSize}
	if action == config.ActionDelete {
		settle = relaytest.Wave{Op: relaytest.OpBatchWriteItem, Calls: batchSize / 25}
	}
	return []relaytest.Wave{check, {Op: relaytest.OpPutEvents, Calls: batchSize / 10}, settle}
}

// TestCallsPerEvent guards the benchmark's targets without timing anything:
// the calls and reads per event, and the round trips, counted by holding
// every call until its whole wave is in flight (relaytest.AWS.Lockstep), so
// that a relay making its calls in more sequential round trips, or more
// calls, fails however loaded the machine is.
func TestCallsPerEvent(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "orders-outbox"}.WithDefaults()
	records := relaytest.Records(table, batchSize, 256)
	ev := relaytest.StreamEvent(table, relaytest.Inserts(table, records)...)
	tests := []struct {
		impl       string
		action     config.Action
		wantCalls  float64 // at most, per event
		roundTrips bool    // whether the round trips are guarded
	}{
		{"relay", config.ActionMark, maxCallsPerEventMark, true},
		{"relay", config.ActionDelete, maxCallsPerEventDelete, true},
		// Lagging: 100 holds instead of 1 read.
		{"relay-lagging", config.ActionMark, maxCallsPerEventMark + 0.99, true},
		{"relay-lagging", config.ActionDelete, maxCallsPerEventDelete + 0.99, true},
		{"naive", config.ActionMark, 2, false},
		{"naive", config.ActionDelete, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.impl+"/"+string(tt.action), func(t *testing.T) {
			t.Parallel()
			fake := relaytest.New(t, table)
			h := newHandler(t, tt.impl, fake, testConfig(table, config.TargetEventBridge, tt.action))
			_, calls := runBatch(t, h, fake, records, ev)
			perEvent := float64(calls) / batchSize
			reads := fake.ReadUnits() / batchSize
			t.Logf("%s/%s: %.2f calls/event, %.2f reads/event", tt.impl, tt.action, perEvent, reads)
			if tt.impl == "relay" && (reads > maxReadsPerEvent || fake.Calls(relaytest.OpBatchGetItem) != 1) {
				t.Errorf("%.2f reads/event in %d BatchGetItem calls, want at most %.2f in 1", reads, fake.Calls(relaytest.OpBatchGetItem), maxReadsPerEvent)
			}
			if perEvent > tt.wantCalls {
				t.Errorf("%.2f calls/event, want at most %.2f", perEvent, tt.wantCalls)
			}
			if tt.impl == "naive" && perEvent != 2 {
				t.Errorf("naive relay: %.2f calls/event, want 2", perEvent)
			}
			if !tt.roundTrips {
				return
			}
			want := roundTrips(tt.impl, tt.action)
			fake.PutRecords(records)
			fake.ResetCounters()
			// The timeout only ends a wave that would never fill.
			fake.Lockstep(want, 30*time.Second)
			relayBatch(t, h, fake, records, ev)
			got := fake.Waves()
			t.Logf("%s/%s: round trips %v", tt.impl, tt.action, got)
			if !slices.Equal(got, want) || len(got) > maxRoundTrips {
				t.Errorf("calls in round trips %v, want %v (at most %d)", got, want, maxRoundTrips)
			}
		})
	}
}

// kindTargets are a target of every kind, FIFO ones included.
var kindTargets = map[string]targetkind.Settings{
	"eventbridge": targetSettings(targetkind.EventBridge),
	"sns":         targetSettings(targetkind.SNS),
	"sns-fifo":    {Type: targetkind.SNS, TopicARN: "arn:aws:sns:us-east-1:123456789012:orders.fifo"},
	"sqs":         targetSettings(targetkind.SQS),
	"sqs-fifo":    {Type: targetkind.SQS, QueueARN: "arn:aws:sqs:us-east-1:123456789012:orders.fifo"},
}

// kindHandler is the relay, in mark mode, for the target s.
func kindHandler(tb testing.TB, fake *relaytest.AWS, table outbox.Table, s targetkind.Settings) streamHandler {
	cfg := testConfig(table, s.Type, config.ActionMark)
	cfg.Target = s
	return newRelay(tb, cfg, fake, relay.Options{Now: func() time.Time { return streamNow }}).HandleStream
}

// publishOps are the target kinds' publish calls.
var publishOps = []string{relaytest.OpPutEvents, relaytest.OpPublishBatch, relaytest.OpSendMessageBatch}

// BenchmarkTargetKinds relays a batch of 100 events of distinct aggregates
// to every kind of target, every call slowed by a draw of the AWS latency
// model (perfreport.AWSLatencyModel), and reports one invocation's events
// per second, the round trips per batch, the calls per event and the
// target's calls per event: a FIFO target's groups fill its calls as a
// standard target's events do. The performance report's per-kind table
// (perfreport.TargetKindLimits) is made from it.
func BenchmarkTargetKinds(b *testing.B) {
	table := outbox.Table{Name: "orders-outbox"}.WithDefaults()
	records := relaytest.Records(table, batchSize, 256)
	ev := relaytest.StreamEvent(table, relaytest.Inserts(table, records)...)
	for _, name := range slices.Sorted(maps.Keys(kindTargets)) {
		b.Run(name, func(b *testing.B) {
			fake := relaytest.New(b, table)
			fake.CallLatency = perfreport.ModelLatency(perfreport.AWSLatencyModel)
			h := kindHandler(b, fake, table, kindTargets[name])
			var roundTrips, calls, publishCalls int
			var elapsed time.Duration
			for b.Loop() {
				b.StopTimer()
				fake.PutRecords(records)
				fake.ResetCounters()
				b.StartTimer()
				start := time.Now()
				rt, c := relayBatch(b, h, fake, records, ev)
				elapsed += time.Since(start)
				roundTrips, calls = roundTrips+rt, calls+c
				for _, op := range publishOps {
					publishCalls += fake.Calls(op)
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(roundTrips)/n, "roundtrips/batch")
			b.ReportMetric(float64(calls)/n/batchSize, "calls/event")
			b.ReportMetric(float64(publishCalls)/n/batchSize, "publishcalls/event")
			b.ReportMetric(n*batchSize/elapsed.Seconds(), "events/s")
		})
	}
}

// TestCallsPerEventByKind guards BenchmarkTargetKinds's calls: every kind,
// FIFO included, within the relay's target of calls per event (a FIFO
// target's groups fill its calls). The round trips, which depend on the
// machine's load, are the benchmark's to report.
func TestCallsPerEventByKind(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "orders-outbox"}.WithDefaults()
	records := relaytest.Records(table, batchSize, 256)
	ev := relaytest.StreamEvent(table, relaytest.Inserts(table, records)...)
	for name, s := range kindTargets {
		t.Run(name, func(t *testing.T) {
			fake := relaytest.New(t, table)
			h := kindHandler(t, fake, table, s)
			if _, calls := runBatch(t, h, fake, records, ev); float64(calls)/batchSize > maxCallsPerEventMark {
				t.Errorf("%.2f calls/event, want at most %.2f", float64(calls)/batchSize, maxCallsPerEventMark)
			}
		})
	}
}

// BenchmarkReconcileReads runs the reconciler over a table holding pending
// old events, with and without the pending index, and reports the read
// units of a run (as DynamoDB reports them for the queries or scans, plus
// nothing else: holds are writes) and per pending event. Without the index
// the run scans the whole table, which in delete mode holds only pending and
// failed items, so its cost grows with what is pending, as with the index.
func BenchmarkReconcileReads(b *testing.B) {
	for _, mode := range []string{"index", "scan"} {
		for _, pending := range []int{0, 100, 1000} {
			b.Run(fmt.Sprintf("%s/pending=%d", mode, pending), func(b *testing.B) {
				table := outbox.Table{Name: "orders-outbox", NoPendingIndex: mode == "scan"}.WithDefaults()
				records := relaytest.Records(table, pending, 256)
				fake := relaytest.New(b, table)
				cfg := testConfig(table, config.TargetEventBridge, config.ActionDelete)
				r := newRelay(b, cfg, fake, relay.Options{Now: func() time.Time { return now }})
				var units float64
				for b.Loop() {
					b.StopTimer()
					fake.PutRecords(records)
					b.StartTimer()
					rep, err := r.Reconcile(context.Background(), relay.ReconcileRequest{Action: relay.ActionReconcile})
					if err != nil || rep.Published != pending || !rep.Complete {
						b.Fatalf("report %+v, %v", rep, err)
					}
					units += rep.ReadUnits
				}
				n := float64(b.N)
				b.ReportMetric(units/n, "readunits/run")
				if pending > 0 {
					b.ReportMetric(units/n/float64(pending), "readunits/event")
				}
			})
		}
	}
}
