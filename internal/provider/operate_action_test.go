package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// actionConfig is a pipeline's configuration with the action
// outbox_<command>.test, whose config block holds body besides the
// pipeline, run by a terraform_data's action_trigger when it is created or
// its input (run) changes.
func actionConfig(pipeline, command, body, run string) string {
	return pipeline + fmt.Sprintf(`
action "outbox_%[1]s" "test" {
  config {
    pipeline = outbox_pipeline.test.name
%[2]s
  }
}

resource "terraform_data" "trigger" {
  input = %[3]q
  lifecycle {
    action_trigger {
      events  = [after_create, after_update]
      actions = [action.outbox_%[1]s.test]
    }
  }
}
`, command, body, run)
}

// runActions runs steps that invoke actions: on Terraform 1.14 and later,
// the first with actions.
func (e *accEnv) runActions(t *testing.T, destroyed resource.TestCheckFunc, steps []resource.TestStep) {
	t.Helper()
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(), CheckDestroy: destroyed, Steps: steps,
		TerraformVersionChecks: []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0), acctest.SkipOpenTofu},
	})
}

// check turns err into a failure of the test (for PostApplyFunc).
func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Error(err)
	}
}

// TestAccAction_requeue: a dry run of outbox_requeue changes nothing; with
// ids and now, the events given are requeued and published at once, and
// the other stays FAILED.
func TestAccAction_requeue(t *testing.T) {
	e := newAccEnv(t)
	d := e.newDelivery("act-requeue")
	pipeline := e.PipelineConfig(d.name, fastRelayMapping+"\n  force_destroy = true")
	failed := acctest.FailedRecords(d.table, "com.example.orders", "EventBridge: AccessDenied", "", 3)
	e.runActions(t, e.CheckDestroy(d.name, d.before), []resource.TestStep{
		{Config: pipeline, Check: func(*terraform.State) error { return e.PutFailed(d.table, failed) }},
		{
			Config: actionConfig(pipeline, "requeue", `    dry_run = true`, "1"),
			PostApplyFunc: func() {
				check(t, e.CheckItems(d.table, failed, acctest.HasStatus(outbox.StatusFailed)))
			},
		},
		{
			Config: actionConfig(pipeline, "requeue", fmt.Sprintf(`    ids = [%q, %q]
    now = true`, failed[0].EventID, failed[1].EventID), "2"),
			PostApplyFunc: func() {
				check(t, e.CheckItems(d.table, failed[:2], acctest.PublishedWithTTL("expiresAt")))
				check(t, e.CheckItems(d.table, failed[2:], acctest.HasStatus(outbox.StatusFailed)))
				_, err := d.sink.Receive(failed[:2])
				check(t, err)
			},
		},
		{
			Config:      actionConfig(pipeline, "requeue", `    ids = ["01JDQ4Z6X0V8W3M5K2R7T9B1CE"]`, "3"),
			ExpectError: regexp.MustCompile(`(?s)no FAILED event has the id\s+01JDQ4Z6X0V8W3M5K2R7T9B1CE`),
		},
	})
}

// TestAccAction_skip: outbox_skip without yes shows the event and changes
// nothing; the key's second event is refused while the first is next; with
// yes, the first becomes SKIPPED.
func TestAccAction_skip(t *testing.T) {
	e := newAccEnv(t)
	f := e.newFixture("act-skip")
	// skip releases only the keys of an ordered pipeline.
	sink := e.NewFIFOQueue(e.Name("act-skip")+".fifo", nil)
	before := e.Snapshot()
	pipeline := e.PipelineConfig(f.name, fastRelay+fmt.Sprintf(`
  force_destroy = true
  target        = { queue_arn = %q }
  ordering      = { enabled = true }`, sink.QueueARN))
	failed := acctest.FailedRecords(f.table, "com.example.orders", "SQS rejected the event: InvalidMessageContents", "acct-1", 3)
	e.runActions(t, e.CheckDestroy(f.name, before), []resource.TestStep{
		{Config: pipeline, Check: func(*terraform.State) error { return e.PutFailed(f.table, failed) }},
		{
			Config: actionConfig(pipeline, "skip", fmt.Sprintf(`    event_id = %q`, failed[0].EventID), "1"),
			PostApplyFunc: func() {
				check(t, e.CheckItems(f.table, failed, acctest.HasStatus(outbox.StatusFailed)))
			},
		},
		{
			Config:      actionConfig(pipeline, "skip", fmt.Sprintf("    event_id = %q\n    yes = true", failed[1].EventID), "2"),
			ExpectError: regexp.MustCompile(`next event to publish is 1`),
		},
		{
			Config: actionConfig(pipeline, "skip", fmt.Sprintf("    event_id = %q\n    yes = true", failed[0].EventID), "3"),
			PostApplyFunc: func() {
				check(t, e.CheckItems(f.table, failed[:1], acctest.HasStatus(outbox.StatusSkipped)))
				check(t, e.CheckItems(f.table, failed[1:], acctest.HasStatus(outbox.StatusFailed)))
			},
		},
	})
}

