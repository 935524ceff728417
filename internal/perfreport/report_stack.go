package perfreport

import (
	"fmt"

	"github.com/outboxkit/terraform-provider-outbox/internal/stats"
)

// PartitionOutboxItemsPerSecond is what one DynamoDB partition can take of
// transactional outbox writes: 1,000 write units a second per partition,
// 2 units per outbox item written in a transaction.
const PartitionOutboxItemsPerSecond = 500

func (r Report) writeSummary(p func(string, ...any), bench map[string]RelayBench) {
	s := r.Stack
	p("## Summary")
	p("")
	p("Each row is measured twice in the same run: on the local stack as it is, where a call takes about a millisecond, and with the [AWS latency model](#the-aws-latency-model) added to every call the relays make, which is what they meet on AWS.")
	p("")
	p("| | relay | naive relay | relay / naive |")
	p("| --- | ---: | ---: | ---: |")
	for _, sc := range []Scenario{s.Model, s.Local} {
		lr, ln := sc.Relay.Latencies, sc.Naive.Latencies
		p("| end-to-end latency p50 (%s) | %s | %s | %s |", sc.Name, ms(stats.Median(lr)), ms(stats.Median(ln)), ratio(float64(stats.Median(lr)), float64(stats.Median(ln))))
		p("| end-to-end latency p99 (%s) | %s | %s | %s |", sc.Name, ms(stats.Percentile(lr, 99)), ms(stats.Percentile(ln, 99)), ratio(float64(stats.Percentile(lr, 99)), float64(stats.Percentile(ln, 99))))
		p("| **throughput, one shard (%s)**, events/s, median of %d bursts of %d | **%.0f** | **%.0f** | **%s** |", sc.Name, len(sc.Relay.Bursts), s.Options.Burst, sc.Relay.MedianThroughput(), sc.Naive.MedianThroughput(), ratio(sc.Relay.MedianThroughput(), sc.Naive.MedianThroughput()))
	}
	p("| throughput ceiling, one shard (AWS model, batch size %d, parallelization %d), events/s | %.0f | | |", s.Ceiling.BatchSize, s.Ceiling.ParallelizationFactor, s.Ceiling.MedianThroughput())
	p("| sequential round trips per 100-record batch, mark | %.0f | %.0f | %s |", bench["relay/mark"].RoundTrips, bench["naive/mark"].RoundTrips, ratio(bench["relay/mark"].RoundTrips, bench["naive/mark"].RoundTrips))
	p("| AWS calls per event, mark | %.2f | %.2f | %s |", bench["relay/mark"].CallsPerEvent, bench["naive/mark"].CallsPerEvent, ratio(bench["relay/mark"].CallsPerEvent, bench["naive/mark"].CallsPerEvent))
	p("| AWS calls per event, delete | %.2f | %.2f | %s |", bench["relay/delete"].CallsPerEvent, bench["naive/delete"].CallsPerEvent, ratio(bench["relay/delete"].CallsPerEvent, bench["naive/delete"].CallsPerEvent))
	p("| read requests per event (status check before publishing), mark | %.2f | %.2f | |", bench["relay/mark"].ReadsPerEvent, bench["naive/mark"].ReadsPerEvent)
	u := s.Units
	p("| DynamoDB write units per event, mark | %s | %s | |", wru(u.Total("relay/mark")), wru(u.Total("naive/mark")))
	p("| DynamoDB write units per event, delete without pending index | %s | | |", wru(u.Total(UnitsGSIFree)))
	p("")
	p("The naive relay is `internal/relay/naive`: per record, one `PutEvents` with one entry, then one `UpdateItem` (or `DeleteItem`), in sequence. Both relays were deployed side by side in the same run, with the same table, stream, mapping and subscription settings.")
	p("")
}

