package iamdifferential

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// decided are the differences between the stack's decision and
// iam-simulate's that are decided, by case name, with the reason.
var decided = map[string]string{}

// allCases are the components' requests and the operator matrix.
func allCases(t *testing.T) []decisionCase {
	t.Helper()
	var out []decisionCase
	for _, c := range slices.Concat(pipelineComponents(t), subscriptionComponents(), exampleComponents(t)) {
		for _, r := range withOutcome(c.allowed, c.denied) {
			dc := decisionCase{name: fmt.Sprintf("%s: %s %s on %s%s", c.name, r.outcome, r.action, r.resource, contextText(r.req)),
				want: r.outcome, identity: c.identity, boundary: c.boundary, principal: c.principal, action: r.action, resource: r.resource, context: r.context, sets: r.sets}
			if strings.HasPrefix(r.action, "kms:") {
				dc.keyPolicy = defaultKeyPolicy
			}
			if r.call != nil {
				dc.stackResource = resourceOf(t, *r.call, r.action)
			}
			out = append(out, dc)
		}
	}
	for _, c := range resourceComponents() {
		for _, r := range withOutcome(c.allowed, c.denied) {
			out = append(out, decisionCase{name: fmt.Sprintf("%s: %s %s by %s%s", c.name, r.outcome, r.action, c.principal, contextText(r.req)),
				want: r.outcome, resourcePolicy: c.policy, principal: c.principal, action: r.action, resource: r.resource, context: r.context})
		}
	}
	return append(out, operatorCases()...)
}

type outcomeReq struct {
	req
	outcome string
}

func withOutcome(allowed, denied []req) []outcomeReq {
	var out []outcomeReq
	for _, r := range allowed {
		out = append(out, outcomeReq{r, "Allowed"})
	}
	for _, r := range denied {
		out = append(out, outcomeReq{r, "ImplicitlyDenied"})
	}
	return out
}

func contextText(r req) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r.context)) {
		parts = append(parts, k+"="+r.context[k])
	}
	for _, k := range slices.Sorted(maps.Keys(r.sets)) {
		parts = append(parts, fmt.Sprintf("%s=%q", k, r.sets[k]))
	}
	if len(parts) == 0 {
		return ""
	}
	return " with " + strings.Join(parts, ", ")
}

func (c decisionCase) simCase() simCase {
	raw := func(doc string) json.RawMessage {
		if doc == "" {
			return nil
		}
		return json.RawMessage(doc)
	}
	sc := simCase{Boundary: raw(c.boundary), ResourcePolicy: raw(c.resourcePolicy), Principal: c.principal, Action: c.action,
		Resource: c.resource, ResourceAccount: account, Context: map[string]any{}}
	if c.keyPolicy != "" {
		sc.ResourcePolicy = raw(c.keyPolicy)
	}
	for _, d := range c.identity {
		sc.IdentityPolicies = append(sc.IdentityPolicies, raw(d))
	}
	for k, v := range c.context {
		sc.Context[k] = v
	}
	for k, v := range c.sets {
		sc.Context[k] = append([]string{}, v...)
	}
	return sc
}

// TestDifferentialIAMSimulate compares every case's decision by the
// stack's evaluator with iam-simulate's.
func TestDifferentialIAMSimulate(t *testing.T) {
	cases := allCases(t)
	sims := make([]simCase, len(cases))
	for i, c := range cases {
		sims[i] = c.simCase()
	}
	results := simulate(t, sims)
	seen := map[string]bool{}
	differ := 0
	tally := map[string]int{}
	for i, c := range cases {
		got, want := stackDecision(c), results[i].Decision
		tally[got]++
		if results[i].Error != "" {
			want = "refused by iam-simulate: " + results[i].Error
		}
		if c.want != "" && want != c.want {
			t.Errorf("%s: iam-simulate decides %s: the policy does not do what the component needs", c.name, want)
		}
		if got == want {
			continue
		}
		if reason, ok := decided[c.name]; ok {
			seen[c.name] = true
			t.Logf("decided difference: %s: stack %s, iam-simulate %s (%s)", c.name, got, want, reason)
			continue
		}
		differ++
		t.Errorf("%s: the stack decides %s, iam-simulate %s", c.name, got, want)
	}
	for name := range decided {
		if !seen[name] {
			t.Errorf("decided difference %q no longer differs (or no longer exists): remove it", name)
		}
	}
	t.Logf("%d cases, %d undecided differences; the stack's decisions: %v", len(cases), differ, tally)
	for _, d := range []string{"Allowed", "ImplicitlyDenied", "ExplicitlyDenied"} {
		if tally[d] == 0 {
			t.Errorf("no case is %s: the cases do not cover every decision", d)
		}
	}
}
