package operate

import (
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

// invoke runs a subcommand through Invoke, as an action does, and returns
// the lines it wrote.
func (d *deployed) invoke(command string, values Values) ([]string, error) {
	d.t.Helper()
	var lines []string
	err := Invoke(d.ctx, d.cfg, Invocation{Command: command, Pipeline: d.spec.Name, Values: values, Line: func(s string) { lines = append(lines, s) }})
	d.t.Logf("Invoke %s %v:\n%s\n(%v)", command, values, strings.Join(lines, "\n"), err)
	return lines, err
}

// Invoke runs the subcommand as the command line does: a dry run of
// requeue changes nothing and says so; requeue with --now requeues,
// reconciles and delivers; an unknown id is the command's "not found"; the
// text comes line by line.
func TestLocalInvoke(t *testing.T) {
	t.Parallel()
	d := deploy(t, provision.Spec{Name: "invoke"})
	const source = "com.example.invoke"
	sub := d.subscribe("invoke-consumer", "default", source)
	failed := d.putFailed(2, source, func(int) string { return "EventBridge: AccessDeniedException" })

	lines, err := d.invoke("requeue", Values{"dry-run": {"true"}})
	if err != nil || !hasLine(lines, "would requeue 2 FAILED events (dry run: nothing changed)") {
		t.Errorf("requeue --dry-run through Invoke: %v", err)
	}
	if list, err := NewClients(d.cfg).Failed(d.ctx, mustFind(t, d), Filter{}); err != nil || len(list.Events) != 2 {
		t.Fatalf("after the dry run: %d FAILED events (%v), want 2", len(list.Events), err)
	}
	lines, err = d.invoke("requeue", Values{"now": {"true"}})
	if err != nil || !hasLine(lines, "requeued 2 events to PENDING (0 were no longer FAILED)") || !hasLine(lines, "reconciler run 1: found 2, published 2") {
		t.Errorf("requeue --now through Invoke: %v", err)
	}
	sub.waitFor(t, idsOf(failed))
	_, err = d.invoke("requeue", Values{"id": {"01JDQ4Z6X0V8W3M5K2R7T9B1CE"}})
	if exitCode(err) != ExitNotFound || !strings.Contains(err.Error(), "no FAILED event has the id 01JDQ4Z6X0V8W3M5K2R7T9B1CE") {
		t.Errorf("requeue of an unknown id through Invoke: exit %d, %v", exitCode(err), err)
	}
	if _, err := d.invoke("drain", Values{"timeout": {"1m"}, "interval": {"1s"}}); err != nil {
		t.Errorf("drain of an empty outbox through Invoke: %v", err)
	}
}

func mustFind(t *testing.T, d *deployed) *Pipeline {
	t.Helper()
	p, err := NewClients(d.cfg).Find(d.ctx, d.spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// hasLine reports whether a line starts with prefix.
func hasLine(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
