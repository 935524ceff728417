package perfreport

import "fmt"

// The metrics of BenchmarkOrdered (internal/relay): one invocation's
// events per second, calls per event and the relay's DynamoDB write units
// per event, ordered and not.
const (
	UnitOrderedEventsPerSec = "events/s"
	UnitOrderedCalls        = "calls/event"
	UnitOrderedWriteUnits   = "wru/event"
)

// The metrics of BenchmarkOrderedPoison (internal/relay): the p99 delivery
// latency of the keys that are not poisoned, in milliseconds, in the run
// without a poisoned key and in the one with, and the second over the
// first.
const (
	UnitPoisonCleanP99 = "clean-p99-ms"
	UnitPoisonedP99    = "poisoned-p99-ms"
	UnitPoisonRatio    = "p99-ratio"
)

// MaxPoisonedLatencyRatio bounds how much a poisoned key may slow the
// others: their p99 delivery latency stays within this multiple of the
// run without poison.
const MaxPoisonedLatencyRatio = 2.0

// MinOrderedShare is the least share of the unordered throughput that
// ordered mode keeps at 1,000 keys.
const MinOrderedShare = 0.5

// writeOrdered writes ordered mode's throughput, when measured.
func (r Report) writeOrdered(p func(string, ...any)) {
	base, ok := r.Bench.Find("BenchmarkOrdered/unordered")
	if !ok {
		return
	}
	p("## Ordered delivery")
	p("")
	p("From `BenchmarkOrdered` in `internal/relay`: batches of 100 ordered events to an SQS FIFO queue under the AWS latency model, spread over 1, 10 or 1,000 ordering keys, ordered mode on, beside the same events with it off (each key a FIFO group, no cursor).")
	p("")
	p("| events over | events/s | of unordered | AWS calls per event | relay's write units per event |")
	p("| --- | ---: | ---: | ---: | ---: |")
	p("| unordered | %.0f | 100 %% | %.2f | %.2f |", base.Metrics[UnitOrderedEventsPerSec], base.Metrics[UnitOrderedCalls], base.Metrics[UnitOrderedWriteUnits])
	for _, keys := range []int{1, 10, 1000} {
		b, ok := r.Bench.Find(fmt.Sprintf("BenchmarkOrdered/keys-%d", keys))
		if !ok {
			continue
		}
		share := b.Metrics[UnitOrderedEventsPerSec] / base.Metrics[UnitOrderedEventsPerSec]
		mark := ""
		if keys == 1000 {
			mark = " (" + withinShare(share) + ")"
		}
		p("| %s | %.0f | %.0f %%%s | %.2f | %.2f |", keyCount(keys), b.Metrics[UnitOrderedEventsPerSec], 100*share, mark, b.Metrics[UnitOrderedCalls], b.Metrics[UnitOrderedWriteUnits])
	}
	p("")
	p("Ordered mode sends one event of a key per call, so that a failed entry is never overtaken by a later event of its key, and reads and advances each key's cursor item once per batch (one consistent read and one conditional write; the write is 1 unit per started KB). One key is therefore bounded by one publish and one cursor round trip per event; many keys share the calls as unordered events do, plus the cursors. The FIFO targets' own bound for one key is far above that: a message group lives in one partition of an SQS FIFO queue, which takes 300 API calls a second (3,000 messages with batches of 10) without high throughput mode (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html); an SNS FIFO topic takes 3,000 messages and 20 MB a second for the whole topic in its default throughput scope, the regional limits in message-group scope, and documents no bound of one group (https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.aws_sns.FifoThroughputScope.html).")
	p("")
	r.writePoisoned(p)
}

// keyCount is "1 key", "10 keys".
func keyCount(n int) string {
	if n == 1 {
		return "1 key"
	}
	return fmt.Sprintf("%d keys", n)
}

func withinShare(share float64) string {
	if share >= MinOrderedShare {
		return fmt.Sprintf("at least %.0f %%", 100*MinOrderedShare)
	}
	return fmt.Sprintf("**under %.0f %%**", 100*MinOrderedShare)
}

// writePoisoned writes the other keys' latency while one key is poisoned,
// when measured.
func (r Report) writePoisoned(p func(string, ...any)) {
	var rows []string
	for _, keys := range []int{10, 1000} {
		b, ok := r.Bench.Find(fmt.Sprintf("BenchmarkOrderedPoison/keys-%d", keys))
		if !ok {
			continue
		}
		ratio := b.Metrics[UnitPoisonRatio]
		rows = append(rows, fmt.Sprintf("| %d keys | %.0f ms | %.0f ms | %.2f (%s) |", keys, b.Metrics[UnitPoisonCleanP99], b.Metrics[UnitPoisonedP99], ratio, withinRatio(ratio)))
	}
	if len(rows) == 0 {
		return
	}
	p("### A poisoned key")
	p("")
	p("From `BenchmarkOrderedPoison` in `internal/relay`: the same ordered load relayed by two pipelines in turn, one clean, one whose target refuses the first event of one key for good (a poison event: marked FAILED, its key's cursor blocked, every later event of the key waiting behind it). The p99 delivery latency (from the start of the invocation to the target accepting the event) of the other keys' events, in both.")
	p("")
	p("| events over | p99, no poison | p99, one key poisoned | ratio |")
	p("| --- | ---: | ---: | ---: |")
	for _, row := range rows {
		p("%s", row)
	}
	p("")
	p("A poisoned key holds no shard and no other key: the gate knows from the key's cursor that its events wait behind the FAILED one and leaves them pending, reading that cursor with the others'. Once the event is fixed and requeued (`outbox requeue`), the next reconciler run publishes it and every event behind it, in order (`TestOrderedPoisonedKeyResumesAfterRequeue` in `internal/operate`).")
	p("")
}

func withinRatio(ratio float64) string {
	if ratio <= MaxPoisonedLatencyRatio {
		return fmt.Sprintf("at most %.0f×", MaxPoisonedLatencyRatio)
	}
	return fmt.Sprintf("**over %.0f×**", MaxPoisonedLatencyRatio)
}