func (r Report) writeModel(p func(string, ...any)) {
	p("## The AWS latency model")
	p("")
	p("On the local stack a call costs about a millisecond, so a relay that makes 200 calls one after the other per batch looks almost as fast as one that makes a few. On AWS each call crosses the network. The model adds, through the stack's fault API (`latency` and `latencyP99` of a fault rule), a random latency to each call of these operations: log-normal, with the median and 99th percentile below. AWS publishes no per-operation call percentiles, so each figure is an estimate, marked as such with what it rests on.")
	p("")
	p("| service | operation | p50 | p99 | source |")
	p("| --- | --- | ---: | ---: | --- |")
	for _, c := range r.Stack.Model.Model {
		p("| %s | `%s` | %s | %s | %s |", c.Service, c.Operation, ms(c.P50), ms(c.P99), c.Source)
	}
	p("")
	p("The mapping's poll cadence (4 polls a second per shard) is the stack's own, as Lambda documents it; EventBridge's delivery to SQS and the consumers' SQS calls are not slowed.")
	p("")
}

func (r Report) writeScenario(p func(string, ...any), sc Scenario) {
	s := r.Stack
	p("## End-to-end latency and throughput: %s", sc.Name)
	p("")
	if sc.Model == nil {
		p("The stack as it is: every call takes about a millisecond on this machine.")
	} else {
		p("Every call of the relays and writers is slowed by the [AWS latency model](#the-aws-latency-model).")
	}
	p("")
	p("Both relays run as real `bootstrap` processes (%s, native) on the local AWS stack, each deployed as its own pipeline with `provision.Provisioner.Create` (defaults: batch size 100, no batching window, parallelization 1, bisect on, reconciler off) and a subscription made with `internal/subscription` (an EventBridge rule on the event's source → an SQS queue, long-polled by 4 consumers, 20 s wait). Each event is committed with an application item in one `TransactWriteItems` (`outbox.Writer`), with a 200-byte detail.", s.Architecture)
	p("")
	p("**Latency** is from the return of `TransactWriteItems` to the consumer's `ReceiveMessage` returning the event; %d events per relay, committed at random intervals averaging %s (Poisson arrivals) by one writer per relay, both relays at once, after a warm-up.", s.Options.LatencyEvents, s.Options.Interval)
	p("")
	if sc.Model != nil {
		p("![Latency histogram of the relay and the naive relay](%s)", r.Image)
		p("")
	}
	p("| | p50 | p90 | p99 | max | events | lost | duplicates | invocations per event |")
	p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, mr := range []ModeResult{sc.Relay, sc.Naive} {
		p("| %s | %s | %s | %s | %s | %d | %d | %d | %.2f |", mr.Name, ms(stats.Median(mr.Latencies)), ms(stats.Percentile(mr.Latencies, 90)), ms(stats.Percentile(mr.Latencies, 99)), ms(stats.Percentile(mr.Latencies, 100)),
			len(mr.Latencies)+mr.Lost, mr.Lost, mr.Duplicates, mr.InvocationsPerEvent)
	}
	p("")
	p("**Throughput** through one shard: the mapping is paused, %d events are committed (8 writers), the mapping is resumed, and the time runs from the resume to the receipt of the last event (it includes the wait for the first poll, up to 250 ms). Runs alternate between the relays.", s.Options.Burst)
	p("")
	p("| relay | run | drain time | events/s | invocations | records per invocation |")
	p("| --- | ---: | ---: | ---: | ---: | ---: |")
	for _, mr := range []ModeResult{sc.Relay, sc.Naive} {
		burstRows(p, mr.Name, mr.Bursts)
	}
	p("")
	p("Median: relay %.0f events/s, naive relay %.0f events/s: the relay moves **%s** the naive relay's events through a shard. With parallelization 1 the mapping invokes one batch per shard at a time, so a shard's throughput is batch size over batch duration: the naive relay's 200 sequential calls per batch cap it (%.1f ms per event here), where the relay's batch costs a few round trips.",
		sc.Relay.MedianThroughput(), sc.Naive.MedianThroughput(), ratio(sc.Relay.MedianThroughput(), sc.Naive.MedianThroughput()), 1000/sc.Naive.MedianThroughput())
	p("")
}

