// Package perfreport measures the outbox and writes the performance report
// (docs/performance.md, made by `make bench` through cmd/outbox-bench): it
// reads the relay's benchmark from `go test -bench` output, measures
// latency, throughput, write units and cold starts on the local AWS stack,
// and draws the latency histogram.
package perfreport

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Benchmark is one result line of `go test -bench` output.
type Benchmark struct {
	// Pkg is the import path of the package (from its "pkg:" line).
	Pkg string
	// Name is the benchmark's name without the GOMAXPROCS suffix
	// ("BenchmarkRelay/relay/mark").
	Name string
	// Procs is the GOMAXPROCS suffix (0 when absent).
	Procs      int
	Iterations int
	// Metrics maps a unit ("ns/op", "calls/event") to its value.
	Metrics map[string]float64
}

// BenchOutput is parsed `go test -bench` output.
type BenchOutput struct {
	Benchmarks []Benchmark
	// CPU is the first "cpu:" line's value.
	CPU string
}

var procsSuffix = regexp.MustCompile(`-(\d+)$`)

// ParseBench reads `go test -bench` output (the text format, several
// packages in a row). Lines that are not results are skipped.
func ParseBench(r io.Reader) (BenchOutput, error) {
	var out BenchOutput
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "pkg: "):
			pkg = strings.TrimSpace(strings.TrimPrefix(line, "pkg: "))
			continue
		case strings.HasPrefix(line, "cpu: "):
			if out.CPU == "" {
				out.CPU = strings.TrimSpace(strings.TrimPrefix(line, "cpu: "))
			}
			continue
		case !strings.HasPrefix(line, "Benchmark"):
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 || len(f)%2 != 0 {
			continue // a benchmark's own log line, or a name without results
		}
		n, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		b := Benchmark{Pkg: pkg, Name: f[0], Iterations: n, Metrics: map[string]float64{}}
		if m := procsSuffix.FindStringSubmatch(b.Name); m != nil {
			b.Procs, _ = strconv.Atoi(m[1])
			b.Name = strings.TrimSuffix(b.Name, m[0])
		}
		ok := true
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				ok = false
				break
			}
			b.Metrics[f[i+1]] = v
		}
		if ok {
			out.Benchmarks = append(out.Benchmarks, b)
		}
	}
	return out, sc.Err()
}

// Find returns the benchmark called name (without GOMAXPROCS suffix).
func (o BenchOutput) Find(name string) (Benchmark, bool) {
	for _, b := range o.Benchmarks {
		if b.Name == name {
			return b, true
		}
	}
	return Benchmark{}, false
}

// RelayBench is the relay benchmark's figures for one relay and action.
type RelayBench struct {
	Impl, Action  string
	RoundTrips    float64 // sequential round trips per 100-record batch
	CallsPerEvent float64
	// ReadsPerEvent is the read requests per event (the status check
	// before publishing).
	ReadsPerEvent  float64
	NsPerBatch     float64
	BenchmarkName  string
	BenchmarkIters int
}

// RelayBenchmarks extracts BenchmarkRelay/{relay,naive}/{mark,delete} from
// the output of internal/relay's benchmarks. It fails when one is missing
// or lacks its metrics.
func (o BenchOutput) RelayBenchmarks() ([]RelayBench, error) {
	var out []RelayBench
	for _, impl := range []string{"relay", "naive"} {
		for _, action := range []string{"mark", "delete"} {
			name := fmt.Sprintf("BenchmarkRelay/%s/%s", impl, action)
			b, ok := o.Find(name)
			if !ok {
				return nil, fmt.Errorf("the benchmark output has no %s: run go test -bench on ./internal/relay", name)
			}
			rt, ok1 := b.Metrics["roundtrips/batch"]
			calls, ok2 := b.Metrics["calls/event"]
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("%s reports no roundtrips/batch or calls/event", name)
			}
			out = append(out, RelayBench{
				Impl: impl, Action: action, RoundTrips: rt, CallsPerEvent: calls, ReadsPerEvent: b.Metrics["reads/event"],
				NsPerBatch: b.Metrics["ns/op"], BenchmarkName: name, BenchmarkIters: b.Iterations,
			})
		}
	}
	return out, nil
}

// ReconcileReads is the reconciler's read cost of one run over a table
// holding Pending old events, with the pending index or with a scan.
type ReconcileReads struct {
	Mode    string // "index" or "scan"
	Pending int
	// UnitsPerRun is the read request units of the run.
	UnitsPerRun float64
}

// ReconcileReads extracts BenchmarkReconcileReads/{index,scan}/pending=N
// from the output of internal/relay's benchmarks, in the output's order.
func (o BenchOutput) ReconcileReads() []ReconcileReads {
	var out []ReconcileReads
	for _, b := range o.Benchmarks {
		rest, ok := strings.CutPrefix(b.Name, "BenchmarkReconcileReads/")
		if !ok {
			continue
		}
		mode, pending, ok := strings.Cut(rest, "/pending=")
		n, err := strconv.Atoi(pending)
		units, has := b.Metrics["readunits/run"]
		if !ok || err != nil || !has {
			continue
		}
		out = append(out, ReconcileReads{Mode: mode, Pending: n, UnitsPerRun: units})
	}
	return out
}
