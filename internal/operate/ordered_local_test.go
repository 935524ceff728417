package operate

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// An ordered pipeline on a FIFO queue, its relay the built bootstrap behind
// the stack's event source mapping: the events of each key, written one
// transaction at a time and three in one transaction, in a dedicated table
// where each lives in a partition of its own, reach the consumer in
// sequence, each key's cursor ends at its last event, and nothing is left
// pending.
func TestLocalOrderedPipeline(t *testing.T) {
	t.Parallel()
	d := deployQueueTarget(t, "ordered-target.fifo", provision.Spec{Name: "ordered", Ordered: true})
	got := d.consume(targetkind.QueueURL(d.spec.Target.QueueARN))

	keys := []string{"acct-1", "acct-2", "acct-3"}
	var written []outbox.Record
	for round := range 4 {
		for _, k := range keys {
			written = append(written, d.write(orderedEvent(k, round))...)
		}
	}
	written = append(written, d.write(orderedEvent("acct-1", 10), orderedEvent("acct-1", 11), orderedEvent("acct-1", 12))...)
	got.waitFor(t, idsOf(written))

	// A FAILED ordered event, requeued, is published by the reconciler
	// under its role's permissions.
	failed := d.putFailed(1, "com.example.ordered", func(int) string { return "SQS rejected the event: InvalidMessageContents" })[0]
	table := d.writer.Table()
	d.setOrdering(table, failed, "acct-9", 1)
	if out, errOut, code := d.run("requeue", "ordered", "--id", failed.EventID, "--now"); code != ExitOK {
		t.Fatalf("requeue --now of an ordered event: exit %d:\n%s%s", code, out, errOut)
	}
	got.waitFor(t, []string{failed.EventID})
	top := checkSequenced(t, got)
	want := map[string]int64{"acct-1": 7, "acct-2": 4, "acct-3": 4, "acct-9": 1}
	for k, n := range want {
		if top[k] != n {
			t.Errorf("key %s: received up to %d in order, want %d", k, top[k], n)
		}
		waitUntil(t, "the cursor of "+k+" at its last event", func() bool {
			c, err := d.cursor(d.writer.Table(), k)
			return err == nil && c.Published == n
		})
	}
}

func orderedEvent(key string, i int) outbox.Event {
	return outbox.Event{Source: "com.example.ordered", DetailType: "Posted", OrderingKey: key, Detail: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}
}
