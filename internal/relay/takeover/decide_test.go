package takeover_test

import (
	"slices"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/takeover"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

const (
	east  = "us-east-1"
	west  = "eu-west-1"
	south = "ap-south-1"
)

var (
	peers = []string{east, west, south}
	t0    = time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	after = 3 * time.Minute
)

// beats builds heartbeats written ago before t0, by Region; a negative ago
// is a clock ahead of t0.
func beats(ago map[string]time.Duration) map[string]outbox.Heartbeat {
	hbs := map[string]outbox.Heartbeat{}
	for r, d := range ago {
		hbs[r] = outbox.Heartbeat{Region: r, At: t0.Add(-d), Since: t0.Add(-d - time.Hour)}
	}
	return hbs
}

// TestSilentAndSuccessor: the silent Regions and each one's successor, the
// next fresh Region in the peers' order, wrapping around, for every single
// silent Region, two, none and all, and at the boundary of the delay.
func TestSilentAndSuccessor(t *testing.T) {
	t.Parallel()
	fresh, stale := time.Minute, after+time.Minute
	for _, tc := range []struct {
		name       string
		ago        map[string]time.Duration
		silent     []string
		successors map[string]string
	}{
		{"all fresh", map[string]time.Duration{east: fresh, west: fresh, south: fresh}, nil,
			map[string]string{east: west, west: south, south: east}},
		{"first silent", map[string]time.Duration{east: stale, west: fresh, south: fresh}, []string{east}, map[string]string{east: west}},
		{"second silent", map[string]time.Duration{east: fresh, west: stale, south: fresh}, []string{west}, map[string]string{west: south}},
		{"last silent wraps around", map[string]time.Duration{east: fresh, west: fresh, south: stale}, []string{south}, map[string]string{south: east}},
		{"two silent skip each other", map[string]time.Duration{east: fresh, west: stale, south: stale}, []string{south, west},
			map[string]string{west: east, south: east}},
		{"first two silent", map[string]time.Duration{east: stale, west: stale, south: fresh}, []string{west, east},
			map[string]string{east: south, west: south}},
		{"all silent: no successor", map[string]time.Duration{east: stale, west: stale, south: stale}, []string{south, west, east},
			map[string]string{east: "", west: "", south: ""}},
		{"exactly the delay old is fresh", map[string]time.Duration{east: after, west: fresh, south: fresh}, nil, map[string]string{east: west}},
		{"a millisecond older is silent", map[string]time.Duration{east: after + time.Millisecond, west: fresh, south: fresh}, []string{east},
			map[string]string{east: west}},
		{"a clock ahead is fresh, the successor skips a stale one", map[string]time.Duration{east: stale, west: after + time.Millisecond, south: -time.Minute},
			[]string{west, east}, map[string]string{east: south, west: south}},
		{"a Region that never ran is neither silent nor a successor", map[string]time.Duration{east: stale, south: fresh}, []string{east},
			map[string]string{east: south}},
		{"not a peer", map[string]time.Duration{east: fresh}, nil, map[string]string{"sa-east-1": ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hbs := beats(tc.ago)
			if got := takeover.Silent(hbs, t0, after); !slices.Equal(got, tc.silent) {
				t.Errorf("Silent = %q, want %q", got, tc.silent)
			}
			for silent, want := range tc.successors {
				if got := takeover.Successor(peers, silent, hbs, t0, after); got != want {
					t.Errorf("Successor of %s = %q, want %q", silent, got, want)
				}
			}
		})
	}
}

// TestDecide: what one run does with the items it reads.
func TestDecide(t *testing.T) {
	t.Parallel()
	claim := func(silent, successor string) outbox.Claim {
		return outbox.Claim{Silent: silent, Successor: successor, Since: t0.Add(-time.Hour), ID: silent + "/" + successor}
	}
	for _, tc := range []struct {
		name     string
		self     string
		ago      map[string]time.Duration
		since    map[string]time.Duration // how long each fresh spell has lasted, when not an hour
		claims   []outbox.Claim
		publish  []string
		heldBy   string
		claim    []string
		released []string
	}{
		{name: "all fresh: its own events", self: west, ago: map[string]time.Duration{east: 0, west: 0, south: 0}, publish: []string{west}},
		{name: "the successor claims", self: west, ago: map[string]time.Duration{east: 2 * after, west: 0, south: 0}, publish: []string{west}, claim: []string{east}},
		{name: "not the successor", self: south, ago: map[string]time.Duration{east: 2 * after, west: 0, south: 0}, publish: []string{south}},
		{name: "a standing claim of another", self: south, ago: map[string]time.Duration{east: 2 * after, west: 0, south: 0},
			claims: []outbox.Claim{claim(east, west)}, publish: []string{south}},
		{name: "a void claim (its holder silent) is replaced", self: south, ago: map[string]time.Duration{east: 2 * after, west: 2 * after, south: 0},
			claims: []outbox.Claim{claim(east, west)}, publish: []string{south}, claim: []string{east, west}},
		{name: "its own claim publishes", self: west, ago: map[string]time.Duration{east: 2 * after, west: 0, south: 0},
			claims: []outbox.Claim{claim(east, west)}, publish: []string{west, east}},
		{name: "a returned Region waits for the release", self: east, ago: map[string]time.Duration{east: 2 * after, west: 0, south: 0},
			claims: []outbox.Claim{claim(east, west)}, heldBy: west},
		{name: "held while fresh for less than the delay", self: west, ago: map[string]time.Duration{east: 0, west: 0, south: 0},
			since: map[string]time.Duration{east: after - time.Second}, claims: []outbox.Claim{claim(east, west)}, publish: []string{west, east}},
		{name: "released once fresh for the delay, published a last time", self: west, ago: map[string]time.Duration{east: 0, west: 0, south: 0},
			since: map[string]time.Duration{east: after}, claims: []outbox.Claim{claim(east, west)}, publish: []string{west, east}, released: []string{east}},
		{name: "a claim on itself by a silent holder does not hold it", self: east, ago: map[string]time.Duration{east: 0, west: 2 * after, south: 0},
			claims: []outbox.Claim{claim(east, west)}, publish: []string{east}},
		{name: "the successor of a silent holder", self: south, ago: map[string]time.Duration{east: 0, west: 2 * after, south: 0},
			claims: []outbox.Claim{claim(east, west)}, publish: []string{south}, claim: []string{west}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hbs := beats(tc.ago)
			for r, d := range tc.since {
				h := hbs[r]
				h.Since = t0.Add(-d)
				hbs[r] = h
			}
			claims := map[string]outbox.Claim{}
			for _, c := range tc.claims {
				claims[c.Silent] = c
			}
			d := takeover.Decide(takeover.View{Self: tc.self, Regions: peers, Heartbeats: hbs, Claims: claims, Now: t0, After: after, Pending: 7})
			var released []string
			for _, c := range d.Release {
				released = append(released, c.Silent)
			}
			if !slices.Equal(d.Publish, tc.publish) || d.HeldBy != tc.heldBy || !slices.Equal(d.Claim, tc.claim) || !slices.Equal(released, tc.released) {
				t.Errorf("Decide: publish %q, held by %q, claim %q, release %q; want %q, %q, %q, %q",
					d.Publish, d.HeldBy, d.Claim, released, tc.publish, tc.heldBy, tc.claim, tc.released)
			}
			if h := d.Heartbeat; h.Region != tc.self || !h.At.Equal(t0) || h.Pending != 7 || len(h.View) != len(tc.ago)-1 {
				t.Errorf("heartbeat = %+v, want %s at %s, 7 pending, a view of its peers", h, tc.self, t0)
			}
		})
	}
}

