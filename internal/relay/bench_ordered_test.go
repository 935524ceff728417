package relay_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/perfreport"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// BenchmarkOrdered relays batches of 100 ordered events to an SQS FIFO
// queue under the AWS latency model, the events spread over 1, 10 or 1,000
// ordering keys, with ordered mode on and, as the baseline, off (the same
// events, each key a FIFO group, no cursor): one invocation's events per
// second and AWS calls per event. Ordered mode sends one event of a key per
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
			fake := relaytest.New(b, table)
			fake.CallLatency = perfreport.ModelLatency(perfreport.AWSLatencyModel)
			cfg := orderedConfig(table, config.ActionMark)
			cfg.Ordered = c.ordered
			r, err := relay.New(cfg, relay.Clients{DynamoDB: fake, Target: fake}, relay.Options{Now: func() time.Time { return streamNow }})
			if err != nil {
				b.Fatal(err)
			}
			keys := make([]string, c.keys)
			for i := range keys {
				keys[i] = fmt.Sprintf("ORDER#%d", i)
			}
			next, written := map[string]int64{}, 0
			var calls int
			var elapsed time.Duration
			for b.Loop() {
				b.StopTimer()
				records := relaytest.Records(table, batchSize, 256)
				for i := range records {
					k := keys[(written+i)%len(keys)]
					next[k]++
					records[i].OrderingKey, records[i].Sequence = k, next[k]
				}
				written += batchSize
				ev := relaytest.StreamEvent(table, relaytest.Inserts(table, records)...)
				fake.PutRecords(records)
				fake.ResetCounters()
				b.StartTimer()
				start := time.Now()
				_, n := relayBatch(b, r.HandleStream, fake, records, ev)
				elapsed, calls = elapsed+time.Since(start), calls+n
			}
			events := float64(b.N * batchSize)
			b.ReportMetric(events/elapsed.Seconds(), "events/s")
			b.ReportMetric(float64(calls)/events, "calls/event")
		})
	}
}
