package chaos

import (
	"strings"
	"testing"
	"time"
)

func TestRegionsResult(t *testing.T) {
	healthy := RegionsResult{Regions: 2, Written: 10, Delivered: 10, Kills: 3, Drain: 1500 * time.Millisecond}
	outage := RegionsResult{Regions: 3, Written: 10, Delivered: 10, Duplicates: 2, Takeovers: 1, Handbacks: 1, Outage: true, WindowWritten: 4}
	if got, want := healthy.Line(), "chaos-regions: regions=2 written=10 delivered=10 lost=0 stranded=0 duplicates=0 window=0 takeovers=0 handbacks=0 inversions=0 gaps=0 kills=3 drain_s=1.5"; got != want {
		t.Errorf("Line() = %q, want %q", got, want)
	}
	for _, c := range []struct {
		name string
		r    RegionsResult
		want string
	}{
		{"healthy", healthy, ""},
		{"outage", outage, ""},
		{"nothing written", RegionsResult{}, "no event was written"},
		{"lost", RegionsResult{Written: 10, Delivered: 9, Lost: 1}, "1 of 10 written events were never delivered"},
		{"stranded", RegionsResult{Written: 10, Delivered: 10, Stranded: 2}, "2 events are still PENDING"},
		{"unknown", RegionsResult{Written: 10, Delivered: 10, Unknown: 1}, "never written"},
		{"inversion", RegionsResult{Written: 10, Delivered: 10, Inversions: 1}, "after a later one"},
		{"gap", RegionsResult{Written: 10, Delivered: 10, Gaps: 2}, "2 sequences below"},
		{"unsequenced", RegionsResult{Written: 10, Delivered: 10, Unsequenced: 1}, "without their sequence"},
		{"healthy duplicate", RegionsResult{Written: 10, Delivered: 10, Duplicates: 1}, "1 duplicates with every Region healthy"},
		{"healthy takeover", RegionsResult{Written: 10, Delivered: 10, Takeovers: 1}, "1 takeovers with every Region healthy"},
		{"no takeover", RegionsResult{Written: 10, Delivered: 10, Outage: true, Handbacks: 1}, "no takeover"},
		{"no hand-back", RegionsResult{Written: 10, Delivered: 10, Outage: true, Takeovers: 1}, "not handed back"},
		{"duplicates past the window", RegionsResult{Written: 10, Delivered: 10, Outage: true, Takeovers: 1, Handbacks: 1, Duplicates: 5, WindowWritten: 4},
			"5 duplicates, more than the 4 events"},
	} {
		err := c.r.Check()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: Check() = %v, want %q", c.name, err, c.want)
		}
	}
}

// TestRegionsEvent: the multi-Region run's mix. Half the events are
// ordered on the writing Region's own accounts (no other Region writes
// them), a quarter of the first two Regions' events are on aggregates
// both write, and the rest are unordered orders of their own.
func TestRegionsEvent(t *testing.T) {
	counts := map[string]int{}
	owner := map[string]int{}
	for writer := range 3 {
		for n := range int64(400) {
			ev := regionsEvent(writer, n)
			kind := strings.SplitN(ev.PartitionKey, "#", 2)[0]
			counts[kind]++
			if ev.ID == "" || ev.Source != regionsSource || len(ev.Detail) == 0 {
				t.Fatalf("writer %d, event %d: %+v", writer, n, ev)
			}
			switch kind {
			case "ACCOUNT":
				if ev.OrderingKey != ev.PartitionKey {
					t.Errorf("%s has ordering key %q", ev.PartitionKey, ev.OrderingKey)
				}
				if w, seen := owner[ev.OrderingKey]; seen && w != writer {
					t.Errorf("%s is written by writers %d and %d", ev.OrderingKey, w, writer)
				}
				owner[ev.OrderingKey] = writer
			case "SHARED":
				if writer > 1 || ev.OrderingKey != "" {
					t.Errorf("writer %d wrote %s with ordering key %q", writer, ev.PartitionKey, ev.OrderingKey)
				}
			default:
				if ev.OrderingKey != "" {
					t.Errorf("%s has ordering key %q", ev.PartitionKey, ev.OrderingKey)
				}
			}
		}
	}
	if counts["ACCOUNT"] != 600 || counts["SHARED"] != 200 || counts["ORDER"] != 400 || len(owner) != 3*homeKeys {
		t.Errorf("events by kind %v, %d accounts; want 600 ordered on %d accounts, 200 shared, 400 orders", counts, len(owner), 3*homeKeys)
	}
}