// TestHeartbeatSince: a run after a fresh heartbeat keeps its spell; the
// first run after a silent one starts a new spell.
func TestHeartbeatSince(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ago  time.Duration
		want time.Time
	}{{time.Minute, t0.Add(-time.Minute - time.Hour)}, {after + time.Second, t0}} {
		d := takeover.Decide(takeover.View{Self: east, Regions: peers, Heartbeats: beats(map[string]time.Duration{east: tc.ago}), Now: t0, After: after})
		if !d.Heartbeat.Since.Equal(tc.want) {
			t.Errorf("previous heartbeat %s old: since %s, want %s", tc.ago, d.Heartbeat.Since, tc.want)
		}
	}
}

// TestDefaultTakeoverAfter: three intervals, at least the floor.
func TestDefaultTakeoverAfter(t *testing.T) {
	t.Parallel()
	for interval, want := range map[time.Duration]time.Duration{
		5 * time.Minute: 15 * time.Minute, time.Minute: takeover.MinTakeoverAfter, time.Hour: 3 * time.Hour,
	} {
		if got := takeover.DefaultTakeoverAfter(interval); got != want {
			t.Errorf("DefaultTakeoverAfter(%s) = %s, want %s", interval, got, want)
		}
	}
}

// TestNewRefuses: a configuration that cannot work is refused, naming the
// field.
func TestNewRefuses(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]takeover.Config{
		"Regions lists":    {Region: east, Regions: []string{east, west, east}, Interval: time.Minute},
		"is not among":     {Region: "sa-east-1", Regions: peers, Interval: time.Minute},
		"Settle":           {Region: east, Regions: peers, TakeoverAfter: time.Minute, Settle: time.Minute},
		"SortKeyPrefix":    {Region: east, Regions: peers, Interval: time.Minute, Table: outbox.Table{Name: "t", SortKeyPrefix: "OUTBOX-"}},
		"must be positive": {Region: east, Regions: peers, TakeoverAfter: -time.Minute},
	} {
		if _, err := takeover.New(nil, cfg); err == nil || !containsFold(err.Error(), name) {
			t.Errorf("%+v: %v, want an error naming %q", cfg, err, name)
		}
	}
	if _, err := takeover.New(nil, takeover.Config{Table: outbox.Table{Name: "t"}, Region: east, Regions: peers, Interval: time.Minute}); err != nil {
		t.Errorf("a valid configuration: %v", err)
	}
}
