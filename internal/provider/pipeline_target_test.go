package provider

import (
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// targetBlock is the target object that publishes to arn with attribute.
func targetBlock(attribute, arn string) string {
	return fmt.Sprintf(`
  target = {
    %s = %q
  }`, attribute, arn)
}

// targetKindSteps are the steps every target kind passes: applied, its
// ARN in target_arn, delivering to sink; the relay's target changed by
// hand (drift) planned as an update that repairs it, after which delivery
// works again; an empty plan; and an import that matches the state.
func (e *accEnv) targetKindSteps(t *testing.T, f fixture, sink acctest.Sink, block, arn string, checks ...resource.TestCheckFunc) []resource.TestStep {
	config := e.PipelineConfig(f.name, fastRelay+block)
	marked := func(from int) resource.TestCheckFunc {
		return e.deliverMarked(sink, f.table, f.orders, from, 4)
	}
	return []resource.TestStep{
		{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("target_arn"), knownvalue.StringExact(arn)),
			},
			Check: resource.ComposeTestCheckFunc(append([]resource.TestCheckFunc{marked(1)}, checks...)...),
		},
		{
			PreConfig: func() {
				e.retargetByHand(t, f.name+"-relay", targetkind.Settings{Type: targetkind.EventBridge, EventBus: "default"})
			},
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectNonEmptyPlan(),
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
			}},
			Check: marked(10),
		},
		emptyPlanStep(config),
		importStep(config, accResource, f.name),
		importBlockStep(config, accResource, f.name),
	}
}

// retargetByHand points the function's target at s out of band, as a
// person editing its environment would.
func (e *accEnv) retargetByHand(t *testing.T, function string, s targetkind.Settings) {
	t.Helper()
	lc := lambda.NewFromConfig(e.Cfg)
	out, err := lc.GetFunctionConfiguration(e.Ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(function)})
	if err != nil {
		t.Fatal(err)
	}
	env := maps.Clone(out.Environment.Variables)
	for _, name := range targetkind.EnvNames() {
		delete(env, name)
	}
	maps.Copy(env, s.Env())
	e.outOfBand(t, "changing the target of "+function,
		sdkCall(e.Ctx, lc.UpdateFunctionConfiguration, &lambda.UpdateFunctionConfigurationInput{
			FunctionName: aws.String(function), Environment: &lambdatypes.Environment{Variables: env},
		}),
		"the function updated", func() error {
			out, err := lc.GetFunctionConfiguration(e.Ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(function)})
			if err != nil {
				return err
			}
			if out.Environment.Variables[targetkind.EnvTarget] != string(s.Type) || out.LastUpdateStatus != lambdatypes.LastUpdateStatusSuccessful {
				return fmt.Errorf("target %q, update %s", out.Environment.Variables[targetkind.EnvTarget], out.LastUpdateStatus)
			}
			return nil
		})
}

// TestAccPipeline_targetSQS sends to a standard SQS queue: the message
// body is the published event.
func TestAccPipeline_targetSQS(t *testing.T) {
	e := newAccEnv(t)
	f := e.newFixture("toqueue")
	sink := e.NewQueue(e.Name("acc-target"), nil)
	before := e.Snapshot()
	e.run(t, e.CheckDestroy(f.name, before), e.targetKindSteps(t, f, sink, targetBlock("queue_arn", sink.QueueARN), sink.QueueARN))
}

// TestAccPipeline_targetSQSFIFO sends to an SQS FIFO queue: each event in
// its aggregate's group, deduplicated by its event id, and each
// aggregate's events in the order written.
func TestAccPipeline_targetSQSFIFO(t *testing.T) {
	e := newAccEnv(t)
	f := e.newFixture("tofifo")
	sink := e.NewFIFOQueue(e.Name("acc-target")+".fifo", nil)
	before := e.Snapshot()
	e.run(t, e.CheckDestroy(f.name, before), e.targetKindSteps(t, f, sink, targetBlock("queue_arn", sink.QueueARN), sink.QueueARN, e.deliverInGroups(f, sink)))
}

// TestAccPipeline_targetSNSFIFO publishes to an SNS FIFO topic, with an SQS
// FIFO queue subscribed (raw delivery): groups, deduplication ids and
// order reach the queue.
func TestAccPipeline_targetSNSFIFO(t *testing.T) {
	e := newAccEnv(t)
	f := e.newFixture("tofifotopic")
	sink, topic := e.NewFIFOTopicSink()
	before := e.Snapshot()
	e.run(t, e.CheckDestroy(f.name, before), e.targetKindSteps(t, f, sink, targetBlock("topic_arn", topic), topic, e.deliverInGroups(f, sink)))
}

