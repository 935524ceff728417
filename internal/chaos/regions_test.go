package chaos

import (
	"strings"
	"testing"
	"time"
)

func TestRegionsResult(t *testing.T) {
	healthy := RegionsResult{Regions: 2, Written: 10, Delivered: 10, Drain: 1500 * time.Millisecond}
	outage := RegionsResult{Regions: 3, Written: 10, Delivered: 10, Duplicates: 2, Takeovers: 1, Handbacks: 1, Outage: true, WindowWritten: 4}
	if got, want := healthy.Line(), "chaos-regions: regions=2 written=10 delivered=10 lost=0 stranded=0 duplicates=0 takeovers=0 handbacks=0 inversions=0 drain_s=1.5"; got != want {
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
