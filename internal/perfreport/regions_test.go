package perfreport

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestRegionsArithmetic checks the per-event figures and the line of a
// two-Region run whose counts are known.
func TestRegionsArithmetic(t *testing.T) {
	t.Parallel()
	run := RegionsRun{Regions: 2, Events: 100, PerRegion: []RegionCount{
		{Region: "us-east-1", Writing: true, CommitUnits: 400, Marks: 100, StreamRecords: 203, Invocations: 10},
		{Region: "eu-west-1", ReplicatedWrites: 202, StreamRecords: 202, Invocations: 1},
	}}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"write units per event", run.WriteUnitsPerEvent(), 6},
		{"replicated units per event per Region", run.ReplicatedUnitsPerEventPerRegion(), 2.02},
		{"stream reads per event", run.StreamReadsPerEvent(), 2.025},
		{"invocations per event", run.InvocationsPerEvent(), 0.11},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if got := run.OtherInvocations(); got != 1 {
		t.Errorf("other Regions' invocations = %d, want 1", got)
	}
	tk := TakeoverRun{After: 20 * time.Second, Settle: 2 * time.Second, Interval: 5 * time.Second,
		Events: 10, Received: 10, First: 26 * time.Second, Last: 27 * time.Second}
	if tk.Bound() != 27*time.Second || !tk.WithinBound() {
		t.Errorf("bound %s, within %v; want 27s, true", tk.Bound(), tk.WithinBound())
	}
	late := tk
	late.First = 28 * time.Second
	if late.WithinBound() {
		t.Error("a first publication after the bound is within it")
	}
	lost := tk
	lost.Received = 9
	if lost.WithinBound() {
		t.Error("a takeover that left an event unpublished is within the bound")
	}
	want := "regions: regions=2 events=100 wu_per_event=6.00 replicated_wu_per_event=2.02 stream_reads_per_region=2.03,2.02 invocations_other_regions=1 takeover_first_s=26.0 takeover_last_s=27.0 takeover_bound_s=27.0"
	if got := (RegionsResult{Runs: []RegionsRun{run}, Takeover: tk}).Line(); got != want {
		t.Errorf("line\n got %s\nwant %s", got, want)
	}
	if got := (RegionsRun{}).WriteUnitsPerEvent(); got != 0 {
		t.Errorf("an empty run's write units per event = %v, want 0", got)
	}
}

// BenchmarkRegions publishes events written in one Region of a global
// table of 1, 2 and 3 Regions (2,000 events, or OUTBOX_REGIONS_EVENTS);
// `make bench` runs it once.
func BenchmarkRegions(b *testing.B) {
	o := RegionsOptions{}
	if v := os.Getenv("OUTBOX_REGIONS_EVENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			b.Fatalf("OUTBOX_REGIONS_EVENTS=%q: want a positive number of events", v)
		}
		o.Events = n
	}
	if testing.Verbose() {
		o.Log = os.Stderr
	}
	for b.Loop() {
		res, err := MeasureRegions(b.Context(), o)
		if err != nil {
			b.Fatal(err)
		}
		for _, run := range res.Runs {
			b.ReportMetric(run.WriteUnitsPerEvent(), regionsMetric(run.Regions, UnitRegionsWriteUnits))
			b.ReportMetric(run.ReplicatedUnitsPerEventPerRegion(), regionsMetric(run.Regions, UnitRegionsReplicatedUnits))
			b.ReportMetric(run.StreamReadsPerEvent(), regionsMetric(run.Regions, UnitRegionsStreamReads))
			b.ReportMetric(run.InvocationsPerEvent(), regionsMetric(run.Regions, UnitRegionsInvocations))
		}
		b.ReportMetric(res.Takeover.First.Seconds(), UnitTakeoverFirst)
		b.ReportMetric(res.Takeover.Last.Seconds(), UnitTakeoverLast)
		b.ReportMetric(res.Takeover.Bound().Seconds(), UnitTakeoverBound)
		if !res.Takeover.WithinBound() {
			b.Errorf("the takeover published %d of %d events, the last after %s: over its bound %s", res.Takeover.Received, res.Takeover.Events, res.Takeover.Last, res.Takeover.Bound())
		}
		fmt.Println(res.Line())
	}
}
