package takeover_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/takeover"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

const (
	interval = time.Minute
	settle   = 10 * time.Second
	lag      = 2 * time.Second
	// bound is the longest a Region's events may wait for a publisher
	// while one Region is silent.
	bound = 3*time.Minute + settle + interval
)

type run struct {
	region string
	at     time.Duration
	plan   takeover.Plan
}

// simulation runs the reconcilers of Regions every interval, at their
// offsets, on a world of replicas, and records every run's plan.
type simulation struct {
	t         *testing.T
	w         *world
	s         *scheduler
	offsets   map[string]time.Duration
	takeovers map[string]*takeover.Takeover
	down      map[string]bool
	mu        sync.Mutex
	runs      []run
}

func newSimulation(t *testing.T, settle time.Duration, offsets map[string]time.Duration) *simulation {
	t.Helper()
	table := outbox.Table{Name: "orders"}
	w := newWorld(table, lag, t0, peers)
	sim := &simulation{t: t, w: w, s: newScheduler(w), offsets: offsets, takeovers: map[string]*takeover.Takeover{}, down: map[string]bool{}}
	ids := 0
	for _, r := range peers {
		tk, err := takeover.New(replica{w: w, region: r}, takeover.Config{
			Table: table, Region: r, Regions: peers, TakeoverAfter: after, Settle: settle, Interval: interval,
			Now: w.Now, Sleep: sim.s.Sleep, NewID: func() string { sim.mu.Lock(); defer sim.mu.Unlock(); ids++; return fmt.Sprint(r, "#", ids) },
		})
		if err != nil {
			t.Fatal(err)
		}
		sim.takeovers[r] = tk
	}
	return sim
}

// setDown stops a Region (no runs, no replication) or brings it back.
func (sim *simulation) setDown(region string, down bool) func() {
	return func() { sim.down[region] = down; sim.w.setCut(region, down) }
}

// run runs the Regions from t0 to until, a step a second, applying each
// event before the runs of its second.
func (sim *simulation) run(until time.Duration, events map[time.Duration]func()) {
	for el := time.Duration(0); el <= until; el += time.Second {
		sim.s.step(t0.Add(el))
		if f := events[el]; f != nil {
			f()
		}
		for _, r := range peers {
			if off := sim.offsets[r]; !sim.down[r] && el >= off && (el-off)%interval == 0 {
				sim.s.start(func() { sim.plan(r) })
			}
		}
	}
	sim.s.step(t0.Add(until + settle))
}

