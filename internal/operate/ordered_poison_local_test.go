package operate

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestOrderedPoisonedKeyResumesAfterRequeue: on an ordered pipeline to an
// SQS FIFO queue, an event whose detail holds a character SQS refuses
// (U+FFFF: InvalidMessageContents) is poison. It is marked FAILED and holds
// its own key only: the other key is delivered whole, `outbox status`
// shows the key held with the events behind it, none of which is
// published. Once the detail is fixed and the event requeued (without
// --now), one run of the reconciler, invoked as its schedule invokes it,
// publishes the event and every event behind it, in order; the held count
// drops to 0 and the key's cursor ends at its last event.
func TestOrderedPoisonedKeyResumesAfterRequeue(t *testing.T) {
	t.Parallel()
	d := deployQueueTarget(t, "poison-target.fifo", provision.Spec{
		Name: "poisoned", Ordered: true,
		// The test runs the schedule itself, once.
		Reconciler: provision.ReconcilerSpec{ScheduleExpression: "rate(1 day)", MinAge: 2 * time.Second},
	})
	got := d.consume(targetkind.QueueURL(d.spec.Target.QueueARN))
	const held, other = "acct-held", "acct-other"
	var written, delivered, behind []outbox.Record
	for i := range 5 {
		for _, k := range []string{held, other} {
			ev := orderedEvent(k, i)
			if k == held && i == 1 {
				ev.Detail = json.RawMessage("{\"note\":\"\uffff\"}")
			}
			written = append(written, d.write(ev)...)
		}
	}
	poison := written[2]
	for _, r := range written {
		switch {
		case r.OrderingKey == held && r.Sequence > poison.Sequence:
			behind = append(behind, r)
		case r.EventID != poison.EventID:
			delivered = append(delivered, r)
		}
	}
	table := d.writer.Table()
	got.waitFor(t, idsOf(delivered))
	waitUntil(t, "the poison event FAILED", func() bool { return d.status(table, poison) == string(outbox.StatusFailed) })
	want := HeldKey{OrderingKey: held, EventID: poison.EventID, Sequence: poison.Sequence, WaitingBehind: int64(len(behind))}
	if keys := d.heldKeys(); len(keys) != 1 || keys[0] != want {
		t.Fatalf("status --json failed.keys = %+v, want %+v", keys, want)
	}
	for _, r := range append(behind, poison) {
		if n := got.ids()[r.EventID]; n != 0 {
			t.Errorf("event %d of the held key was delivered while its key is held", r.Sequence)
		}
	}

	// The fix: the detail without the refused character.
	d.update(&dynamodb.UpdateItemInput{
		TableName: aws.String(table.Name), Key: table.Key(poison),
		UpdateExpression:          aws.String("SET #detail = :detail"),
		ExpressionAttributeNames:  map[string]string{"#detail": outbox.AttrDetail},
		ExpressionAttributeValues: map[string]types.AttributeValue{":detail": &types.AttributeValueMemberS{Value: `{"note":"fixed"}`}},
	})
	if out, errOut, code := d.run("requeue", "poisoned", "--id", poison.EventID); code != ExitOK {
		t.Fatalf("requeue: exit %d:\n%s%s", code, out, errOut)
	}
	// A scheduled run takes the events pending for longer than its minimum
	// age: one period after the requeue, the held key's events are.
	last := written[len(written)-1].OccurredAt
	waitUntil(t, "the held key's events older than the reconciler's minimum age", func() bool {
		return time.Since(last) > d.spec.Reconciler.MinAge
	})
	report := d.runSchedule()
	if report.Published != 1+len(behind) || report.Waiting != 0 || report.Blocked != 0 {
		t.Errorf("the reconciler run after the requeue: %+v, want the held key's %d events published, none waiting", report, 1+len(behind))
	}
	got.waitFor(t, idsOf(append([]outbox.Record{poison}, behind...)))
	top := checkSequenced(t, got)
	if top[held] != 5 || top[other] != 5 {
		t.Errorf("received in order up to %v, want 5 of each key", top)
	}
	if keys := d.heldKeys(); len(keys) != 0 {
		t.Errorf("after the run, status --json failed.keys = %+v, want none held", keys)
	}
	if c, err := d.cursor(table, held); err != nil || c.Published != 5 || c.IsBlocked() {
		t.Errorf("the cursor of the held key: %+v, %v; want at 5, not blocked", c, err)
	}
}

// heldKeys returns the ordering keys `outbox status --json` shows held.
func (d *deployed) heldKeys() []HeldKey {
	d.t.Helper()
	out, _, _ := d.run("status", d.spec.Name, "--json")
	var s Status
	parseJSON(d.t, out, &s)
	return s.Failed.Keys
}

// runSchedule invokes the reconciler as its schedule does, with the
// schedule's input, once, and returns the run's report.
func (d *deployed) runSchedule() reconcile.Report {
	d.t.Helper()
	in := &scheduler.GetScheduleInput{Name: aws.String(d.state.ScheduleName)}
	if d.state.ScheduleGroup != "" {
		in.GroupName = aws.String(d.state.ScheduleGroup)
	}
	sch, err := scheduler.NewFromConfig(d.cfg).GetSchedule(d.ctx, in)
	if err != nil {
		d.t.Fatalf("reading the schedule: %v", err)
	}
	out, err := lambda.NewFromConfig(d.cfg).Invoke(d.ctx, &lambda.InvokeInput{FunctionName: sch.Target.Arn, Payload: []byte(aws.ToString(sch.Target.Input))})
	if err != nil || out.FunctionError != nil {
		d.t.Fatalf("the reconciler run: %v %s", err, out.Payload)
	}
	var report reconcile.Report
	if err := json.Unmarshal(out.Payload, &report); err != nil {
		d.t.Fatalf("the reconciler's report %q: %v", out.Payload, err)
	}
	return report
}

// checkSequenced fails when an ordering key's events reached the consumer
// out of sequence: an event first received after a later one of its key,
// or after a gap. A second copy of an event is no inversion. It returns,
// per key, the highest sequence received in order.
func checkSequenced(t *testing.T, c *consumer) map[string]int64 {
	t.Helper()
	c.mu.Lock()
	seen := slices.Clone(c.seen)
	c.mu.Unlock()
	top := map[string]int64{}
	for _, e := range seen {
		m := e.Detail.Metadata
		switch {
		case m.Sequence <= top[m.OrderingKey]:
			// A second copy.
		case m.Sequence != top[m.OrderingKey]+1:
			t.Errorf("key %s: event %d arrived after %d", m.OrderingKey, m.Sequence, top[m.OrderingKey])
		default:
			top[m.OrderingKey] = m.Sequence
		}
	}
	return top
}
