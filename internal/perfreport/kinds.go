package perfreport

import (
	"fmt"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// ModelLatency returns a function that draws the latency of one call of an
// operation from the model, as the local stack draws it for a fault rule
// of the same latency (log-normal, the row's median and 99th percentile):
// the latency for fakes that know only the operation's name. An operation
// the model lacks takes none. Operation names must be unique in the model.
func ModelLatency(model []CallLatency) func(operation string) time.Duration {
	faults := awsapi.NewFaults()
	for _, c := range model {
		faults.Add(awsapi.FaultRule{Operation: c.Operation, Latency: awsapi.Duration(c.P50), LatencyP99: awsapi.Duration(c.P99)})
	}
	return func(operation string) time.Duration {
		d, _ := faults.Request("", operation)
		return d
	}
}

// KindLimits are the documented per-call limits and throughput quotas of a
// target kind, as the relay's publisher keeps them.
type KindLimits struct {
	// Name is the kind's benchmark name (BenchmarkTargetKinds/<Name>).
	Name string
	// What names the target; Call is the publish operation.
	What, Call string
	// Entries and Bytes are the most entries and bytes of one call that
	// the publisher sends (publish.MaxBatchEntries, the kind's byte limit).
	Entries, Bytes int
	// Quota is the documented throughput quota, and Source the AWS pages
	// it is from.
	Quota  string
	Source []string
}

// AWS pages the quotas are from.
const (
	eventBridgeQuotas = "https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-quota.html"
	snsQuotas         = "https://docs.aws.amazon.com/general/latest/gr/sns.html"
	snsBatching       = "https://docs.aws.amazon.com/sns/latest/dg/sns-batch-api-actions.html"
	snsFIFOScope      = "https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.aws_sns.FifoThroughputScope.html"
	sqsMessageQuotas  = "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html"
	sqsFIFOThrottling = "https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/troubleshooting-fifo-throttling-issues.html"
)

// limits are the Limits of kind t.
func limits(t targetkind.Type) outbox.Limits {
	k, _ := targetkind.Lookup(t)
	return k.Limits()
}

// TargetKindLimits are the kinds BenchmarkTargetKinds measures, one row
// each, in the report's order.
var TargetKindLimits = []KindLimits{
	{Name: "eventbridge", What: "EventBridge bus", Call: "PutEvents", Entries: publish.MaxBatchEntries, Bytes: limits(targetkind.EventBridge).BatchBytes,
		Quota:  "`PutEvents` requests per second per account and Region, adjustable (10,000 in us-east-1); the entry size is EventBridge's calculation (time, source, detail type, detail)",
		Source: []string{eventBridgeQuotas}},
	{Name: "sns", What: "SNS topic", Call: "PublishBatch", Entries: publish.MaxBatchEntries, Bytes: limits(targetkind.SNS).BatchBytes,
		Quota:  "`Publish` and `PublishBatch` messages per second per account and Region (each message of a batch counts); 256 KiB per message and per batch at the default `MaximumMessageSize`",
		Source: []string{snsQuotas, snsBatching}},
	{Name: "sns-fifo", What: "SNS FIFO topic", Call: "PublishBatch", Entries: publish.MaxBatchEntries, Bytes: limits(targetkind.SNS).BatchBytes,
		Quota:  "with `FifoThroughputScope` `Topic` (the default), 3,000 messages and 20 MB per second per topic; with `MessageGroup`, the Region's limits (deduplication then per group)",
		Source: []string{snsQuotas, snsFIFOScope}},
	{Name: "sqs", What: "SQS queue", Call: "SendMessageBatch", Entries: publish.MaxBatchEntries, Bytes: limits(targetkind.SQS).BatchBytes,
		Quota:  "nearly unlimited API calls per second per action",
		Source: []string{sqsMessageQuotas}},
	{Name: "sqs-fifo", What: "SQS FIFO queue", Call: "SendMessageBatch", Entries: publish.MaxBatchEntries, Bytes: limits(targetkind.SQS).BatchBytes,
		Quota:  "300 `SendMessageBatch` calls per second per partition without high throughput, so 3,000 messages a second in batches of 10; more in high-throughput mode, by Region",
		Source: []string{sqsMessageQuotas, sqsFIFOThrottling}},
}

// KindBench is BenchmarkTargetKinds's figures for one kind.
type KindBench struct {
	KindLimits
	// EventsPerSecond is one relay invocation's throughput: a batch of 100
	// events relayed at a time, every call slowed by the AWS latency model.
	EventsPerSecond float64
	// CallsPerEvent counts every AWS call; PublishCallsPerEvent only the
	// target's.
	CallsPerEvent, PublishCallsPerEvent float64
	RoundTrips                          float64
}

// TargetKinds extracts BenchmarkTargetKinds/<kind> for every kind of
// TargetKindLimits, in that order; none when the output holds none of
// them, and an error when it holds some but not all, or one lacks its
// metrics.
func (o BenchOutput) TargetKinds() ([]KindBench, error) {
	var out []KindBench
	var missing []string
	for _, k := range TargetKindLimits {
		name := "BenchmarkTargetKinds/" + k.Name
		b, ok := o.Find(name)
		if !ok {
			missing = append(missing, name)
			continue
		}
		kb := KindBench{KindLimits: k, EventsPerSecond: b.Metrics["events/s"], CallsPerEvent: b.Metrics["calls/event"],
			PublishCallsPerEvent: b.Metrics["publishcalls/event"], RoundTrips: b.Metrics["roundtrips/batch"]}
		if kb.EventsPerSecond == 0 || kb.CallsPerEvent == 0 || kb.PublishCallsPerEvent == 0 {
			return nil, fmt.Errorf("%s reports no events/s, calls/event or publishcalls/event", name)
		}
		out = append(out, kb)
	}
	switch {
	case len(out) == 0:
		return nil, nil
	case len(missing) > 0:
		return nil, fmt.Errorf("the benchmark output has no %s: run go test -bench BenchmarkTargetKinds on ./internal/relay", strings.Join(missing, ", "))
	}
	return out, nil
}

// writeTargetKinds writes the per-kind table of BenchmarkTargetKinds, when
// the benchmark output has it.
func (r Report) writeTargetKinds(p func(string, ...any)) error {
	kinds, err := r.Bench.TargetKinds()
	if err != nil || len(kinds) == 0 {
		return err
	}
	p("## Target kinds")
	p("")
	p("From `BenchmarkTargetKinds` in `internal/relay`: the relay in mark mode relays a batch of 100 events of distinct aggregates to each kind of target, against the fake AWS, with every call slowed by a draw of the [AWS latency model](#the-aws-latency-model). *Events per second* is one invocation's: one batch at a time, so one shard at parallelization 1; the mapping runs one such invocation per shard (and per concurrent batch), and the quota caps them all together. A FIFO target's messages of one group are sent one call after the other; with distinct groups its calls fill as a standard target's do.")
	p("")
	p("| kind | call | events/s, one invocation | AWS calls per event | publish calls per event | round trips per batch | entries per call | bytes per call | throughput quota |")
	p("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, k := range kinds {
		var links []string
		for i, s := range k.Source {
			links = append(links, fmt.Sprintf("[%d](%s)", i+1, s))
		}
		p("| %s | `%s` | %.0f | %.2f | %.2f | %.0f | %d | %s | %s (%s) |", k.What, k.Call, k.EventsPerSecond, k.CallsPerEvent, k.PublishCallsPerEvent, k.RoundTrips,
			k.Entries, kib(k.Bytes), k.Quota, strings.Join(links, ", "))
	}
	p("")
	p("The fake, like the local stack, refuses a call over its entries or bytes; neither enforces the throughput quotas.")
	p("")
	return nil
}

// kib writes a byte count in KiB, as AWS states the limits.
func kib(n int) string {
	if n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d bytes", n)
}
