package perfreport

import (
	"strings"
	"testing"
	"time"
)

const sampleBench = `goos: linux
goarch: amd64
pkg: github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb
cpu: AMD EPYC
BenchmarkPutItem-2   	      20	     51234 ns/op
PASS
pkg: github.com/outboxkit/terraform-provider-outbox/internal/relay
cpu: AMD EPYC
BenchmarkRelay/relay/mark-2         	      20	  90231085 ns/op	         1.100 calls/event	         1.000 reads/event	         2.000 roundtrips/batch
BenchmarkRelay/relay/delete-2       	      20	  15830270 ns/op	         0.1400 calls/event	         2.000 roundtrips/batch
BenchmarkRelay/naive/mark-2         	      20	 794714379 ns/op	         2.000 calls/event	       200.0 roundtrips/batch
    bench_test.go:12: a log line of the benchmark
BenchmarkRelay/naive/delete         	      20	 756298977 ns/op	         2.000 calls/event	       200.0 roundtrips/batch
BenchmarkReconcileReads/index/pending=100-2 	      20	   1000 ns/op	         9.500 readunits/run	         0.09500 readunits/event
BenchmarkReconcileReads/scan/pending=0-2    	      20	   1000 ns/op	         0.5000 readunits/run
BenchmarkTargetKinds/eventbridge-2         	      20	 145417788 ns/op	         1.110 calls/event	       687.7 events/s	         0.1000 publishcalls/event	         3.000 roundtrips/batch
BenchmarkTargetKinds/sns-2                 	      20	 134681332 ns/op	         1.110 calls/event	       742.5 events/s	         0.1000 publishcalls/event	         3.050 roundtrips/batch
BenchmarkTargetKinds/sns-fifo-2            	      20	 165320119 ns/op	         1.111 calls/event	       604.9 events/s	         0.1000 publishcalls/event	         3.100 roundtrips/batch
BenchmarkTargetKinds/sqs-2                 	      20	 104528684 ns/op	         1.110 calls/event	       956.7 events/s	         0.1000 publishcalls/event	         3.000 roundtrips/batch
BenchmarkTargetKinds/sqs-fifo-2            	      20	 107097022 ns/op	         1.111 calls/event	       933.7 events/s	         0.1000 publishcalls/event	         3.050 roundtrips/batch
BenchmarkOrdered/unordered-2         	       5	 206921896 ns/op	         1.110 calls/event	       483.3 events/s	         2.000 wru/event
BenchmarkOrdered/keys-1-2            	       5	2046169008 ns/op	         2.030 calls/event	        48.87 events/s	         2.010 wru/event
BenchmarkOrdered/keys-10-2           	       5	 442834735 ns/op	         1.220 calls/event	       225.8 events/s	         2.100 wru/event
BenchmarkOrdered/keys-1000-2         	       5	 321034323 ns/op	         2.120 calls/event	       311.5 events/s	         3.000 wru/event
BenchmarkOrderedPoison/keys-10-2     	      20	 805870802 ns/op	       280.7 clean-p99-ms	         1.087 p99-ratio	       305.1 poisoned-p99-ms
BenchmarkOrderedPoison/keys-1000-2   	      20	1044656205 ns/op	       313.3 clean-p99-ms	         2.310 p99-ratio	       723.7 poisoned-p99-ms
PASS
ok  	github.com/outboxkit/terraform-provider-outbox/internal/relay	34.500s
pkg: github.com/outboxkit/terraform-provider-outbox/internal/consumertest
BenchmarkConsumerOverhead/plain-2    	      20	 400000000 ns/op	         2.000 inbox-wru/msg	        10.20 p50-added-ms/msg	        19.50 p99-added-ms/msg	         2.000 wru/msg
BenchmarkConsumerOverhead/effect-2   	      20	 500000000 ns/op	         3.000 inbox-wru/msg	        10.10 p50-added-ms/msg	        22.40 p99-added-ms/msg	         4.000 wru/msg
BenchmarkConsumerOverhead/effects-only-2  	      20	 139844674 ns/op	         2.000 inbox-wru/msg	         5.145 p50-added-ms/msg	        17.55 p99-added-ms/msg	         3.000 wru/msg
BenchmarkConsumerBatch/concurrency-1-2    	      20	 143472344 ns/op	        13.44 invocation-ms/msg	        -1.300 p99-added-invocation-ms/msg
BenchmarkConsumerBatch/concurrency-10-2   	      20	  30052142 ns/op	         3.017 invocation-ms/msg	         4.200 p99-added-invocation-ms/msg
BenchmarkClaimCheck-2   	       20	2874285619 ns/op	         3.479 MiB/s	         3.479 events/s	         3.000 s3requests/event	         1.000 sweeps3requests/event	         4.000 wru/event
PASS
pkg: github.com/outboxkit/terraform-provider-outbox/internal/perfreport
BenchmarkRegions-2   	       1	53501717680 ns/op	         0.01100 regions-1-relay_invocations_per_event	         0 regions-1-replicated_wu_per_event_per_region	         2.000 regions-1-stream_reads_per_event	         6.000 regions-1-wu_per_event	         0.01150 regions-2-relay_invocations_per_event	         2.000 regions-2-replicated_wu_per_event_per_region	         2.000 regions-2-stream_reads_per_event	         6.000 regions-2-wu_per_event	         0.01100 regions-3-relay_invocations_per_event	         2.000 regions-3-replicated_wu_per_event_per_region	         2.000 regions-3-stream_reads_per_event	         6.000 regions-3-wu_per_event	        27.00 takeover_bound_s	        26.70 takeover_first_s	        29.82 takeover_last_s
PASS
`

