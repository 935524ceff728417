package chaos

import (
	"errors"
	"fmt"
	"time"
)

// RegionsResult is the outcome of a multi-Region chaos run
// (TestChaosRegions): the events written in every Region against those
// received by the consumers of every Region, counted by event id across
// Regions, and the takeovers of a Region taken down mid-run.
type RegionsResult struct {
	// Regions is the number of peers.
	Regions int
	// Written, Delivered, Lost, Duplicates and Unknown are the Tally's
	// counts across Regions (Result).
	Written, Delivered, Lost, Duplicates, Unknown int
	// Stranded counts events still PENDING in any Region's replica.
	Stranded int
	// Takeovers counts the claims seen on a silent Region, Handbacks those
	// removed when it came back.
	Takeovers, Handbacks int
	// Outage says a Region was taken down mid-run; WindowWritten counts the
	// events written from just before it went silent until its hand-back,
	// the most duplicates the takeover may cause.
	Outage        bool
	WindowWritten int
	// Inversions counts ordered events first received after a later one
	// of their key, Gaps the sequences below a key's highest received
	// that were never received, Unsequenced the ordered events received
	// without their sequence (KeyOrder.Counts).
	Inversions, Gaps, Unsequenced int
	// Kills counts the relay and reconciler processes killed mid-invocation
	// across Regions.
	Kills int
	// Drain is the time from the last write to quiescence.
	Drain time.Duration
}

// NewRegionsResult takes the counts of t for a run of regions peers.
func NewRegionsResult(t *Tally, regions int) RegionsResult {
	r := t.Result()
	return RegionsResult{Regions: regions, Written: r.Written, Delivered: r.Delivered, Lost: r.Lost, Duplicates: r.Duplicates, Unknown: r.Unknown}
}

// Line is the one-line summary the multi-Region run ends with.
func (r RegionsResult) Line() string {
	return fmt.Sprintf("chaos-regions: regions=%d written=%d delivered=%d lost=%d stranded=%d duplicates=%d window=%d takeovers=%d handbacks=%d inversions=%d gaps=%d kills=%d drain_s=%.1f",
		r.Regions, r.Written, r.Delivered, r.Lost, r.Stranded, r.Duplicates, r.WindowWritten, r.Takeovers, r.Handbacks, r.Inversions, r.Gaps, r.Kills, r.Drain.Seconds())
}

// Check returns every violated guarantee: nothing written, an event lost,
// stranded or received that was never written, an ordered event received
// out of its key's order, missing below a later one or without its
// sequence; with every
// Region healthy a takeover or a duplicate; with a Region taken down no
// takeover or no hand-back, or more duplicates than the events written in
// the takeover's window.
func (r RegionsResult) Check() error {
	var v violations
	v.add(r.Written == 0, "no event was written")
	v.add(r.Lost != 0, "%d of %d written events were never delivered", r.Lost, r.Written)
	v.add(r.Unknown != 0, "%d events were delivered that were never written", r.Unknown)
	v.add(r.Stranded != 0, "%d events are still PENDING", r.Stranded)
	v.add(r.Inversions != 0, "%d ordered events were received after a later one of their key", r.Inversions)
	v.add(r.Gaps != 0, "%d sequences below their key's highest received were never received", r.Gaps)
	v.add(r.Unsequenced != 0, "%d ordered events were received without their sequence", r.Unsequenced)
	if !r.Outage {
		v.add(r.Takeovers != 0, "%d takeovers with every Region healthy, want none", r.Takeovers)
		v.add(r.Duplicates != 0, "%d duplicates with every Region healthy, want none", r.Duplicates)
		return errors.Join(v...)
	}
	v.add(r.Takeovers == 0, "no takeover of the Region taken down")
	v.add(r.Handbacks == 0, "the Region taken down was not handed back")
	v.add(r.Duplicates > r.WindowWritten, "%d duplicates, more than the %d events written in the takeover's window", r.Duplicates, r.WindowWritten)
	return errors.Join(v...)
}
