package operate

import (
	"strings"
	"testing"
	"time"
)

// The state compares the backlog now with the reconciler's earliest run
// in the window, or else its last run before: catching up when fewer
// events are pending or the oldest is no older, falling behind otherwise.
func TestBacklogEstimate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	at := func(ago time.Duration, found, published int, oldest float64) ReconcileRun {
		return ReconcileRun{Time: now.Add(-ago), Found: found, Published: published, oldestPendingAge: oldest}
	}
	for _, tc := range []struct {
		name    string
		pending int
		oldest  time.Duration
		relay   int
		runs    []ReconcileRun
		state   string
		eta     string
	}{
		{"nothing pending", 0, 0, 0, []ReconcileRun{at(time.Minute, 10, 10, 60)}, BacklogNone, "none"},
		{"nothing published", 50, time.Hour, 0, []ReconcileRun{at(time.Minute, 50, 0, 3540), at(time.Hour, 10, 10, 60)}, BacklogStuck, "unknown"},
		{"fewer pending", 600, time.Hour, 0, []ReconcileRun{at(time.Minute, 900, 300, 3000), at(4*time.Minute, 1000, 0, 3000)}, BacklogCatchingUp, "10m"},
		{"the oldest younger", 1500, 50 * time.Minute, 300, []ReconcileRun{at(2*time.Minute, 1000, 0, 3000)}, BacklogCatchingUp, "25m"},
		{"more pending and older", 1500, 2 * time.Hour, 0, []ReconcileRun{at(time.Minute, 1000, 300, 3000), at(time.Hour, 10, 300, 60)}, BacklogFallingBehind, "25m"},
		{"the run before the window", 600, time.Hour, 300, []ReconcileRun{at(20*time.Minute, 100, 100, 60), at(time.Hour, 5000, 100, 7200)}, BacklogFallingBehind, "10m"},
		{"no run to compare with", 600, time.Hour, 300, nil, BacklogPublishing, "10m"},
		{"a run after now is not read", 600, time.Hour, 300, []ReconcileRun{at(-time.Minute, 5000, 300, 7200)}, BacklogPublishing, "10m"},
		{"an estimate is capped at ten years", 1e9, time.Hour, 1, nil, BacklogPublishing, "87600h"},
	} {
		b := BacklogStatus{window: 5 * time.Minute, Published: tc.relay}
		b.estimate(now, PendingStatus{Total: tc.pending, Oldest: tc.oldest}, tc.runs)
		if b.State != tc.state || b.ETA != tc.eta {
			t.Errorf("%s: state %q, eta %q; want %q, %q (%+v)", tc.name, b.State, b.ETA, tc.state, tc.eta, b)
		}
		if (b.DoneAt != nil) != (tc.eta != "none" && tc.eta != "unknown") || b.DoneAt != nil && !b.DoneAt.Equal(now.Add(time.Duration(*b.ETASeconds)*time.Second)) {
			t.Errorf("%s: done at %v, eta %v s", tc.name, b.DoneAt, b.ETASeconds)
		}
	}
}

// The problem of an old pending event says whether the backlog goes out,
// and when it will be done.
func TestProblemsSayWhetherTheBacklogGoesOut(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	s := Status{Mapping: MappingStatus{State: "Enabled"}, Pending: PendingStatus{Total: 600, Oldest: 26 * time.Hour}}
	s.Backlog = BacklogStatus{window: 15 * time.Minute, Published: 900}
	s.Backlog.estimate(now, s.Pending, []ReconcileRun{{Time: now.Add(-10 * time.Minute), Found: 900, oldestPendingAge: 30 * 3600}})
	want := "the oldest pending event is 26h0m0s old (stuck after 15m0s), but catching up at 1 events/s, done in about 10m: check"
	if p := problems("orders", s, 15*time.Minute); len(p) != 1 || !strings.Contains(p[0], want) {
		t.Errorf("problems = %q, want %q", p, want)
	}
	s.Backlog = BacklogStatus{window: 15 * time.Minute}
	s.Backlog.estimate(now, s.Pending, nil)
	want = "the oldest pending event is 26h0m0s old (stuck after 15m0s) and nothing was published in the last 15m: check"
	if p := problems("orders", s, 15*time.Minute); len(p) != 1 || !strings.Contains(p[0], want) {
		t.Errorf("problems = %q, want %q", p, want)
	}
}