func TestParseBench(t *testing.T) {
	out, err := ParseBench(strings.NewReader(sampleBench))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Benchmarks) != 25 || out.CPU != "AMD EPYC" {
		t.Fatalf("parsed %d benchmarks, cpu %q: %+v", len(out.Benchmarks), out.CPU, out.Benchmarks)
	}
	b, ok := out.Find("BenchmarkRelay/relay/delete")
	if !ok {
		t.Fatal("BenchmarkRelay/relay/delete not found")
	}
	if b.Procs != 2 || b.Iterations != 20 || b.Metrics["calls/event"] != 0.14 || b.Metrics["ns/op"] != 15830270 ||
		b.Pkg != "github.com/outboxkit/terraform-provider-outbox/internal/relay" {
		t.Errorf("relay/delete = %+v", b)
	}
	rb, err := out.RelayBenchmarks()
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		impl, action string
		rt, calls    float64
	}{{"relay", "mark", 2, 1.1}, {"relay", "delete", 2, 0.14}, {"naive", "mark", 200, 2}, {"naive", "delete", 200, 2}}
	for i, w := range want {
		g := rb[i]
		if g.Impl != w.impl || g.Action != w.action || g.RoundTrips != w.rt || g.CallsPerEvent != w.calls {
			t.Errorf("relay benchmark %d = %+v, want %+v", i, g, w)
		}
	}
}

func TestRelayBenchmarksMissing(t *testing.T) {
	in := strings.Replace(sampleBench, "BenchmarkRelay/naive/mark-2", "BenchmarkOther-2", 1)
	out, err := ParseBench(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := out.RelayBenchmarks(); err == nil || !strings.Contains(err.Error(), "naive/mark") {
		t.Errorf("error %v, want one naming naive/mark", err)
	}
	in = strings.Replace(sampleBench, "2.000 roundtrips/batch\nBenchmarkRelay/relay/delete", "2.000 other/unit\nBenchmarkRelay/relay/delete", 1)
	out, _ = ParseBench(strings.NewReader(in))
	if _, err := out.RelayBenchmarks(); err == nil || !strings.Contains(err.Error(), "roundtrips/batch") {
		t.Errorf("error %v, want one naming the missing metric", err)
	}
}

func TestReconcileReads(t *testing.T) {
	out, err := ParseBench(strings.NewReader(sampleBench))
	if err != nil {
		t.Fatal(err)
	}
	got := out.ReconcileReads()
	want := []ReconcileReads{{Mode: "index", Pending: 100, UnitsPerRun: 9.5}, {Mode: "scan", Pending: 0, UnitsPerRun: 0.5}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("reconcile reads = %+v, want %+v", got, want)
	}
	rb, err := out.RelayBenchmarks()
	if err != nil {
		t.Fatal(err)
	}
	if rb[0].ReadsPerEvent != 1 {
		t.Errorf("relay/mark reads/event = %v, want 1", rb[0].ReadsPerEvent)
	}
}

func TestTargetKinds(t *testing.T) {
	out, err := ParseBench(strings.NewReader(sampleBench))
	if err != nil {
		t.Fatal(err)
	}
	kinds, err := out.TargetKinds()
	if err != nil {
		t.Fatal(err)
	}
	if len(kinds) != len(TargetKindLimits) {
		t.Fatalf("%d kinds, want %d", len(kinds), len(TargetKindLimits))
	}
	if k := kinds[2]; k.Name != "sns-fifo" || k.EventsPerSecond != 604.9 || k.CallsPerEvent != 1.111 || k.PublishCallsPerEvent != 0.1 || k.RoundTrips != 3.1 || k.Entries != 10 {
		t.Errorf("sns-fifo = %+v", k)
	}
	none, err := ParseBench(strings.NewReader(strings.ReplaceAll(sampleBench, "BenchmarkTargetKinds/", "BenchmarkOther/")))
	if err != nil {
		t.Fatal(err)
	}
	if kinds, err := none.TargetKinds(); err != nil || kinds != nil {
		t.Errorf("without the benchmark: %+v, %v; want none and no error", kinds, err)
	}
	some, _ := ParseBench(strings.NewReader(strings.Replace(sampleBench, "BenchmarkTargetKinds/sqs-2", "BenchmarkOther-2", 1)))
	if _, err := some.TargetKinds(); err == nil || !strings.Contains(err.Error(), "BenchmarkTargetKinds/sqs") {
		t.Errorf("one kind missing: error %v, want one naming it", err)
	}
	noRate, _ := ParseBench(strings.NewReader(strings.Replace(sampleBench, "687.7 events/s", "687.7 other/unit", 1)))
	if _, err := noRate.TargetKinds(); err == nil || !strings.Contains(err.Error(), "events/s") {
		t.Errorf("a metric missing: error %v, want one naming it", err)
	}
}

// TestModelLatency draws the model's latency by operation: within the
// model's spread around its median, and none for an operation it lacks;
// each operation is in the model once.
func TestModelLatency(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range AWSLatencyModel {
		if seen[c.Operation] {
			t.Errorf("operation %s is in the model twice: ModelLatency tells calls apart by operation alone", c.Operation)
		}
		seen[c.Operation] = true
	}
	draw := ModelLatency(AWSLatencyModel)
	if d := draw("NoSuchOperation"); d != 0 {
		t.Errorf("an operation outside the model takes %s", d)
	}
	var below int
	const n = 2000
	for range n {
		d := draw("PutEvents")
		if d <= 0 || d > time.Second {
			t.Fatalf("PutEvents draw %s", d)
		}
		if d < 20*time.Millisecond {
			below++
		}
	}
	// The median is 20 ms: about half the draws are below it.
	if below < n*4/10 || below > n*6/10 {
		t.Errorf("%d of %d PutEvents draws below the 20 ms median", below, n)
	}
}