// deliverInGroups writes five events of each of three orders, round by
// round, and checks what the FIFO queue receives (acctest.CheckFIFO).
func (e *accEnv) deliverInGroups(f fixture, sink acctest.Sink) resource.TestCheckFunc {
	return func(*terraform.State) error {
		records, err := e.WriteAggregates(e.Writer(f.table), f.orders, []string{"ORDER#a", "ORDER#b", "ORDER#c"}, 5)
		if err != nil {
			return err
		}
		got, err := sink.ReceiveFIFO(records)
		if err != nil {
			return err
		}
		if err := acctest.CheckFIFO(records, got); err != nil {
			return err
		}
		return e.waitMarked(f.table, records)
	}
}

// denySend refuses every sqs:SendMessage on the queue, by its policy.
func (e *accEnv) denySend(t *testing.T, q acctest.Sink) {
	t.Helper()
	policy, _ := json.Marshal(map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{map[string]any{
			"Sid": "DenySend", "Effect": "Deny", "Principal": "*", "Action": "sqs:SendMessage", "Resource": q.QueueARN,
		}},
	})
	if _, err := sqs.NewFromConfig(e.Cfg).SetQueueAttributes(e.Ctx, &sqs.SetQueueAttributesInput{
		QueueUrl: aws.String(q.QueueURL), Attributes: map[string]string{"Policy": string(policy)},
	}); err != nil {
		t.Fatalf("denying sends to %s: %v", q.QueueARN, err)
	}
}

// TestAccPipeline_targetSwitch: events that are pending because the old
// target refuses them are published to the new target once target
// switches kind (from a queue to a topic): nothing is lost.
func TestAccPipeline_targetSwitch(t *testing.T) {
	e := newAccEnv(t)
	f := e.newFixture("switch")
	queue := e.NewQueue(e.Name("acc-old-target"), nil)
	topicSink, topic := e.NewTopicSink()
	before := e.Snapshot()
	body := func(block string) string {
		return e.PipelineConfig(f.name, `
  relay = {
    architecture            = "x86_64"
    batch_size              = 10
    batching_window_seconds = 0
    maximum_retry_attempts  = 0
    bisect_on_error         = false
  }`+block)
	}
	var pending []outbox.Record
	e.run(t, e.CheckDestroy(f.name, before), []resource.TestStep{
		{
			Config: body(targetBlock("queue_arn", queue.QueueARN)),
			Check: func(st *terraform.State) error {
				e.denySend(t, queue)
				var err error
				if pending, err = e.WriteOrders(e.Writer(f.table), f.orders, "com.example.orders", 1, 6, false); err != nil {
					return err
				}
				return e.waitRefused(st, f.table, pending)
			},
		},
		{
			Config: body(targetBlock("topic_arn", topic)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("target_arn"), knownvalue.StringExact(topic)),
			},
			Check: func(*terraform.State) error {
				if _, err := e.invokeReconciler(f.name+"-reconciler", reconcileAll); err != nil {
					return err
				}
				return e.receiveMarked(topicSink, f.table, pending)
			},
		},
	})
}

// waitRefused waits until the pipeline gave up on the records' stream
// batches (the dead-letter queue holds a failure record) while their
// items are still pending.
func (e *accEnv) waitRefused(st *terraform.State, table outbox.Table, records []outbox.Record) error {
	c := sqs.NewFromConfig(e.Cfg)
	dlq := stateAttr(st, "dead_letter_queue_url")
	if err := acctest.Wait(e.Ctx, "the dead-letter queue receiving the refused batch", func() error {
		out, err := c.GetQueueAttributes(e.Ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(dlq), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
		if err != nil {
			return err
		}
		if out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)] == "0" {
			return fmt.Errorf("no failure record yet")
		}
		return nil
	}); err != nil {
		return err
	}
	return e.WaitItems(table, records, "items still pending", pendingItem)
}

// reconcileAll is the reconciler's input for a run over every pending
// event, whatever its age.
const reconcileAll = `{"action":"reconcile","minAgeSeconds":0}`

// invokeReconciler invokes the reconciler function (a name or ARN) with
// payload and returns its output; the function's error is an error.
func (e *accEnv) invokeReconciler(function, payload string) ([]byte, error) {
	out, err := lambda.NewFromConfig(e.Cfg).Invoke(e.Ctx, &lambda.InvokeInput{FunctionName: aws.String(function), Payload: []byte(payload)})
	if err != nil {
		return nil, fmt.Errorf("invoking %s: %w", function, err)
	}
	if out.FunctionError != nil {
		return out.Payload, fmt.Errorf("%s failed: %s: %s", function, aws.ToString(out.FunctionError), out.Payload)
	}
	return out.Payload, nil
}
