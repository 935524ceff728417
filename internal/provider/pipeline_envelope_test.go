package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
)

// TestAccPipeline_cloudEventsEnvelope publishes with envelope =
// "cloudevents" to an SQS queue: every message parses with the CloudEvents
// SDK and carries each event's id, source, type, subject, time and data;
// the import reads the envelope back; switching to the default envelope
// plans the change with its values and the next events arrive in the
// outbox's shape.
func TestAccPipeline_cloudEventsEnvelope(t *testing.T) {
	e := newAccEnv(t)
	f := e.newFixture("cloudevents")
	sink := e.NewQueue(e.Name("acc-ce"), nil)
	before := e.Snapshot()
	block := func(envelope string) string {
		return e.PipelineConfig(f.name, fastRelay+fmt.Sprintf(`
  target = {
    queue_arn = %q
    envelope  = %q
  }`, sink.QueueARN, envelope))
	}
	cloud, plain := block("cloudevents"), block("outbox")
	e.run(t, e.CheckDestroy(f.name, before), []resource.TestStep{
		{Config: cloud, Check: e.receiveCloudEvents(f, sink, 1)},
		{Config: cloud, ResourceName: accResource, ImportState: true, ImportStateId: f.name, ImportStateVerify: true},
		{
			Config: plain,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(accResource, attrPath("target.envelope"), knownvalue.StringExact("outbox")),
			}},
			Check: e.Deliver(sink, f.table, f.orders, 10, 3, "items marked PUBLISHED", acctest.PublishedWithTTL("expiresAt")),
		},
		emptyPlanStep(plain),
	})
}

// receiveCloudEvents writes four orders and checks the CloudEvents the
// queue receives.
func (e *accEnv) receiveCloudEvents(f fixture, sink acctest.Sink, from int) resource.TestCheckFunc {
	return func(*terraform.State) error {
		records, err := e.WriteOrders(e.Writer(f.table), f.orders, "com.example.orders", from, 4, false)
		if err != nil {
			return err
		}
		got, err := sink.ReceiveCloudEvents(records)
		if err != nil {
			return err
		}
		return acctest.CheckCloudEvents(records, got)
	}
}
