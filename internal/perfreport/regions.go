package perfreport

import (
	"fmt"
	"strings"
	"time"
)

// MarkWriteUnits are the write units of one mark by the relay: the
// outbox item's update (under 1 KB) and the removal of its pending index
// entry, as measureUnits counts them (UnitsResult.Settle["relay/mark"]).
const MarkWriteUnits = 2

// RegionCount is what one Region of a multi-Region outbox did while the
// events written in one Region were published.
type RegionCount struct {
	Region string
	// Writing marks the Region the events were written in.
	Writing bool
	// CommitUnits are the write units the writer's transactions consumed
	// (their ConsumedCapacity); only the writing Region has any.
	CommitUnits float64
	// Marks are the relay's marks of the events made in the Region.
	Marks int64
	// ReplicatedWrites are the writes from other Regions that the
	// Region's replica applied; each is one replicated write unit (items
	// under 1 KB).
	ReplicatedWrites int64
	// StreamRecords are the records of the Region's stream.
	StreamRecords int64
	// Invocations are the Region's relay invocations by its stream
	// mapping.
	Invocations int64
}

// RegionsRun is the publication of Events events written in one Region
// of a global table of Regions replicas.
type RegionsRun struct {
	Regions, Events int
	PerRegion       []RegionCount
}

// perEventF is n over the run's events.
func (r RegionsRun) perEventF(n float64) float64 {
	if r.Events <= 0 {
		return 0
	}
	return n / float64(r.Events)
}

// WriteUnitsPerEvent is the writing Region's write units per event: the
// commit as consumed, and its marks at MarkWriteUnits each.
func (r RegionsRun) WriteUnitsPerEvent() float64 {
	for _, c := range r.PerRegion {
		if c.Writing {
			return r.perEventF(c.CommitUnits + float64(c.Marks*MarkWriteUnits))
		}
	}
	return 0
}

// others are the Regions other than the writing one.
func (r RegionsRun) others() []RegionCount {
	var out []RegionCount
	for _, c := range r.PerRegion {
		if !c.Writing {
			out = append(out, c)
		}
	}
	return out
}

// ReplicatedUnitsPerEventPerRegion is each other Region's replicated
// write units per event, the mean over those Regions.
func (r RegionsRun) ReplicatedUnitsPerEventPerRegion() float64 {
	others := r.others()
	if len(others) == 0 {
		return 0
	}
	var sum int64
	for _, c := range others {
		sum += c.ReplicatedWrites
	}
	return r.perEventF(float64(sum) / float64(len(others)))
}

// StreamReadsPerEvent is the stream records per event of each Region,
// the mean over every Region.
func (r RegionsRun) StreamReadsPerEvent() float64 {
	if len(r.PerRegion) == 0 {
		return 0
	}
	var sum int64
	for _, c := range r.PerRegion {
		sum += c.StreamRecords
	}
	return r.perEventF(float64(sum) / float64(len(r.PerRegion)))
}

// InvocationsPerEvent is the relay invocations per event of every Region
// together.
func (r RegionsRun) InvocationsPerEvent() float64 {
	var sum int64
	for _, c := range r.PerRegion {
		sum += c.Invocations
	}
	return r.perEventF(float64(sum))
}

// OtherInvocations is the relay invocations of the other Regions.
func (r RegionsRun) OtherInvocations() int64 {
	var sum int64
	for _, c := range r.others() {
		sum += c.Invocations
	}
	return sum
}

// TakeoverRun is the publication of a silent Region's pending events by
// its successor.
type TakeoverRun struct {
	// After, Settle and Interval are OUTBOX_TAKEOVER_AFTER,
	// OUTBOX_TAKEOVER_SETTLE and the reconciler's interval.
	After, Settle, Interval time.Duration
	// Events were pending when the Region went down; Received were
	// published by the successor.
	Events, Received int
	// First and Last are the successor's first and last publication of
	// them, from the Region going down.
	First, Last time.Duration
}

// Bound is the longest a silent Region's events wait for a publisher, as
// DESIGN.md states it: takeover_after + settle + one interval.
func (t TakeoverRun) Bound() time.Duration { return t.After + t.Settle + t.Interval }

// WithinBound reports whether every event was published and the first
// within the bound.
func (t TakeoverRun) WithinBound() bool {
	return t.Events > 0 && t.Received == t.Events && t.First <= t.Bound()
}

// RegionsResult is the multi-Region measurement: one run per number of
// Regions, and a takeover.
type RegionsResult struct {
	Runs     []RegionsRun
	Takeover TakeoverRun
}

// Run is the run with n Regions, if any.
func (r RegionsResult) Run(n int) (RegionsRun, bool) {
	for _, run := range r.Runs {
		if run.Regions == n {
			return run, true
		}
	}
	return RegionsRun{}, false
}

// Line is the "regions:" line of the 2-Region run and the takeover, for
// scripts.
func (r RegionsResult) Line() string {
	run, _ := r.Run(2)
	reads := make([]string, 0, len(run.PerRegion))
	for _, c := range run.PerRegion {
		reads = append(reads, fmt.Sprintf("%.2f", run.perEventF(float64(c.StreamRecords))))
	}
	t := r.Takeover
	return fmt.Sprintf("regions: regions=%d events=%d wu_per_event=%.2f replicated_wu_per_event=%.2f stream_reads_per_region=%s invocations_other_regions=%d takeover_first_s=%.1f takeover_last_s=%.1f takeover_bound_s=%.1f",
		run.Regions, run.Events, run.WriteUnitsPerEvent(), run.ReplicatedUnitsPerEventPerRegion(),
		strings.Join(reads, ","), run.OtherInvocations(), t.First.Seconds(), t.Last.Seconds(), t.Bound().Seconds())
}
