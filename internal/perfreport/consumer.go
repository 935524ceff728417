package perfreport

import "fmt"

// The metrics of BenchmarkConsumerOverhead (internal/consumertest): what
// the consumer kit adds to each message under the AWS latency model.
const (
	// UnitConsumerWRU is the write request units added per message.
	UnitConsumerWRU = "wru/msg"
	// UnitConsumerInboxWRU is the part of them that is the inbox entry's
	// writes; the rest is what a transaction adds to the handler's effect.
	UnitConsumerInboxWRU = "inbox-wru/msg"
	// UnitConsumerP50 and UnitConsumerP99 are the per-message latency added
	// at the median and at the 99th percentile, in milliseconds.
	UnitConsumerP50 = "p50-added-ms/msg"
	UnitConsumerP99 = "p99-added-ms/msg"
	// UnitConsumerInvocationMs is BenchmarkConsumerBatch's median invocation
	// duration of HandleSQS divided among its batch's messages.
	UnitConsumerInvocationMs = "invocation-ms/msg"
	// UnitConsumerInvocationP99Added is BenchmarkConsumerBatch's p99
	// invocation time per message with the kit minus that of a handler
	// writing its effects itself, at the same concurrency.
	UnitConsumerInvocationP99Added = "p99-added-invocation-ms/msg"
)

// The consumer kit's targets per message.
const (
	MaxConsumerWRU   = 2.0
	MaxConsumerP99Ms = 10.0
)

// ConsumerBench is the kit's overhead per message for one handler.
type ConsumerBench struct {
	// Handler is "plain" (no side effect), "effect" (one counter update,
	// committed in the completing transaction) or "effects-only" (the same
	// update, committed with the inbox entry without a lease).
	Handler string
	// WRU is the write units added per message, InboxWRU the part of them
	// that is the inbox entry's.
	WRU, InboxWRU, P50Ms, P99Ms float64
}

// consumerHandlers are the handlers of BenchmarkConsumerOverhead.
var consumerHandlers = []string{"plain", "effect", "effects-only"}

// ConsumerBenchmarks extracts BenchmarkConsumerOverhead/<handler> from the
// output of internal/consumertest's benchmarks: those present.
func (o BenchOutput) ConsumerBenchmarks() []ConsumerBench {
	var out []ConsumerBench
	for _, h := range consumerHandlers {
		b, ok := o.Find("BenchmarkConsumerOverhead/" + h)
		if !ok {
			continue
		}
		out = append(out, ConsumerBench{Handler: h, WRU: b.Metrics[UnitConsumerWRU], InboxWRU: b.Metrics[UnitConsumerInboxWRU],
			P50Ms: b.Metrics[UnitConsumerP50], P99Ms: b.Metrics[UnitConsumerP99]})
	}
	return out
}

// ConsumerBatchBench is HandleSQS's invocation time per message of a batch
// of 10, at one concurrency.
type ConsumerBatchBench struct {
	Concurrency  int
	InvocationMs float64
	// AddedP99Ms is the p99 invocation time per message the kit adds.
	AddedP99Ms float64
}

// ConsumerBatchBenchmarks extracts BenchmarkConsumerBatch/concurrency-<n>:
// those present.
func (o BenchOutput) ConsumerBatchBenchmarks() []ConsumerBatchBench {
	var out []ConsumerBatchBench
	for _, n := range []int{1, 10} {
		if b, ok := o.Find(fmt.Sprintf("BenchmarkConsumerBatch/concurrency-%d", n)); ok {
			out = append(out, ConsumerBatchBench{Concurrency: n, InvocationMs: b.Metrics[UnitConsumerInvocationMs], AddedP99Ms: b.Metrics[UnitConsumerInvocationP99Added]})
		}
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
	p("From `BenchmarkConsumerOverhead` in `internal/consumertest` (`go test -bench`): messages applied 4 at a time on the local stack's DynamoDB with the AWS latency model added to every call, each one twice under the same load, without the kit (the handler's own effect, at least once) and with it. *plain* is a handler without side effects (`Inbox.Process`: the lease's `PutItem`, then the completion's `UpdateItem`); *effect* is a handler whose effect, one counter update, the kit commits with the completion in one `TransactWriteItems` after the lease's `PutItem`; *effects-only* is the same handler without a lease (`consumer.EffectsOnly`, `Inbox.ProcessEffectsOnly`): the inbox entry's conditional put, already completed, and the effect in one `TransactWriteItems`, one round trip. Write units are the `ConsumedCapacity` DynamoDB returns: the kit's writes minus the handler's own effect written alone; *of which the inbox entry* leaves out what the transaction adds to the effect. Latency is per message, the kit's minus the handler's own at the same percentile.")
	p("")
	p("| handler | write units added per message | of which the inbox entry | latency added, p50 | latency added, p99 |")
	p("| --- | ---: | ---: | ---: | ---: |")
	for _, x := range cb {
		p("| %s | %s (%s) | %s (%s) | %.1f ms | %.1f ms (%s) |", x.Handler, wru(x.WRU), within(x.WRU, MaxConsumerWRU),
			wru(x.InboxWRU), within(x.InboxWRU, MaxConsumerWRU), x.P50Ms, x.P99Ms, within(x.P99Ms, MaxConsumerP99Ms))
	}
	p("")
	p("The targets are %.0f write units and %.0f ms at p99 per message. The units follow from the kit's writes. With a lease: the lease's `PutItem` (1 unit) and the completion (1 unit as an `UpdateItem`; 2 in a transaction, whose doubling also costs the handler's own effect 1 more), so 2 units for a plain handler and 4 with an effect. Without a lease: the inbox entry's put in the transaction (2 units), and the doubling of the effect (1 more than the 1 it costs written alone), so 3; the inbox entry's own 2 meet the target, the 3 the kit adds in all do not, because DynamoDB charges every write in a transaction twice and the effect must be in the transaction to happen once. The latency target is missed for every handler under the model: with a lease, two round trips wait for each other, the lease before the handler and the completion after it; without one, a single `TransactWriteItems` (p99 30 ms) replaces the handler's own `UpdateItem` (p99 15 ms), and even one conditional `PutItem` alone has a p99 of 15 ms, over 10 ms whatever the machine. Without a lease the added median is one round trip's difference, about 5 ms.", MaxConsumerWRU, MaxConsumerP99Ms)
	p("")
	r.writeConsumerBatch(p)
}

// writeConsumerBatch writes HandleSQS's invocation time per message, when
// measured.
func (r Report) writeConsumerBatch(p func(string, ...any)) {
	bb := r.Bench.ConsumerBatchBenchmarks()
	if len(bb) == 0 {
		return
	}
	p("From `BenchmarkConsumerBatch`: the median duration of one `HandleSQS` invocation for a batch of 10 new messages of a standard queue, with the *effects-only* handler under the same model, divided by 10. It is what a function is billed per message, not a message's latency above: applying the batch's messages at once (the default, `consumer.WithConcurrency`) shortens the invocation, while each message still waits for its own round trip.")
	p("")
	p("The kit's share is the p99 of that time per message minus the p99 of a handler without the kit that writes the same effect itself (`UpdateItem`, at least once), as many messages at once, against the target of %.0f ms.", MaxConsumerP99Ms)
	p("")
	p("| messages at once | invocation time per message (p50) | added by the kit per message (p99) |")
	p("| ---: | ---: | ---: |")
	for _, x := range bb {
		p("| %d | %.1f ms | %.1f ms (%s) |", x.Concurrency, x.InvocationMs, x.AddedP99Ms, within(x.AddedP99Ms, MaxConsumerP99Ms))
	}
	p("")
}
