package provider

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
)

// TestAccSubscription_fifoTopic: a pipeline publishing to an SNS FIFO topic,
// and a subscription of an SQS FIFO queue (with a FIFO dead-letter queue) to
// it, filtered on the detail type: the queue receives each order's events
// of that type in order, in the order's group, and none of the others; the
// subscription deleted out of band is repaired; import matches.
func TestAccSubscription_fifoTopic(t *testing.T) {
	e := newAccEnv(t)
	f := e.newFixture("fifosub")
	topic := e.newFIFOTopic(t)
	before := e.Snapshot()
	sub := f.name + "-billing"
	config := e.PipelineConfig(f.name, fastRelay+targetBlock("topic_arn", topic)) + fmt.Sprintf(`
resource "outbox_subscription" "test" {
  name         = %q
  topic_arn    = outbox_pipeline.test.target_arn
  sources      = ["com.example.orders"]
  detail_types = ["OrderChanged"]
}
`, sub)
	var subscriptionARN string
	e.run(t, e.checkSubscriptionsDestroyed(before, e.CheckDestroy(f.name, before)), []resource.TestStep{
		{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accSub, attrPath("rule_arn"), knownvalue.Null()),
				statecheck.ExpectKnownValue(accSub, attrPath("subscription_arn"), knownvalue.NotNull()),
			},
			Check: func(st *terraform.State) error {
				subscriptionARN = st.RootModule().Resources[accSub].Primary.Attributes["subscription_arn"]
				return e.checkFIFOSubscription(st, f)
			},
		},
		{
			PreConfig: func() {
				e.outOfBand(t, "unsubscribing the queue", sdkCall(e.Ctx, sns.NewFromConfig(e.Cfg).Unsubscribe, &sns.UnsubscribeInput{SubscriptionArn: aws.String(subscriptionARN)}),
					"the subscription gone", func() error { return nil })
			},
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accSub, plancheck.ResourceActionUpdate),
			}},
			Check: func(st *terraform.State) error { return e.checkFIFOSubscription(st, f) },
		},
		emptyPlanStep(config),
		importStep(config, accSub, sub),
	})
}

// newFIFOTopic creates an SNS FIFO topic, deleted when the test ends.
func (e *accEnv) newFIFOTopic(t *testing.T) string {
	t.Helper()
	c := sns.NewFromConfig(e.Cfg)
	out, err := c.CreateTopic(e.Ctx, &sns.CreateTopicInput{Name: aws.String(e.Name("acc-orders") + ".fifo"), Attributes: map[string]string{"FifoTopic": "true"}})
	if err != nil {
		t.Fatalf("creating FIFO topic: %v", err)
	}
	t.Cleanup(func() { _, _ = c.DeleteTopic(e.Ctx, &sns.DeleteTopicInput{TopicArn: out.TopicArn}) })
	return aws.ToString(out.TopicArn)
}

// checkFIFOSubscription writes events of two detail types and checks that
// the subscription's FIFO queue receives those of its detail type, in
// their groups and order, and that both its queues are FIFO queues.
func (e *accEnv) checkFIFOSubscription(st *terraform.State, f fixture) error {
	attrs := st.RootModule().Resources[accSub].Primary.Attributes
	c := sqs.NewFromConfig(e.Cfg)
	for _, url := range []string{attrs["queue_url"], attrs["dead_letter_queue_url"]} {
		out, err := c.GetQueueAttributes(e.Ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameFifoQueue}})
		if err != nil {
			return err
		}
		if out.Attributes[string(sqstypes.QueueAttributeNameFifoQueue)] != "true" {
			return fmt.Errorf("queue %s is not a FIFO queue", url)
		}
	}
	placed, err := e.WriteOrders(e.Writer(f.table), f.orders, "com.example.orders", 1, 3, false)
	if err != nil {
		return err
	}
	changed, err := e.WriteAggregates(e.Writer(f.table), f.orders, []string{"ORDER#a", "ORDER#b"}, 4)
	if err != nil {
		return err
	}
	sink := acctest.Sink{Env: e.Env, QueueURL: attrs["queue_url"]}
	got, err := sink.ReceiveFIFO(changed)
	if err != nil {
		return err
	}
	if err := acctest.CheckFIFO(changed, got); err != nil {
		return fmt.Errorf("%w (the filter policy lets only OrderChanged through)", err)
	}
	return e.waitMarked(f.table, append(placed, changed...))
}
