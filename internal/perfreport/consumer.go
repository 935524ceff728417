package perfreport

import "fmt"

// The metrics of BenchmarkConsumerOverhead (internal/consumertest): what
// the consumer kit adds to each message under the AWS latency model.
const (
	// UnitConsumerWRU is the write request units added per message.
	UnitConsumerWRU = "wru/msg"
	// UnitConsumerP50 and UnitConsumerP99 are the per-message latency added
	// at the median and at the 99th percentile, in milliseconds.
	UnitConsumerP50 = "p50-added-ms/msg"
	UnitConsumerP99 = "p99-added-ms/msg"
)

// The consumer kit's targets per message.
const (
	MaxConsumerWRU   = 2.0
	MaxConsumerP99Ms = 10.0
)

// ConsumerBench is the kit's overhead per message for one handler.
type ConsumerBench struct {
	// Handler is "plain" (no side effect) or "effect" (one counter update,
	// committed in the completing transaction).
	Handler           string
	WRU, P50Ms, P99Ms float64
}

// ConsumerBenchmarks extracts BenchmarkConsumerOverhead/{plain,effect} from
// the output of internal/consumertest's benchmarks: those present.
func (o BenchOutput) ConsumerBenchmarks() []ConsumerBench {
	var out []ConsumerBench
	for _, h := range []string{"plain", "effect"} {
		b, ok := o.Find("BenchmarkConsumerOverhead/" + h)
		if !ok {
			continue
		}
		out = append(out, ConsumerBench{Handler: h, WRU: b.Metrics[UnitConsumerWRU], P50Ms: b.Metrics[UnitConsumerP50], P99Ms: b.Metrics[UnitConsumerP99]})
	}
	return out
}

// within marks a figure against its target.
func within(x, limit float64) string {
	if x <= limit {
		return fmt.Sprintf("within %.0f", limit)
	}
	return fmt.Sprintf("**over %.0f**", limit)
}

// writeConsumer writes the consumer kit's overhead, when measured.
func (r Report) writeConsumer(p func(string, ...any)) {
	cb := r.Bench.ConsumerBenchmarks()
	if len(cb) == 0 {
		return
	}
	p("## The consumer kit's overhead")
	p("")
	p("From `BenchmarkConsumerOverhead` in `internal/consumertest` (`go test -bench`): messages applied 10 at a time on the local stack's DynamoDB with the AWS latency model added to every call, each one twice under the same load, without the kit (the handler's own effect, at least once) and with it (`Inbox.Process`: the lease's `PutItem`, then the completion). *plain* is a handler without side effects, whose completion is an `UpdateItem`; *effect* is a handler whose effect, one counter update, the kit commits with the completion in one `TransactWriteItems`, where DynamoDB charges every write twice. Write units are the `ConsumedCapacity` DynamoDB returns; latency is per message, the kit's minus the handler's own at the same percentile.")
	p("")
	p("| handler | write units added per message | latency added, p50 | latency added, p99 |")
	p("| --- | ---: | ---: | ---: |")
	for _, x := range cb {
		p("| %s | %s (%s) | %.1f ms | %.1f ms (%s) |", x.Handler, wru(x.WRU), within(x.WRU, MaxConsumerWRU), x.P50Ms, x.P99Ms, within(x.P99Ms, MaxConsumerP99Ms))
	}
	p("")
	p("The targets are %.0f write units and %.0f ms at p99 per message. The units follow from the kit's writes: the lease's `PutItem` (1 unit) and the completion (1 unit as an `UpdateItem`; 2 in a transaction, whose doubling also costs the handler's own effect 1 more), so 2 units for a plain handler and 4 with an effect in the completing transaction. The latency is two round trips that wait for each other, the lease before the handler and the completion after it: under the model's `PutItem` and `UpdateItem` (p99 15 ms each) or `TransactWriteItems` (p99 30 ms), their sum exceeds 10 ms at p99 whatever the machine.", MaxConsumerWRU, MaxConsumerP99Ms)
	p("")
}
