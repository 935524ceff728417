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

func TestReplicaRegions(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		replicas []string
		own      string
		problem  string
	}{
		"none":         {own: "us-east-1"},
		"others":       {replicas: []string{"eu-west-1", "ap-south-1"}, own: "us-east-1"},
		"own unknown":  {replicas: []string{"us-east-1"}},
		"not a Region": {replicas: []string{"Ireland"}, own: "us-east-1", problem: `has "Ireland", which is not an AWS Region name`},
		"twice":        {replicas: []string{"eu-west-1", "eu-west-1"}, own: "us-east-1", problem: `has "eu-west-1" twice`},
		"its own":      {replicas: []string{"eu-west-1", "us-east-1"}, own: "us-east-1", problem: `has "us-east-1", the Region the table is created in`},
	} {
		problem, fix := ReplicaRegions(c.replicas, c.own)
		if c.problem == "" && problem != "" || !strings.Contains(problem, c.problem) || (problem != "") != (fix != "") {
			t.Errorf("%s: ReplicaRegions(%q, %q) = %q, %q; want a problem with %q", name, c.replicas, c.own, problem, fix, c.problem)
		}
	}
}

func TestPeersReplicated(t *testing.T) {
	t.Parallel()
	peers := []string{"us-east-1", "eu-west-1"}
	for name, c := range map[string]struct {
		replicas []string
		own      string
		problem  string
	}{
		"replicated":          {replicas: []string{"eu-west-1"}, own: "us-east-1"},
		"more replicas":       {replicas: []string{"ap-south-1", "eu-west-1"}, own: "us-east-1"},
		"no replicas":         {own: "us-east-1"},
		"own unknown":         {replicas: []string{"ap-south-1"}},
		"a peer unreplicated": {replicas: []string{"ap-south-1"}, own: "us-east-1", problem: `has "eu-west-1", where the table has no replica`},
	} {
		problem, fix := PeersReplicated(peers, c.replicas, c.own)
		if c.problem == "" && problem != "" || !strings.Contains(problem, c.problem) || (problem != "") != (fix != "") {
			t.Errorf("%s: PeersReplicated(%q, %q) = %q, %q; want a problem with %q", name, c.replicas, c.own, problem, fix, c.problem)
		}
	}
}
