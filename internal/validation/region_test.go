package validation

import (
	"strings"
	"testing"
)

func TestPeerRegions(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		regions []string
		problem string
	}{
		"two":           {regions: []string{"us-east-1", "eu-west-1"}},
		"gov and three": {regions: []string{"us-gov-east-1", "eu-west-1", "ap-southeast-5"}},
		"none":          {problem: "has 0 Region(s), but a multi-Region pipeline needs at least 2"},
		"one":           {regions: []string{"us-east-1"}, problem: "has 1 Region(s)"},
		"not a Region":  {regions: []string{"us-east-1", "Europe"}, problem: `has "Europe", which is not an AWS Region name`},
		"twice":         {regions: []string{"us-east-1", "eu-west-1", "us-east-1"}, problem: `has "us-east-1" twice`},
	} {
		problem, fix := PeerRegions(c.regions)
		if c.problem == "" && problem != "" || !strings.Contains(problem, c.problem) || (problem != "") != (fix != "") {
			t.Errorf("%s: PeerRegions(%q) = %q, %q; want a problem with %q", name, c.regions, problem, fix, c.problem)
		}
	}
}

func TestOwnRegion(t *testing.T) {
	t.Parallel()
	peers := []string{"us-east-1", "eu-west-1"}
	if p, _ := OwnRegion(peers, "eu-west-1"); p != "" {
		t.Errorf("a listed Region: %q", p)
	}
	if p, _ := OwnRegion(nil, "us-east-1"); p != "" {
		t.Errorf("no peers: %q, want no problem", p)
	}
	if p, _ := OwnRegion(peers, ""); p != "" {
		t.Errorf("an unknown Region: %q, want no problem", p)
	}
	if p, fix := OwnRegion(peers, "ap-south-1"); !strings.Contains(p, `"ap-south-1"`) || !strings.Contains(fix, `add "ap-south-1"`) {
		t.Errorf("an unlisted Region: %q, %q", p, fix)
	}
}
