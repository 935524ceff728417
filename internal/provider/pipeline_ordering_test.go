package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestAccPipeline_ordered applies an ordered pipeline to an SQS FIFO queue:
// each aggregate's events, numbered by the writer, arrive in their group in
// the order of their sequence; the import reads the mode back; ordering on
// a standard queue is refused, naming the attribute and the fix.
func TestAccPipeline_ordered(t *testing.T) {
	e := newAccEnv(t)
	f := e.newFixture("ordered")
	sink := e.NewFIFOQueue(e.Name("acc-ordered")+".fifo", nil)
	standard := e.NewQueue(e.Name("acc-unordered"), nil)
	before := e.Snapshot()
	config := func(queue string) string {
		return e.PipelineConfig(f.name, fastRelay+fmt.Sprintf(`
  target   = { queue_arn = %q }
  ordering = { enabled = true }`, queue))
	}
	e.run(t, e.CheckDestroy(f.name, before), []resource.TestStep{
		{Config: config(standard.QueueARN), ExpectError: regexp.MustCompile(`(?s)ordering.*FIFO`)},
		{
			Config:            config(sink.QueueARN),
			ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(accResource, attrPath("ordering.enabled"), knownvalue.Bool(true))},
			Check:             e.deliverInSequence(f, sink),
		},
		importStep(config(sink.QueueARN), accResource, f.name),
	})
}

// deliverInSequence writes five ordered events of each of three orders,
// round by round, and checks that each order's events arrive in its group
// in sequence, numbered 1 to 5.
func (e *accEnv) deliverInSequence(f fixture, sink acctest.Sink) resource.TestCheckFunc {
	return func(*terraform.State) error {
		w, err := outbox.NewWriter(dynamodb.NewFromConfig(e.Cfg), f.table, outbox.WithOrdering())
		if err != nil {
			return err
		}
		records, err := e.WriteAggregates(w, f.orders, []string{"ORDER#a", "ORDER#b", "ORDER#c"}, 5)
		if err != nil {
			return err
		}
		next := map[string]int64{}
		for _, r := range records {
			if next[r.OrderingKey]++; r.Sequence != next[r.OrderingKey] {
				return fmt.Errorf("event %s of %s has sequence %d, want %d", r.EventID, r.OrderingKey, r.Sequence, next[r.OrderingKey])
			}
		}
		got, err := sink.ReceiveFIFO(records)
		if err != nil {
			return err
		}
		return acctest.CheckFIFO(records, got)
	}
}

// TestAccPipeline_orderedUnknownTarget: an ordered pipeline whose topic is
// known only at apply (the output of another resource of the
// configuration) is checked at apply, not refused at plan: a standard
// topic is refused then, naming the attribute and the topic, and a FIFO
// topic applies.
func TestAccPipeline_orderedUnknownTarget(t *testing.T) {
	e := newAccEnv(t)
	f := e.newFixture("unknown-arn")
	_, fifo := e.NewFIFOTopicSink()
	_, standard := e.NewTopicSink()
	before := e.Snapshot()
	config := func(source, topic string) string {
		return e.PipelineConfig(f.name, fastRelay+fmt.Sprintf(`
  target   = { topic_arn = terraform_data.%s.output }
  ordering = { enabled = true }`, source)) + fmt.Sprintf(`
resource "terraform_data" %q {
  input = %q
}
`, source, topic)
	}
	e.run(t, e.CheckDestroy(f.name, before), []resource.TestStep{
		{
			Config:      config("standard", standard),
			ExpectError: regexp.MustCompile(`ordering\.enabled is on while the target is SNS topic\s+` + regexp.QuoteMeta(standard)),
		},
		{
			Config:            config("fifo", fifo),
			ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownValue(accResource, attrPath("target.topic_arn"), knownvalue.StringExact(fifo))},
		},
		emptyPlanStep(config("fifo", fifo)),
	})
}

// TestComparesUnknownTarget: a check that compares the target (ordering's)
// waits for apply while the topic's or the queue's ARN is unknown, and only
// then.
func TestComparesUnknownTarget(t *testing.T) {
	unknownQueue := &TargetModel{EventBus: types.StringNull(), TopicARN: types.StringNull(), QueueARN: types.StringUnknown(), Envelope: types.StringNull()}
	unknownTopic := &TargetModel{EventBus: types.StringNull(), TopicARN: types.StringUnknown(), QueueARN: types.StringNull(), Envelope: types.StringNull()}
	knownQueue := &TargetModel{EventBus: types.StringNull(), TopicARN: types.StringNull(), QueueARN: types.StringValue("arn:aws:sqs:us-east-1:123456789012:q"), Envelope: types.StringNull()}
	for _, c := range []struct {
		target *TargetModel
		fields []string
		want   bool
	}{
		{unknownQueue, []string{"Ordered", "Target"}, true},
		{unknownTopic, []string{"Ordered", "Target"}, true},
		{knownQueue, []string{"Ordered", "Target"}, false},
		{nil, []string{"Ordered", "Target"}, false},
		{unknownQueue, []string{"Table.PartitionKey", "Ordered"}, false},
	} {
		if got := comparesUnknownTarget(c.target, c.fields); got != c.want {
			t.Errorf("comparesUnknownTarget(%+v, %v) = %v, want %v", c.target, c.fields, got, c.want)
		}
	}
}
