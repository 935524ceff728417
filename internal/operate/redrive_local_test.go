package operate

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

// While EventBridge fails every call, the mapping gives up on a batch and
// sends its metadata to the DLQ; the events stay pending. Once EventBridge
// recovers, redrive reports the batch, reconciles, delivers the events and
// deletes the message.
func TestLocalRedrive(t *testing.T) {
	t.Parallel()
	d := deploy(t, provision.Spec{Name: "redrive", Mapping: provision.MappingSpec{
		MaximumRetryAttempts: aws.Int32(0), BisectBatchOnFunctionError: aws.Bool(false),
	}})
	const source = "com.example.redrive"
	sub := d.subscribe("redrive-consumer", "default", source)
	ctl := localawstest.Control(d.stack)
	fault, err := ctl.AddFault(d.ctx, control.FaultRule{Service: "events", Operation: "PutEvents", Code: "InternalFailure", Message: "injected"})
	if err != nil {
		t.Fatal(err)
	}
	recs := d.write(orderPlaced(source, 3)...)
	clients := NewClients(d.cfg)
	p, err := clients.Find(d.ctx, "redrive")
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "a batch in the DLQ", func() bool {
		var q QueueStatus
		return clients.queueStatus(d.ctx, p, &q) == nil && q.Messages > 0
	})
	if out, _, code := d.run("status", "redrive"); code != ExitStuck || !strings.Contains(out, "outbox redrive redrive") {
		t.Errorf("status with a batch in the DLQ: exit %d", code)
	}
	if out, _, code := d.run("redrive", "redrive", "--dry-run"); code != ExitOK || !strings.Contains(out, "RetryAttemptsExhausted") {
		t.Errorf("redrive --dry-run: exit %d, no batch reported", code)
	}
	out, _, code := d.run("redrive", "redrive", "--dry-run", "--json")
	var dry RedriveOutput
	parseJSON(t, out, &dry)
	if code != ExitOK || !dry.DryRun || dry.Queue != "redrive-relay-dlq" || len(dry.Messages) == 0 || dry.Deleted != 0 || dry.Left != 0 || dry.Reconciler != nil {
		t.Errorf("redrive --dry-run --json: exit %d, %+v", code, dry)
	}
	if len(dry.Messages) > 0 {
		m := dry.Messages[0]
		if m.Batch.RequestContext.Condition != "RetryAttemptsExhausted" || m.Batch.Info.ShardID == "" || m.Batch.Info.BatchSize < 1 || m.Deleted || m.Settled || m.Unreadable {
			t.Errorf("redrive --json reports the batch as %+v", m)
		}
	}
	if err := ctl.RemoveFault(d.ctx, fault.ID); err != nil {
		t.Fatal(err)
	}

	var perms []string
	for _, c := range commands() {
		if c.name == "redrive" {
			perms = append(findPermissions, c.permissions...)
		}
	}
	out, _, code = d.runAs("redrive-operator", perms, "redrive", "redrive")
	if code != ExitOK {
		t.Fatalf("redrive: exit %d", code)
	}
	for _, want := range []string{"1 batch in the dead-letter queue", "shard ", "sequence numbers", "reconciler run 1: found 3, published 3", "deleted 1 of 1 message:"} {
		if !strings.Contains(out, want) {
			t.Errorf("redrive's output lacks %q", want)
		}
	}
	sub.waitFor(t, idsOf(recs))
	if out, _, code := d.run("status", "redrive"); code != ExitOK || !strings.Contains(out, "dead-letter queue   0 messages, 0 in flight") {
		t.Errorf("status after redrive: exit %d", code)
	}
	out, _, code = d.run("redrive", "redrive", "--json")
	var empty RedriveOutput
	parseJSON(t, out, &empty)
	if code != ExitOK || empty.DryRun || len(empty.Messages) != 0 || empty.Deleted != 0 || empty.Left != 0 || empty.InFlight != 0 || empty.Reconciler != nil {
		t.Errorf("redrive --json of an empty queue: exit %d, %+v", code, empty)
	}
}
