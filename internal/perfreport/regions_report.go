package perfreport

import "fmt"

// The metrics of BenchmarkRegions, each of the n-Region run prefixed
// "regions-<n>-" (regionsMetric), and the takeover's.
const (
	UnitRegionsWriteUnits      = "wu_per_event"
	UnitRegionsReplicatedUnits = "replicated_wu_per_event_per_region"
	UnitRegionsStreamReads     = "stream_reads_per_event"
	UnitRegionsInvocations     = "relay_invocations_per_event"
	UnitTakeoverFirst          = "takeover_first_s"
	UnitTakeoverLast           = "takeover_last_s"
	UnitTakeoverBound          = "takeover_bound_s"
)

// regionsMetric is the name of the n-Region run's metric unit.
func regionsMetric(n int, unit string) string { return fmt.Sprintf("regions-%d-%s", n, unit) }

// writeRegions writes the cost of each extra Region and the takeover's
// time, when BenchmarkRegions was measured.
func (r Report) writeRegions(p func(string, ...any)) {
	b, ok := r.Bench.Find("BenchmarkRegions")
	if !ok {
		return
	}
	m := b.Metrics
	o := RegionsOptions{}
	o.defaults()
	p("## Across Regions")
	p("")
	p("From `BenchmarkRegions` in `internal/perfreport`, on the local stack: %s events (by default) written in one Region of a global table of 1, 2 and 3 Regions (version 2019.11.21, each replica with its stream), a multi-Region pipeline (`multi_region`) in every Region, counted once every event is published and every write replicated; then a takeover of a Region taken down with %s events pending.",
		count(o.Events), count(o.TakeoverEvents))
	p("")
	p("| Regions | write units per event, writing Region | replicated write units per event, each other Region | stream records per event, each Region | relay invocations per event, all Regions |")
	p("| ---: | ---: | ---: | ---: | ---: |")
	for n := 1; n <= len(benchRegions); n++ {
		if _, ok := m[regionsMetric(n, UnitRegionsWriteUnits)]; !ok {
			continue
		}
		p("| %d | %.2f | %.2f | %.2f | %.4f |", n, m[regionsMetric(n, UnitRegionsWriteUnits)], m[regionsMetric(n, UnitRegionsReplicatedUnits)],
			m[regionsMetric(n, UnitRegionsStreamReads)], m[regionsMetric(n, UnitRegionsInvocations)])
	}
	p("")
	p("Each extra Region costs, per event, the replicated writes of its insert and of its mark: 2 replicated write units for items under 1 KB (a `delete` action replicates a delete instead of the mark, and the published item's TTL deletion later costs each other Region one more, though none in the Region that deletes it: \"Throughput capacity planning for DynamoDB global tables\", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-global-table-design.prescriptive-guidance.throughput.html). A global table's capacity is metered in replicated write request units on demand and replicated write capacity units when provisioned (\"Best practices and requirements for managing global tables\", https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/V2globaltables_reqs_bestpractices.html). The column counts the item writes each replica applied; each replica also keeps its own pending index, to which the insert adds an entry and the mark removes it, as in the writing Region. The writing Region's own units do not change with the Regions. Every replica's stream carries every write, replicated ones included, so each Region's mapping reads the same 2 records per event; the origin filter drops the other Regions' records at the mapping, so the relay invocations stay those of the writing Region alone: the other Regions invoke their relay for none of its events.")
	p("")
	first, last := m[UnitTakeoverFirst], m[UnitTakeoverLast]
	p("The takeover: the successor published the silent Region's first pending event %.1f s and its last %.1f s after the Region went down. A silent Region waits at most `takeover_after` + settle + one reconciler interval for a publisher (DESIGN.md \"Across Regions\"): here %s + %s + %s = %.1f s, the run's `takeover_after`, settle and interval, set short for the measurement. "+
		"The first event goes out in the successor's first run after the silent Region's heartbeat is older than `takeover_after` and the claim has settled, the rest %.1f s later at the reconciler's publishing rate. With the defaults (`takeover_after` three reconciler intervals and at least 5 minutes, settle 30 s) the same path takes minutes.",
		first, last, o.TakeoverAfter, o.TakeoverSettle, o.Interval, m[UnitTakeoverBound], last-first)
	p("")
	p("Reproduce with `go test -run '^$' -bench '^BenchmarkRegions$' -benchtime 1x ./internal/perfreport/` (`OUTBOX_REGIONS_EVENTS` changes the 2,000 events; `-v` logs the progress); `make bench` runs it once. Its line `regions: regions=2 ... takeover_bound_s=...` has the 2-Region run's figures for scripts.")
	p("")
}