// TestAccAction_drainReplay: options the command refuses are refused at
// plan, naming the attribute; outbox_drain returns once the events written
// before it are published; outbox_replay publishes them again.
func TestAccAction_drainReplay(t *testing.T) {
	e := newAccEnv(t)
	d := e.newDelivery("act-drain")
	pipeline := e.PipelineConfig(d.name, fastRelay)
	var records []outbox.Record
	e.runActions(t, e.CheckDestroy(d.name, d.before), []resource.TestStep{
		{Config: actionConfig(pipeline, "drain", `    timeout = "0s"`, "0"), ExpectError: regexp.MustCompile(`(?s)--timeout must be longer than 0s`)},
		{Config: actionConfig(pipeline, "drain", `    interval = "soon"`, "0"), ExpectError: regexp.MustCompile(`(?s)interval.*"soon" is not a duration`)},
		{Config: actionConfig(pipeline, "replay", `    since = "1h"
    until = "2h"`, "0"), ExpectError: regexp.MustCompile(`(?s)the window is empty`)},
		{Config: pipeline},
		{
			PreConfig: func() {
				var err error
				records, err = e.WriteOrders(e.Writer(d.table), d.orders, "com.example.orders", 1, 5, false)
				check(t, err)
			},
			Config: actionConfig(pipeline, "drain", `    timeout  = "5m"
    interval = "1s"`, "1"),
			PostApplyFunc: func() {
				// Drained: every event is published when the action ends.
				check(t, e.CheckItems(d.table, records, acctest.PublishedWithTTL("expiresAt")))
				_, err := d.sink.Receive(records)
				check(t, err)
			},
		},
		{
			Config: actionConfig(pipeline, "replay", `    since       = "1h"
    detail_type = "OrderPlaced"
    rate        = 50`, "2"),
			PostApplyFunc: func() {
				got, err := d.sink.Receive(records)
				check(t, err)
				check(t, acctest.CheckEvents(records, got))
			},
		},
	})
}

// TestAccAction_redrive: while the bus fails, the mapping dead-letters a
// batch. Once it recovers, a change of the pipeline guarded by an
// outbox_drain before_update is refused (the batch's events stay pending
// until the reconciler runs); outbox_redrive publishes them and empties
// the dead-letter queue; then the guarded change is made.
func TestAccAction_redrive(t *testing.T) {
	e := newAccEnv(t)
	e.needsFaults()
	d := e.newDelivery("act-redrive")
	relay := func(batch int) string {
		return fmt.Sprintf(`
  relay = {
    architecture            = "x86_64"
    batch_size              = %d
    batching_window_seconds = 0
    maximum_retry_attempts  = 0
    bisect_on_error         = false
  }`, batch)
	}
	pipeline := e.PipelineConfig(d.name, relay(10))
	// The documented guard: a drain before each in-place change.
	guarded := e.PipelineConfig(d.name, relay(5)+`
  lifecycle {
    action_trigger {
      events  = [before_update]
      actions = [action.outbox_drain.guard]
    }
  }`) + fmt.Sprintf(`
action "outbox_drain" "guard" {
  config {
    pipeline = %q
    timeout  = "3s"
    interval = "1s"
  }
}
`, d.name)
	var records []outbox.Record
	e.runActions(t, e.CheckDestroy(d.name, d.before), []resource.TestStep{
		{
			Config: pipeline,
			Check: func(*terraform.State) error {
				var err error
				records, err = e.deadLetter(d)
				return err
			},
		},
		{
			// The dead-lettered events stay pending until a reconciler
			// run: the drain times out, and the change is not made.
			Config:      guarded,
			ExpectError: regexp.MustCompile(`(?s)still has 3 events\s+pending`),
		},
		{
			Config: actionConfig(pipeline, "redrive", `    visibility = "2m"`, "1"),
			PostApplyFunc: func() {
				check(t, e.CheckItems(d.table, records, acctest.PublishedWithTTL("expiresAt")))
				check(t, e.checkQueueEmpty(d.name+"-relay-dlq"))
				_, err := d.sink.Receive(records)
				check(t, err)
			},
		},
		{
			// Nothing is pending: the drain passes, and the change is made.
			Config: guarded,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("relay.batch_size"), knownvalue.Int64Exact(5)),
			},
		},
	})
}

// deadLetter writes three orders while the bus fails, waits until their
// batch is in the dead-letter queue, and ends the outage.
func (e *accEnv) deadLetter(d delivery) ([]outbox.Record, error) {
	fault, err := e.Ctl.AddFault(e.Ctx, control.FaultRule{Service: "events", Operation: "PutEvents", Entry: true, Code: "InternalFailure", Message: "injected outage"})
	if err != nil {
		return nil, err
	}
	records, err := e.WriteOrders(e.Writer(d.table), d.orders, "com.example.orders", 1, 3, false)
	if err != nil {
		return nil, err
	}
	if err := acctest.Wait(e.Ctx, "a batch in the dead-letter queue", func() error { return e.queueHas(d.name+"-relay-dlq", true) }); err != nil {
		return nil, err
	}
	return records, e.Ctl.RemoveFault(e.Ctx, fault.ID)
}

// checkQueueEmpty checks that the queue name holds no message, visible or
// in flight.
func (e *accEnv) checkQueueEmpty(name string) error { return e.queueHas(name, false) }

// queueHas checks that the queue name holds messages (visible or in
// flight), or none.
func (e *accEnv) queueHas(name string, messages bool) error {
	c := sqs.NewFromConfig(e.Cfg)
	url, err := c.GetQueueUrl(e.Ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		return err
	}
	out, err := c.GetQueueAttributes(e.Ctx, &sqs.GetQueueAttributesInput{QueueUrl: url.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{
		sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
	}})
	if err != nil {
		return err
	}
	visible := out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)]
	inFlight := out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)]
	if has := visible != "0" || inFlight != "0"; has != messages {
		return fmt.Errorf("queue %s has %s messages and %s in flight", name, visible, inFlight)
	}
	return nil
}
