package perfreport

import (
	"strings"
	"testing"
	"time"
)

func TestWriteMarkdown(t *testing.T) {
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
		CommitApp: WriteUnits{Table: 20}, CommitOutbox: WriteUnits{Table: 20, Indexes: 20},
		Settle: map[string]WriteUnits{
			"relay/mark": {Table: 10, Indexes: 10, Requests: 10}, "relay/delete": {Table: 10, Indexes: 10, Requests: 1},
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
			Relay: ModeResult{Name: "relay", Latencies: lat(100 * time.Millisecond), InvocationsPerEvent: 0.25,
				Bursts: []Burst{{Events: 1000, Drain: 2 * time.Second, Invocations: 10}}},
			Naive: ModeResult{Name: "naive", Latencies: lat(200 * time.Millisecond), InvocationsPerEvent: 0.25,
				Bursts: []Burst{{Events: 1000, Drain: 8 * time.Second, Invocations: 10}}},
			Units: units,
			Apply: ApplyResult{TerraformSkipped: "no Terraform CLI", Create: []time.Duration{time.Second}},
		},
	}
	var b strings.Builder
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| end-to-end latency p50 (local stack) | 149 ms | 249 ms | 1.67× |",
		"| throughput, one shard (events/s, median of 1 bursts of 1000) | 500 | 125 | 0.25× |",
		"| sequential round trips per 100-record batch, mark | 2 | 200 | 100.00× |",
		"| **total** | 8 | 8 | 8 | 8 | 1 |",
		"| DynamoDB writes | 5.000 | 5.000 | 5.000 | 5.000 | 0.625 |",
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
}
