package perfreport

import (
	"strings"
	"testing"
	"time"
)

// sampleReport is a fixed report of every section.
func sampleReport(t *testing.T) Report {
	t.Helper()
	bench, err := ParseBench(strings.NewReader(sampleBench))
	if err != nil {
		t.Fatal(err)
	}
	lat := func(base time.Duration) []time.Duration {
		var ds []time.Duration
		for i := range 100 {
			ds = append(ds, base+time.Duration(i)*time.Millisecond)
		}
		return ds
	}
	units := UnitsResult{
		Events:    10,
		CommitApp: WriteUnits{Table: 20}, CommitOutbox: WriteUnits{Table: 20, Indexes: 20}, CommitOutboxGSIFree: WriteUnits{Table: 20},
		Settle: map[string]WriteUnits{
			"relay/mark": {Table: 10, Indexes: 10, Requests: 10}, "relay/delete": {Table: 10, Indexes: 10, Requests: 1},
			UnitsGSIFree: {Table: 10, Requests: 1},
			"naive/mark": {Table: 10, Indexes: 10, Requests: 10}, "naive/delete": {Table: 10, Indexes: 10, Requests: 10},
		},
		DualWrite: WriteUnits{Table: 10},
	}
	r := Report{
		Date: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Machine: Machine{Cores: 2, LoadBefore: "1.00, 1.00, 1.00", LoadAfter: "2.00, 2.00, 2.00"},
		Bench: bench, Image: "performance-latency.png",
		Stack: &Results{
			Options:      Options{Burst: 1000, Interval: 50 * time.Millisecond},
			Architecture: "x86_64",
			Local: Scenario{Name: ScenarioLocal,
				Relay: ModeResult{Name: "relay", Latencies: lat(100 * time.Millisecond), InvocationsPerEvent: 0.25,
					Bursts: []Burst{{Events: 1000, Drain: 2 * time.Second, Invocations: 10}}},
				Naive: ModeResult{Name: "naive", Latencies: lat(200 * time.Millisecond), InvocationsPerEvent: 0.25,
					Bursts: []Burst{{Events: 1000, Drain: 8 * time.Second, Invocations: 10}}}},
			Model: Scenario{Name: ScenarioModel, Model: AWSLatencyModel,
				Relay: ModeResult{Name: "relay", Latencies: lat(150 * time.Millisecond), InvocationsPerEvent: 0.25,
					Bursts: []Burst{{Events: 1000, Drain: 2 * time.Second, Invocations: 10}}},
				Naive: ModeResult{Name: "naive", Latencies: lat(300 * time.Millisecond), InvocationsPerEvent: 0.25,
					Bursts: []Burst{{Events: 1000, Drain: 40 * time.Second, Invocations: 10}}}},
			Ceiling: Ceiling{BatchSize: 1000, ParallelizationFactor: 10, Bursts: []Burst{{Events: 5000, Drain: 4 * time.Second, Invocations: 10}}},
			Units:   units,
			Apply:   ApplyResult{TerraformSkipped: "no Terraform CLI", Create: []time.Duration{time.Second}},
		},
	}
	return r
}

func TestWriteMarkdown(t *testing.T) {
	r := sampleReport(t)
	var b strings.Builder
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| end-to-end latency p50 (local stack) | 149 ms | 249 ms | 0.60× |",
		"| **throughput, one shard (local stack)**, events/s, median of 1 bursts of 1000 | **500** | **125** | **4.00×** |",
		"| **throughput, one shard (AWS model)**, events/s, median of 1 bursts of 1000 | **500** | **25** | **20.00×** |",
		"| throughput ceiling, one shard (AWS model, batch size 1000, parallelization 10), events/s | 1250 | | |",
		"at these settings the relay keeps up with it (2.50×)",
		"| sequential round trips per 100-record batch, mark | 2 | 200 | 0.01× |",
		"| **total** | 8 | 8 | 5 | 8 | 8 | 1 |",
		"| DynamoDB writes | 5.000 | 5.000 | 3.125 | 5.000 | 5.000 | 0.625 |",
		"| events | `PutEvents` | 20 ms | 60 ms |",
		"| read requests per event (status check before publishing), mark | 1.00 | 0.00 | |",
		"| 100 | 9.5 | pending index |",
		"![Latency histogram of the relay and the naive relay](performance-latency.png)",
		"`terraform apply` was not timed (no Terraform CLI)",
		"load average (1, 5, 15 min) 1.00, 1.00, 1.00 at the start and 2.00, 2.00, 2.00 at the end",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if t.Failed() {
		t.Log(md)
	}
	line, err := r.SummaryLine()
	if err != nil {
		t.Fatal(err)
	}
	if want := "bench: throughput_ratio_model=20.0 throughput_ratio_local=4.0 roundtrips=2 wru_mark=8 wru_gsi_free=5 usd_per_million_gsi_free=4.127"; line != want {
		t.Errorf("summary line\n got %s\nwant %s", line, want)
	}
}
