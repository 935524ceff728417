package operate

import (
	"cmp"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/validation"
)

// A multi-Region pipeline (its relay's OUTBOX_REGIONS) publishes in each
// Region the events written there (outbox.AttrOrigin), and in the primary,
// the first of the peers, the events without origin too, as the mapping's
// filter and the reconciler do. The subcommands that count or act on events
// do the same by default: the events of the Region they run against
// (--region); --origin selects another Region's, --all-origins every
// Region's, and what is left out is counted and said.

// Origins selects events by the Region they were written in, on a
// multi-Region pipeline; the zero value selects the events of the Region
// the command runs against.
type Origins struct {
	// Origin is a peer Region whose events are selected.
	Origin string
	// All selects the events of every Region.
	All bool
}

// originFlags declares --origin and --all-origins on fs.
func originFlags(fs *flag.FlagSet, o *Origins) {
	fs.StringVar(&o.Origin, "origin", "", "on a multi-Region pipeline, only the events written in `REGION`, one of its peers (default: the Region the command runs against, and for the primary the events without origin too)")
	fs.BoolVar(&o.All, "all-origins", false, "on a multi-Region pipeline, the events written in every Region")
}

// check refuses --origin with --all-origins.
func (o Origins) check() error {
	if o.All && o.Origin != "" {
		return fmt.Errorf("--origin %s and --all-origins select different events: pass one of them", o.Origin)
	}
	return nil
}

// originScope is the set of events of a pipeline that a subcommand counts
// and acts on, by their Region of origin.
type originScope struct {
	// peers are the pipeline's Regions, the primary first; nil for a
	// single-Region pipeline, whose every event is in scope.
	peers []string
	// selected is the Region whose events are in scope; "" for every
	// Region's.
	selected string
}

// originScope resolves o for p, found in the Region p.Region.
func (p *Pipeline) originScope(o Origins) (originScope, error) {
	peers := p.Config.Regions
	if len(peers) == 0 {
		if o.Origin != "" {
			return originScope{}, &exitError{code: ExitUsage, msg: fmt.Sprintf("--origin %s: pipeline %s has one Region (its relay has no OUTBOX_REGIONS), so every event is its own: drop --origin", o.Origin, p.Name)}
		}
		return originScope{}, nil
	}
	if problem, fix := validation.OwnRegion(peers, p.Region); problem != "" {
		return originScope{}, fmt.Errorf("pipeline %s: its Regions (OUTBOX_REGIONS %s) %s: %s", p.Name, strings.Join(peers, ","), problem, fix)
	}
	s := originScope{peers: peers, selected: p.Region}
	switch {
	case o.All:
		s.selected = ""
	case o.Origin != "" && !slices.Contains(peers, o.Origin):
		return originScope{}, &exitError{code: ExitUsage, msg: fmt.Sprintf("--origin %s is not a Region of pipeline %s: pass one of %s, or --all-origins", o.Origin, p.Name, strings.Join(peers, ", "))}
	case o.Origin != "":
		s.selected = o.Origin
	}
	return s, nil
}

// multi reports whether the pipeline has several Regions.
func (s originScope) multi() bool { return len(s.peers) > 0 }

// of is the Region an event of origin (its outboxOrigin, "" when it has
// none) belongs to: its origin, or the primary.
func (s originScope) of(origin string) string {
	if origin == "" && s.multi() {
		return s.peers[0]
	}
	return origin
}

// includes reports whether the events of origin are in scope.
func (s originScope) includes(origin string) bool {
	return !s.multi() || s.selected == "" || s.of(origin) == s.selected
}

// OriginsOutput says, on a multi-Region pipeline, whose events a
// subcommand counted and acted on.
type OriginsOutput struct {
	// Origin is the Region whose events were selected; "all" with
	// --all-origins.
	Origin string `json:"origin"`
	// LeftOut counts, by Region, the events of other Regions that the
	// other filters selected but that were left out.
	LeftOut map[string]int `json:"leftOut"`
}

// tally counts the events a subcommand left out, by Region.
type tally struct {
	scope   originScope
	leftOut map[string]int
}

func newTally(s originScope) *tally { return &tally{scope: s, leftOut: map[string]int{}} }

// keep reports whether the event of origin is in scope, and counts it when
// it is not.
func (t *tally) keep(origin string) bool {
	if t.scope.includes(origin) {
		return true
	}
	t.leftOut[t.scope.of(origin)]++
	return false
}

// output is what the --json output says of the scope; nil for a
// single-Region pipeline.
func (t *tally) output() *OriginsOutput {
	if !t.scope.multi() {
		return nil
	}
	return &OriginsOutput{Origin: cmp.Or(t.scope.selected, "all"), LeftOut: maps.Clone(t.leftOut)}
}

// leftOutNote says which events of other Regions were left out, and how
// to take them; "" when none was.
func (o *OriginsOutput) leftOutNote(what string) string {
	if o == nil || len(o.LeftOut) == 0 {
		return ""
	}
	regions := slices.Sorted(maps.Keys(o.LeftOut))
	parts := make([]string, len(regions))
	for i, r := range regions {
		parts[i] = fmt.Sprintf("%d of %s", o.LeftOut[r], r)
	}
	return fmt.Sprintf("left out %s written in other Regions (%s): only %s's are taken here; pass --origin REGION for another Region's, or --all-origins, or run against that Region with --region",
		what, strings.Join(parts, ", "), o.Origin)
}
