package perfreport

import "fmt"

// The metrics of BenchmarkOrdered (internal/relay): one invocation's
// events per second and calls per event, ordered and not.
const (
	UnitOrderedEventsPerSec = "events/s"
	UnitOrderedCalls        = "calls/event"
)

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
	p("From `BenchmarkOrdered` in `internal/relay`: batches of 100 ordered events to an SQS FIFO queue under the AWS latency model, spread over 1, 10 or 1,000 ordering keys, ordered mode on, beside the same events with it off (each key a FIFO group, no cursor).")
	p("")
	p("| events over | events/s | of unordered | AWS calls per event |")
	p("| --- | ---: | ---: | ---: |")
	p("| unordered | %.0f | 100 %% | %.2f |", base.Metrics[UnitOrderedEventsPerSec], base.Metrics[UnitOrderedCalls])
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
		p("| %d keys | %.0f | %.0f %%%s | %.2f |", keys, b.Metrics[UnitOrderedEventsPerSec], 100*share, mark, b.Metrics[UnitOrderedCalls])
	}
	p("")
	p("Ordered mode sends one event of a key per call, so that a failed entry is never overtaken by a later event of its key, and reads and advances each key's cursor item once per batch (one consistent read and one conditional write; the write is 1 unit per started KB). One key is therefore bounded by one publish and one cursor round trip per event; many keys share the calls as unordered events do, plus the cursors. The FIFO targets' own bound for one key is far above that: a message group lives in one partition of an SQS FIFO queue, which takes 300 API calls a second (3,000 messages with batches of 10) without high throughput mode (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html); an SNS FIFO topic takes 3,000 messages and 20 MB a second for the whole topic in its default throughput scope, the regional limits in message-group scope, and documents no bound of one group (https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.aws_sns.FifoThroughputScope.html).")
	p("")
}

func withinShare(share float64) string {
	if share >= MinOrderedShare {
		return fmt.Sprintf("at least %.0f %%", 100*MinOrderedShare)
	}
	return fmt.Sprintf("**under %.0f %%**", 100*MinOrderedShare)
}
