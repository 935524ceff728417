package differential_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// verdict is how a difference between the local stack and moto is decided.
type verdict string

const (
	// motoWrong: moto departs from AWS's documented behaviour, which the
	// local stack follows; the decision cites the documentation.
	motoWrong verdict = "moto wrong"
	// oursWrong: the local stack departs from AWS; a bug to fix. It is
	// reported loudly on every run until it is fixed and its decision
	// removed.
	oursWrong verdict = "our stack wrong"
	// unspecified: AWS documents no single answer (or documents both), so
	// either response is one a client must accept.
	unspecified verdict = "unspecified"
)

// decision decides the differences of one scenario whose path matches.
type decision struct {
	Scenario string `yaml:"scenario"`
	// Paths are globs over "step/field.path" (see difference.path);
	// * matches any run of characters. Every path must match a difference
	// on every run, so that a decision cannot outlive its cause.
	Paths   []string `yaml:"paths"`
	Verdict verdict  `yaml:"verdict"`
	// Ours and Moto say what each endpoint does.
	Ours string `yaml:"ours"`
	Moto string `yaml:"moto"`
	// Why explains the verdict.
	Why string `yaml:"why"`
	// Source is AWS's documentation for the verdict (required for
	// motoWrong).
	Source string `yaml:"source"`
	// Intermittent marks a difference one side shows on some runs only:
	// the decision may then match nothing.
	Intermittent bool `yaml:"intermittent"`

	first string // the first difference matched on this run (oursWrong)
}

// decide fails the test for each difference no decision of the scenario
// matches, and for each decision path that matched no difference.
func decide(t *testing.T, scenario string, diffs []difference) {
	t.Helper()
	type use struct {
		d    *decision
		path string
		re   *regexp.Regexp
		hits int
	}
	var uses []*use
	for i := range differences {
		d := &differences[i]
		if d.Scenario != scenario {
			continue
		}
		for _, p := range d.Paths {
			uses = append(uses, &use{d: d, path: p, re: glob(p)})
		}
	}
	undecided := 0
	for _, diff := range diffs {
		decided := false
		for _, u := range uses {
			if u.re.MatchString(diff.path) {
				u.hits++
				decided = true
				if u.d.Verdict == oursWrong && u.d.first == "" {
					u.d.first = diff.String()
				}
			}
		}
		if !decided {
			undecided++
			t.Errorf("undecided difference in %s: %s", scenario, diff)
		}
	}
	if undecided > 0 {
		t.Logf("%d undecided differences: fix our stack, or decide each in testdata/decisions.yaml (then go test ./internal/localaws/differential -run TestDifferentialTableDoc -update)", undecided)
	}
	reported := map[*decision]bool{}
	for _, u := range uses {
		if u.d.first != "" && !reported[u.d] {
			reported[u.d] = true
			report(fmt.Sprintf("OUR STACK WRONG (known bug, listed in the difference table): %s: %s; first difference: %s", scenario, u.d.Ours, u.d.first))
			u.d.first = ""
		}
		if u.hits == 0 && !u.d.Intermittent {
			t.Errorf("decision %q of %s (%s) matched no difference: remove it (or fix its path)", u.path, scenario, u.d.Verdict)
		}
	}
}

// report prints a line to the test binary's standard error, which go test
// shows with -v (make test-differential) and for a failing package.
func report(line string) {
	fmt.Fprintln(os.Stderr, "*** "+line)
}

func glob(p string) *regexp.Regexp {
	parts := strings.Split(p, "*")
	for i, s := range parts {
		parts[i] = regexp.QuoteMeta(s)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}
