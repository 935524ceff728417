package operate

import (
	"errors"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
)

// The scope of a subcommand's events by origin: every event on a
// single-Region pipeline; on a multi-Region one, the Region the command
// runs against (the primary's: those without origin too), --origin's or
// every Region's; a Region not among the peers is refused.
func TestOriginScope(t *testing.T) {
	t.Parallel()
	peers := []string{"us-east-1", "eu-west-1", "ap-south-1"}
	pipeline := func(regions []string, region string) *Pipeline {
		return &Pipeline{Name: "orders", Region: region, Config: config.Config{Regions: regions}}
	}
	for name, c := range map[string]struct {
		p       *Pipeline
		o       Origins
		in, out []string // origins in scope and left out ("" is none)
		leftOut map[string]int
		usage   string
		problem string
	}{
		"single Region":            {p: pipeline(nil, "us-east-1"), in: []string{"", "us-east-1", "eu-west-1"}},
		"single Region, all":       {p: pipeline(nil, "us-east-1"), o: Origins{All: true}, in: []string{"", "eu-west-1"}},
		"single Region, --origin":  {p: pipeline(nil, "us-east-1"), o: Origins{Origin: "eu-west-1"}, usage: "has one Region"},
		"primary":                  {p: pipeline(peers, "us-east-1"), in: []string{"", "us-east-1"}, out: []string{"eu-west-1", "ap-south-1", "ap-south-1"}, leftOut: map[string]int{"eu-west-1": 1, "ap-south-1": 2}},
		"another peer":             {p: pipeline(peers, "eu-west-1"), in: []string{"eu-west-1"}, out: []string{"", "us-east-1"}, leftOut: map[string]int{"us-east-1": 2}},
		"--origin":                 {p: pipeline(peers, "us-east-1"), o: Origins{Origin: "ap-south-1"}, in: []string{"ap-south-1"}, out: []string{""}, leftOut: map[string]int{"us-east-1": 1}},
		"--all-origins":            {p: pipeline(peers, "eu-west-1"), o: Origins{All: true}, in: []string{"", "us-east-1", "eu-west-1", "ap-south-1"}, leftOut: map[string]int{}},
		"--origin of no peer":      {p: pipeline(peers, "us-east-1"), o: Origins{Origin: "us-west-2"}, usage: "is not a Region of pipeline orders: pass one of us-east-1, eu-west-1, ap-south-1"},
		"run outside of the peers": {p: pipeline(peers, "us-west-2"), problem: `does not have "us-west-2"`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := c.p.originScope(c.o)
			var ee *exitError
			switch {
			case c.usage != "" || c.problem != "":
				want := c.usage + c.problem
				if err == nil || !strings.Contains(err.Error(), want) || (c.usage != "") != (errors.As(err, &ee) && ee.code == ExitUsage) {
					t.Fatalf("originScope = %v, want an error with %q (usage: %t)", err, want, c.usage != "")
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			tl := newTally(s)
			for _, o := range c.in {
				if !tl.keep(o) {
					t.Errorf("an event of origin %q is left out", o)
				}
			}
			for _, o := range c.out {
				if tl.keep(o) {
					t.Errorf("an event of origin %q is taken", o)
				}
			}
			got := tl.output()
			if c.leftOut == nil {
				if got != nil {
					t.Errorf("a single-Region pipeline's output says %+v", got)
				}
				return
			}
			if got == nil || len(got.LeftOut) != len(c.leftOut) {
				t.Fatalf("left out %+v, want %v", got, c.leftOut)
			}
			for r, n := range c.leftOut {
				if got.LeftOut[r] != n {
					t.Errorf("left out %d of %s, want %d", got.LeftOut[r], r, n)
				}
			}
		})
	}
}
