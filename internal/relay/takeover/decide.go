// Package takeover decides, for the reconciler of one Region of a pipeline
// on a global table, which Regions' events it publishes: its own, unless a
// successor holds a claim on it, and those of the silent Regions it took
// over. The decisions are pure functions of the heartbeat and claim items
// read in the local replica (Silent, Successor, Decide), so that every
// Region computes the same answer from the same items; Takeover carries
// them out against DynamoDB (Plan).
package takeover

import (
	"slices"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Fresh reports whether h was written at most after before now. A
// heartbeat from a clock ahead of now is fresh; a Region that never wrote
// one (the zero Heartbeat) is not.
func Fresh(h outbox.Heartbeat, now time.Time, after time.Duration) bool {
	return !h.At.IsZero() && now.Sub(h.At) <= after
}

// isSilent reports whether h was written, but longer than after before now.
// A Region that never wrote a heartbeat has not started: it is not silent.
func isSilent(h outbox.Heartbeat, now time.Time, after time.Duration) bool {
	return !h.At.IsZero() && !Fresh(h, now, after)
}

// Silent returns the Regions whose heartbeat is older than after at now,
// in name order.
func Silent(heartbeats map[string]outbox.Heartbeat, now time.Time, after time.Duration) []string {
	var silent []string
	for region, h := range heartbeats {
		if isSilent(h, now, after) {
			silent = append(silent, region)
		}
	}
	slices.Sort(silent)
	return silent
}

// Successor returns the Region that takes the silent one over: the next in
// the peers' order after it, wrapping around, whose own heartbeat is fresh;
// "" when there is none (or silent is not a peer).
func Successor(regions []string, silent string, heartbeats map[string]outbox.Heartbeat, now time.Time, after time.Duration) string {
	i := slices.Index(regions, silent)
	if i < 0 {
		return ""
	}
	for step := 1; step < len(regions); step++ {
		next := regions[(i+step)%len(regions)]
		if Fresh(heartbeats[next], now, after) {
			return next
		}
	}
	return ""
}

// View is what one Region's reconciler run reads in its local replica.
type View struct {
	// Self is the Region of the run; Regions the peers, in their order.
	Self    string
	Regions []string
	// Heartbeats and Claims are the items read, by Region (a claim by the
	// silent Region it is on); a missing entry is a missing item.
	Heartbeats map[string]outbox.Heartbeat
	Claims     map[string]outbox.Claim
	// Now is when the run began; After the takeover delay.
	Now   time.Time
	After time.Duration
	// Pending is what the Region's reconciler last found pending.
	Pending int64
}

// Decision is what the run does.
type Decision struct {
	// Heartbeat is the Region's heartbeat to write, first.
	Heartbeat outbox.Heartbeat
	// Publish are the Regions whose events the run publishes without a
	// new claim: its own (unless HeldBy), and those it holds claims on,
	// Release's included (for this last run).
	Publish []string
	// HeldBy is the live successor whose claim on Self stands: the run
	// publishes nothing of its own until the claim is released.
	HeldBy string
	// Claim are the silent Regions this Region succeeds and claims.
	Claim []string
	// Release are this Region's claims on Regions fresh again for one
	// takeover delay, to hand back.
	Release []outbox.Claim
}

// Decide returns what the run of v.Self does.
func Decide(v View) Decision {
	d := Decision{Heartbeat: nextHeartbeat(v)}
	hbs := make(map[string]outbox.Heartbeat, len(v.Heartbeats)+1)
	for r, h := range v.Heartbeats {
		hbs[r] = h
	}
	hbs[v.Self] = d.Heartbeat
	standing := func(c outbox.Claim) bool { return c.ID != "" && Fresh(hbs[c.Successor], v.Now, v.After) }
	if c := v.Claims[v.Self]; c.Successor != v.Self && standing(c) {
		d.HeldBy = c.Successor
	} else {
		d.Publish = append(d.Publish, v.Self)
	}
	for _, r := range v.Regions {
		c := v.Claims[r]
		switch {
		case r == v.Self:
		case c.ID != "" && c.Successor == v.Self:
			d.Publish = append(d.Publish, r)
			if h := hbs[r]; Fresh(h, v.Now, v.After) && v.Now.Sub(h.Since) >= v.After {
				d.Release = append(d.Release, c)
			}
		case standing(c):
		case isSilent(hbs[r], v.Now, v.After) && Successor(v.Regions, r, hbs, v.Now, v.After) == v.Self:
			d.Claim = append(d.Claim, r)
		}
	}
	return d
}

// nextHeartbeat is the heartbeat of v.Self's run: its fresh spell goes on
// from the previous heartbeat if that one is fresh, and starts now if not.
func nextHeartbeat(v View) outbox.Heartbeat {
	h := outbox.Heartbeat{Region: v.Self, At: v.Now, Since: v.Now, Pending: v.Pending, View: map[string]time.Time{}}
	if prev := v.Heartbeats[v.Self]; Fresh(prev, v.Now, v.After) && !prev.Since.IsZero() {
		h.Since = prev.Since
	}
	for _, r := range v.Regions {
		if peer := v.Heartbeats[r]; r != v.Self && !peer.At.IsZero() {
			h.View[r] = peer.At
		}
	}
	return h
}