func (r Report) writeCeiling(p func(string, ...any)) {
	c := r.Stack.Ceiling
	p("## Throughput ceiling of one shard")
	p("")
	p("The relay again, with the mapping at batch size %d and parallelization %d (up to %d batches of one shard at once, keyed by partition key), under the AWS latency model; bursts of %d events, measured as above.", c.BatchSize, c.ParallelizationFactor, c.ParallelizationFactor, r.Stack.Options.CeilingBurst)
	p("")
	p("| relay | run | drain time | events/s | invocations | records per invocation |")
	p("| --- | ---: | ---: | ---: | ---: | ---: |")
	burstRows(p, ModeCeiling, c.Bursts)
	p("")
	verdict := "keeps up with"
	if c.MedianThroughput() < PartitionOutboxItemsPerSecond {
		verdict = "does **not** keep up with"
	}
	p("Median **%.0f events/s** per shard. One DynamoDB partition takes at most 1,000 write units a second, and an outbox item written in a transaction costs 2, so the fastest writer that one stream shard can have commits about %d outbox items a second: at these settings the relay %s it (%s). On this machine the stack's own CPU is part of the limit; on AWS the relay's functions run on their own.",
		c.MedianThroughput(), PartitionOutboxItemsPerSecond, verdict, ratio(c.MedianThroughput(), PartitionOutboxItemsPerSecond))
	p("")
}

func (r Report) writeReconcileReads(p func(string, ...any)) {
	reads := r.Bench.ReconcileReads()
	if len(reads) == 0 {
		return
	}
	p("**The reconciler's reads.** From `BenchmarkReconcileReads` in `internal/relay`: one reconciler run over a table holding the given number of pending events older than the minimum age, in delete mode, with the pending index (a query of each of the 16 shards) and without it (a parallel scan of the table, which then holds only undelivered items). Read request units per run, as DynamoDB reports them (%s USD per million):", usd(PriceRRU))
	p("")
	p("| pending events | read units per run | mode |")
	p("| ---: | ---: | --- |")
	for _, x := range reads {
		p("| %d | %s | %s |", x.Pending, wru(x.UnitsPerRun), map[string]string{"index": "pending index", "scan": "scan, no pending index"}[x.Mode])
	}
	p("")
	p("A run's cost grows with what is pending in both modes; with nothing pending a scan costs less than the 16 queries. At one run every 5 minutes, 8,640 runs a month of an idle pipeline cost under a cent either way.")
	p("")
}

func burstRows(p func(string, ...any), name string, bursts []Burst) {
	for i, bu := range bursts {
		per := 0.0
		if bu.Invocations > 0 {
			per = float64(bu.Events) / float64(bu.Invocations)
		}
		p("| %s | %d | %s | %.0f | %d | %.0f |", name, i+1, msPrec(bu.Drain), bu.EventsPerSecond(), bu.Invocations, per)
	}
}

// SummaryLine is the report's closing line for scripts.
func (r Report) SummaryLine() (string, error) {
	rb, err := r.Bench.RelayBenchmarks()
	if err != nil {
		return "", err
	}
	var roundTrips float64
	for _, x := range rb {
		if x.Impl == ModeRelay && x.Action == "mark" {
			roundTrips = x.RoundTrips
		}
	}
	u := r.Stack.Units
	gsiFree := u.Total(UnitsGSIFree)
	return fmt.Sprintf("bench: throughput_ratio_model=%.1f throughput_ratio_local=%.1f roundtrips=%.0f wru_mark=%s wru_gsi_free=%s usd_per_million_gsi_free=%s",
		r.Stack.Model.ThroughputRatio(), r.Stack.Local.ThroughputRatio(), roundTrips,
		wru(u.Total("relay/mark")), wru(gsiFree), usd(r.usdPerMillion(gsiFree))), nil
}

// usdPerMillion is the cost of a million events that take units write
// units each: DynamoDB writes, EventBridge and the relay's Lambda requests
// at full batches of the AWS model's bursts.
func (r Report) usdPerMillion(units float64) float64 {
	lambda := 0.0
	if b := r.Stack.Model.Relay.MedianBatch(); b > 0 {
		lambda = PriceLambdaReq / b
	}
	return units*PriceWRU + PriceEventBridge + lambda
}