func (sim *simulation) plan(region string) {
	p, err := sim.takeovers[region].Plan(context.Background(), 0)
	if err != nil {
		sim.t.Errorf("%s: %v", region, err)
		return
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	sim.runs = append(sim.runs, run{region: region, at: sim.w.Now().Sub(t0), plan: p})
}

// publishers returns the Regions that published region's events in runs
// that ended in [from, to).
func (sim *simulation) publishers(region string, from, to time.Duration) []string {
	var out []string
	for _, r := range sim.runs {
		if r.at >= from && r.at < to && slices.Contains(r.plan.Publish, region) && !slices.Contains(out, r.region) {
			out = append(out, r.region)
		}
	}
	slices.Sort(out)
	return out
}

// longestWait returns the longest time within [0, until] that no run
// published region's events.
func (sim *simulation) longestWait(region string, until time.Duration) time.Duration {
	var times []time.Duration
	for _, r := range sim.runs {
		if slices.Contains(r.plan.Publish, region) {
			times = append(times, r.at)
		}
	}
	slices.Sort(times)
	times = append(times, until)
	longest, last := time.Duration(0), time.Duration(0)
	for _, at := range times {
		longest, last = max(longest, at-last), at
	}
	return longest
}

// runsWith returns the runs whose plan f picks.
func (sim *simulation) runsWith(f func(run) bool) []run {
	var out []run
	for _, r := range sim.runs {
		if f(r) {
			out = append(out, r)
		}
	}
	return out
}

// checkSettled checks that no claim is left in any replica and that the
// runs in [from, to) each published exactly their own Region.
func (sim *simulation) checkSettled(from, to time.Duration) {
	sim.t.Helper()
	for region, items := range sim.w.replicas {
		for key, v := range items {
			if strings.HasPrefix(key, outbox.TakeoverSortKey) && v.item != nil {
				sim.t.Errorf("replica %s still holds the claim %s: %v", region, key, v.item)
			}
		}
	}
	for _, r := range sim.runsWith(func(r run) bool { return r.at >= from && r.at < to }) {
		if !slices.Equal(r.plan.Publish, []string{r.region}) {
			sim.t.Errorf("%s at %s published %q, want its own Region only", r.region, r.at, r.plan.Publish)
		}
	}
}

func (sim *simulation) checkWaits(until time.Duration) {
	sim.t.Helper()
	for _, r := range peers {
		if wait := sim.longestWait(r, until); wait > bound {
			sim.t.Errorf("%s's events waited %s for a publisher, more than %s", r, wait, bound)
		}
	}
}

// TestSimulationOutageAndHandBack: a Region goes down; its successor alone
// claims and publishes its events within the bound; when it returns it
// publishes nothing of its own until the claim is released, one takeover
// delay later; then every Region publishes its own events again.
func TestSimulationOutageAndHandBack(t *testing.T) {
	t.Parallel()
	sim := newSimulation(t, settle, map[string]time.Duration{east: 0, west: 20 * time.Second, south: 40 * time.Second})
	sim.run(30*time.Minute, map[time.Duration]func(){4*time.Minute + 30*time.Second: sim.setDown(east, true), 15 * time.Minute: sim.setDown(east, false)})

	if got := sim.publishers(east, 4*time.Minute+30*time.Second, 15*time.Minute); !slices.Equal(got, []string{west}) {
		t.Errorf("publishers of %s during its outage: %q, want its successor %s alone", east, got, west)
	}
	claims := sim.runsWith(func(r run) bool { return slices.Contains(r.plan.Claimed, east) })
	releases := sim.runsWith(func(r run) bool { return slices.Contains(r.plan.Released, east) })
	if len(claims) != 1 || claims[0].region != west || len(releases) != 1 || releases[0].region != west {
		t.Fatalf("claims on %s: %+v, releases: %+v; want one of each, by %s", east, claims, releases, west)
	}
	released := releases[0].at
	if released < 18*time.Minute {
		t.Errorf("%s handed back at %s, before it was fresh for %s after its return at 15m", east, released, after)
	}
	for _, r := range sim.runsWith(func(r run) bool { return r.region == east && r.at >= 15*time.Minute }) {
		held := r.at < released+lag
		if held != (r.plan.HeldBy == west) || held == slices.Contains(r.plan.Publish, east) {
			t.Errorf("%s at %s (claim released at %s): held by %q, publishing %q", east, r.at, released, r.plan.HeldBy, r.plan.Publish)
		}
	}
	sim.checkWaits(30 * time.Minute)
	sim.checkSettled(released+interval, 30*time.Minute)
}

// TestSimulationBothClaimDuringLag: two Regions fall silent; one returns
// just as the third runs, so that each, from its own replica, is the
// successor of the other silent one and both claim it within the
// replication lag. After the settle time both read the same claim: one
// publishes the Region, the other backs off.
func TestSimulationBothClaimDuringLag(t *testing.T) {
	t.Parallel()
	sim := newSimulation(t, settle, map[string]time.Duration{east: 0, west: 10 * time.Second, south: 10 * time.Second})
	back := 4*time.Minute + 10*time.Second
	sim.run(20*time.Minute, map[time.Duration]func(){
		20 * time.Second: sim.setDown(west, true), time.Minute + 5*time.Second: sim.setDown(east, true), back: sim.setDown(west, false),
	})

	var claimed, lost []string
	for _, r := range sim.runs {
		if slices.Contains(r.plan.Claimed, east) {
			claimed = append(claimed, r.region)
		}
		if slices.Contains(r.plan.Lost, east) {
			lost = append(lost, r.region)
		}
	}
	if len(claimed) != 1 || len(lost) != 1 || claimed[0] == lost[0] {
		t.Fatalf("claims on %s won by %q, lost by %q: want both to claim, one to act", east, claimed, lost)
	}
	if got := sim.publishers(east, back+settle, 20*time.Minute); !slices.Equal(got, claimed) {
		t.Errorf("publishers of %s after the claims settled: %q, want %q alone", east, got, claimed)
	}
	sim.checkWaits(20 * time.Minute)
}

// TestSimulationPartition: a Region cut off from replication keeps running:
// it and the others each take over what they cannot see (duplicates, never
// a gap); when the partition heals, the claims are handed back and every
// Region publishes its own events alone.
func TestSimulationPartition(t *testing.T) {
	t.Parallel()
	sim := newSimulation(t, settle, map[string]time.Duration{east: 0, west: 20 * time.Second, south: 40 * time.Second})
	cut := func(c bool) func() { return func() { sim.w.setCut(east, c) } }
	sim.run(30*time.Minute, map[time.Duration]func(){5 * time.Minute: cut(true), 12 * time.Minute: cut(false)})

	if got := sim.publishers(east, 9*time.Minute, 12*time.Minute); !slices.Equal(got, []string{west, east}) {
		t.Errorf("publishers of %s during the partition: %q, want itself and its successor %s", east, got, west)
	}
	if got := sim.publishers(west, 9*time.Minute, 12*time.Minute); !slices.Equal(got, []string{west, east}) {
		t.Errorf("publishers of %s during the partition: %q, want itself and %s, which cannot see it", west, got, east)
	}
	sim.checkWaits(30 * time.Minute)
	sim.checkSettled(20*time.Minute, 30*time.Minute)
}

// TestClaimSettleShorterThanLag: the settle time is what makes one of two
// concurrent claims win. With a settle longer than the lag exactly one
// Region wins; with one shorter, both read their own claim and both act.
func TestClaimSettleShorterThanLag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		settle time.Duration
		want   int
	}{{settle, 1}, {lag / 2, 2}} {
		sim := newSimulation(t, tc.settle, nil)
		var mu sync.Mutex
		winners := 0
		for _, r := range []string{west, south} {
			sim.s.start(func() {
				won, err := sim.takeovers[r].Claim(context.Background(), []string{east}, nil)
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				winners += len(won)
				mu.Unlock()
			})
		}
		for el := time.Second / 2; el <= tc.settle+lag; el += time.Second / 2 {
			sim.s.step(t0.Add(el))
		}
		if winners != tc.want {
			t.Errorf("settle %s, lag %s: %d Regions act on their claim, want %d", tc.settle, lag, winners, tc.want)
		}
	}
}
