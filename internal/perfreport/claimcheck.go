package perfreport

// The metrics of BenchmarkClaimCheck (internal/consumertest): the claim
// check's cost per event of 1 MiB under the AWS latency model.
const (
	UnitClaimEventsPerSec = "events/s"
	UnitClaimMiBPerSec    = "MiB/s"
	UnitClaimS3Requests   = "s3requests/event"
	UnitClaimSweepS3      = "sweeps3requests/event"
	UnitClaimWRU          = "wru/event"
)

// writeClaimCheck writes the claim check's cost, when measured.
func (r Report) writeClaimCheck(p func(string, ...any)) {
	b, ok := r.Bench.Find("BenchmarkClaimCheck")
	if !ok {
		return
	}
	m := b.Metrics
	p("## The claim check at 1 MiB")
	p("")
	p("From `BenchmarkClaimCheck` in `internal/consumertest`: events of 1 MiB written one by one with `outbox.WithClaimCheck`, published in batches of 10 to an SQS queue and applied by the consumer kit, on the local stack under the AWS latency model (its S3 rows are estimates for objects of about 1 MiB).")
	p("")
	p("| events/s end to end | MiB/s | S3 requests per event | S3 requests per event in the sweep | write units per event (the writer's transaction) |")
	p("| ---: | ---: | ---: | ---: | ---: |")
	p("| %.1f | %.1f | %.1f | %.1f | %.1f |", m[UnitClaimEventsPerSec], m[UnitClaimMiBPerSec], m[UnitClaimS3Requests], m[UnitClaimSweepS3], m[UnitClaimWRU])
	p("")
	p("The S3 requests are the writer's `PutObject`, the relay's `PutObjectTagging` and the consumer's `GetObject`; the sweep reads each object's metadata (`HeadObject`, and a consistent `GetItem` of its item) in each of about two runs, and deletes only the objects whose transaction never committed. The write units are those of any event: the item, under 1 KB with its reference, and its pending index entry, each doubled in the transaction; the data itself costs no DynamoDB capacity. One writer is the bound here: each `Write` waits for its `PutObject` before its transaction.")
	p("")
}
