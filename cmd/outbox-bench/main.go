// Command outbox-bench writes the performance report, docs/performance.md,
// and its latency histogram: it reads the relay's benchmark from `go test
// -bench` output and measures the relays on a local AWS stack that it
// starts. `make bench` runs the benchmarks and then this command.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/perfreport"
)

func main() {
	var (
		o        perfreport.Options
		ro       perfreport.RecoveryOptions
		benchOut string
		benchDur time.Duration
		out      string
		image    string
	)
	flag.StringVar(&benchOut, "bench", "bin/bench.out", "`go test -bench` output holding internal/relay's BenchmarkRelay")
	flag.DurationVar(&benchDur, "bench-duration", 0, "how long the benchmarks took, for the report")
	flag.StringVar(&out, "out", "docs/performance.md", "the report")
	flag.StringVar(&image, "image", "docs/performance-latency.png", "the latency histogram (PNG), next to the report")
	flag.StringVar(&o.Root, "root", ".", "the repository's root")
	flag.StringVar(&o.Terraform, "terraform", "bin/terraform", "Terraform CLI for the apply timing (empty: time pipeline.Create only)")
	flag.IntVar(&o.LatencyEvents, "events", 1000, "events per relay in the latency run")
	flag.DurationVar(&o.Interval, "interval", 50*time.Millisecond, "mean interval between two events of one relay in the latency run (exponentially distributed)")
	flag.IntVar(&o.Burst, "burst", 1000, "events per throughput burst")
	flag.IntVar(&o.BurstRuns, "bursts", 5, "throughput bursts per relay and scenario")
	flag.IntVar(&o.CeilingBurst, "ceiling-burst", 5000, "events per burst of the throughput ceiling run")
	flag.IntVar(&o.UnitEvents, "unit-events", 100, "events whose write units are counted per relay and action")
	flag.IntVar(&o.ColdStarts, "cold-starts", 5, "fresh functions invoked per architecture")
	flag.IntVar(&o.Applies, "applies", 5, "pipeline applies timed")
	flag.IntVar(&ro.Events, "recovery-events", 200_000, "events of the recovery backlog (0: no recovery measurement)")
	flag.IntVar(&ro.Keys, "recovery-keys", 1000, "ordering keys of the recovery backlog")
	flag.IntVar(&ro.HotKeys, "recovery-hot-keys", 10, "hot keys of the recovery backlog")
	flag.Float64Var(&ro.HotShare, "recovery-hot-share", 0.5, "share of the recovery backlog's events on the hot keys")
	flag.DurationVar(&ro.Interval, "recovery-interval", 5*time.Minute, "the reconciler's interval: its schedule fires when the outage ends and every interval after")
	flag.DurationVar(&ro.Retention, "recovery-retention", 5*time.Second, "stream retention of the recovery's stack (AWS: 24h), which the outage outlasts")
	flag.DurationVar(&ro.Deadline, "recovery-deadline", time.Hour, "how long the recovery may take before the events still missing count as lost")
	flag.Parse()
	o.Log, ro.Log = os.Stderr, os.Stderr
	if err := run(o, ro, benchOut, benchDur, out, image); err != nil {
		fmt.Fprintln(os.Stderr, "outbox-bench:", err)
		os.Exit(1)
	}
}

func run(o perfreport.Options, ro perfreport.RecoveryOptions, benchOut string, benchDur time.Duration, out, image string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	f, err := os.Open(benchOut)
	if err != nil {
		return fmt.Errorf("reading the benchmark output (make bench writes it): %w", err)
	}
	bench, err := perfreport.ParseBench(f)
	_ = f.Close()
	if err != nil {
		return err
	}
	if _, err := bench.RelayBenchmarks(); err != nil {
		return err
	}
	r := perfreport.Report{Date: time.Now(), Machine: perfreport.ThisMachine(), Bench: bench, BenchDuration: benchDur}
	rel, err := filepath.Rel(filepath.Dir(out), image)
	if err != nil {
		return err
	}
	r.Image = filepath.ToSlash(rel)
	if r.Stack, err = perfreport.Measure(ctx, o); err != nil {
		return err
	}
	if ro.Events > 0 {
		if r.Recovery, err = perfreport.MeasureRecovery(ctx, ro); err != nil {
			return err
		}
	}
	r.Machine.LoadAfter = perfreport.LoadAverage()

	var png, md bytes.Buffer
	if err := r.Histogram().WritePNG(&png); err != nil {
		return err
	}
	if err := r.WriteMarkdown(&md); err != nil {
		return err
	}
	if err := os.WriteFile(image, png.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(out, md.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s and %s\n", out, image)
	line, err := r.SummaryLine()
	if err != nil {
		return err
	}
	fmt.Println(line)
	if r.Recovery != nil {
		for _, g := range r.Recovery.Goals() {
			fmt.Fprintf(os.Stderr, "recovery goal: %s: %s, met: %v\n", g.Goal, g.Measured, g.Met)
		}
		fmt.Println(r.Recovery.RecoveryLine())
	}
	return nil
}
