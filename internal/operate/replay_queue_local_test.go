package operate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relaypackage"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// A pipeline that sends to an SQS queue, and a replay of its events to a
// second queue: both receive the same messages, published by the one
// publisher of package target.
func TestLocalReplayQueueToQueue(t *testing.T) {
	t.Parallel()
	d := deployQueueTarget(t, "replay-queues-target", provision.Spec{Name: "replay-queues"})
	own := d.consume(targetkind.QueueURL(d.spec.Target.QueueARN))
	second := d.newQueue("replay-second")
	const source = "com.example.queues"
	var events []outbox.Event
	for i := range 5 {
		events = append(events, outbox.Event{Source: source, DetailType: "Queued", Detail: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
	}
	recs := d.write(events...)
	own.waitFor(t, idsOf(recs))
	d.waitPublished()
	copies := d.consume(targetkind.QueueURL(second))
	since := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	out, errOut, code := d.run("replay", "replay-queues", "--since", since, "--target", second)
	if code != ExitOK || !strings.Contains(out, "replayed 5 of 5 events to "+second) {
		t.Fatalf("replay: exit %d: %s%s", code, out, errOut)
	}
	copies.waitFor(t, idsOf(recs))
	for _, r := range recs {
		own.mu.Lock()
		body := own.bodies[r.EventID]
		own.mu.Unlock()
		copies.mu.Lock()
		replayed := copies.bodies[r.EventID]
		copies.mu.Unlock()
		if body == "" || body != replayed {
			t.Errorf("event %s: replayed %s, the relay sent %s", r.EventID, replayed, body)
		}
	}
}

// deployQueueTarget deploys the pipeline of spec, sending to a queue of
// its own called queue, created on the stack of a probe pipeline first.
func deployQueueTarget(t *testing.T, queue string, spec provision.Spec) *deployed {
	t.Helper()
	probe := deploy(t, provision.Spec{Name: spec.Name + "-probe", Reconciler: provision.ReconcilerSpec{Disabled: true}})
	spec.Target = provision.TargetSpec{Type: targetkind.SQS, QueueARN: probe.newQueue(queue)}
	return deployOn(t, probe, spec)
}

// newQueue creates a queue on d's stack, FIFO when its name ends in .fifo,
// and returns its ARN.
func (d *deployed) newQueue(name string) string {
	d.t.Helper()
	var attrs map[string]string
	if strings.HasSuffix(name, ".fifo") {
		attrs = map[string]string{"FifoQueue": "true"}
	}
	q := sqs.NewFromConfig(d.cfg)
	out, err := q.CreateQueue(d.ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		d.t.Fatal(err)
	}
	got, err := q.GetQueueAttributes(d.ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		d.t.Fatal(err)
	}
	return got.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
}

// deployOn creates the pipeline of spec on the stack of on.
func deployOn(t *testing.T, on *deployed, spec provision.Spec) *deployed {
	t.Helper()
	pc := provision.New(on.cfg, provision.RelayCode{Zip: relaypackage.Zip, SHA256: relaypackage.SHA256})
	pc.PropagationTimeout, pc.WaitTimeout, pc.PollInterval = 30*time.Second, time.Minute, 200*time.Millisecond
	spec.Architecture = nativeArch()
	st, err := pc.Create(on.ctx, spec)
	if err != nil {
		t.Fatalf("creating pipeline %s: %v", spec.Name, err)
	}
	w, err := outbox.NewWriter(on.ddb, spec.WithDefaults().OutboxTable())
	if err != nil {
		t.Fatal(err)
	}
	return &deployed{t: t, ctx: on.ctx, stack: on.stack, cfg: on.cfg, spec: spec, state: st, writer: w, ddb: on.ddb}
}
