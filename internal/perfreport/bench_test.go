package perfreport

import (
	"strings"
	"testing"
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
PASS
ok  	github.com/outboxkit/terraform-provider-outbox/internal/relay	34.500s
pkg: github.com/outboxkit/terraform-provider-outbox/internal/consumertest
BenchmarkConsumerOverhead/plain-2    	      20	 400000000 ns/op	         2.000 wru/msg	        10.20 p50-added-ms/msg	        19.50 p99-added-ms/msg
BenchmarkConsumerOverhead/effect-2   	      20	 500000000 ns/op	         4.000 wru/msg	        10.10 p50-added-ms/msg	        22.40 p99-added-ms/msg
PASS
`

func TestParseBench(t *testing.T) {
	out, err := ParseBench(strings.NewReader(sampleBench))
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Benchmarks) != 9 || out.CPU != "AMD EPYC" {
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
