package outboxpipeline_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/demo"
	"github.com/outboxkit/terraform-provider-outbox/internal/tfrun"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// fifoExample is the example applied by TestAccModuleFIFOTopic.
const fifoExample = "modules/outbox-pipeline/examples/fifo-topic"

// TestAccModuleFIFOTopic applies examples/fifo-topic, as written but for
// x86_64 functions, with an SNS FIFO topic of the local stack: both
// subscriptions' queues are FIFO queues subscribed to the topic; shipping
// receives every event, each order's in order, and billing only the
// OrderPlaced ones, the others being filtered out by its subscription.
func TestAccModuleFIFOTopic(t *testing.T) {
	tf := acctest.TerraformCLI(t, root)
	e := acctest.New(t)
	topic := newFIFOTopic(e, "fifomod-orders.fifo")
	e.CreateAppTable("fifomod-orders", "")
	run := applyFIFOExample(e, tf, topic)

	var queues, subscriptions map[string]string
	for name, v := range map[string]any{"subscription_queue_urls": &queues, "subscription_topic_subscription_arns": &subscriptions} {
		if err := run.OutputInto(e.Ctx, name, v); err != nil {
			t.Fatal(err)
		}
	}
	checkFIFOQueues(e, queues, []string{"billing", "shipping"})
	checkTopicSubscriptions(e, topic, subscriptions, []string{"billing", "shipping"})

	outboxTable := writerTable(e, run)
	w := e.Writer(outboxTable)
	changed, err := e.WriteAggregates(w, "fifomod-orders", []string{"ORDER#a", "ORDER#b"}, 4)
	if err != nil {
		t.Fatal(err)
	}
	placed, err := e.WriteOrders(w, "fifomod-orders", "com.example.orders", 1, 3, true)
	if err != nil {
		t.Fatal(err)
	}
	all := append(append([]outbox.Record{}, changed...), placed...)
	receiveInOrder(e, queues["shipping"], all)
	receiveInOrder(e, queues["billing"], placed)
	waitFilteredOut(e, topic, len(changed))
	if err := e.WaitItems(outboxTable, all, "items marked PUBLISHED", acctest.PublishedWithTTL("expiresAt")); err != nil {
		t.Fatal(err)
	}
	checkEmptyPlan(e.Ctx, t, run, "the apply")
}

// TestAccModuleFIFOQueue applies the module with an SQS FIFO queue of the
// local stack as its target: the queue receives every event, each order's
// in order in the order's group; target_arn is the queue and event_bus_arn
// null.
func TestAccModuleFIFOQueue(t *testing.T) {
	tf := acctest.TerraformCLI(t, root)
	e := acctest.New(t)
	sink := e.NewFIFOQueue("fifoq-consumer.fifo", nil)
	e.CreateAppTable("fifoq-orders", "")
	config := requiredOutbox + fmt.Sprintf(`
module "p" {
  source    = "../modules/outbox-pipeline"
  name      = "fifoq"
  queue_arn = %q
  `+fastRelay+`
}

output "writer_table" {
  value = module.p.writer_table
}

output "targets" {
  value = { target = module.p.target_arn, bus = module.p.event_bus_arn }
}
`, sink.QueueARN)
	run := applyStaged(e, tf, "queue", map[string]string{"main.tf": config}, nil)
	var targets struct {
		Target string  `json:"target"`
		Bus    *string `json:"bus"`
	}
	if err := run.OutputInto(e.Ctx, "targets", &targets); err != nil {
		t.Fatal(err)
	}
	if targets.Target != sink.QueueARN || targets.Bus != nil {
		t.Errorf("target_arn = %q, event_bus_arn = %v; want %q and null", targets.Target, targets.Bus, sink.QueueARN)
	}
	table := writerTable(e, run)
	events, err := e.WriteAggregates(e.Writer(table), "fifoq-orders", []string{"ORDER#a", "ORDER#b"}, 4)
	if err != nil {
		t.Fatal(err)
	}
	receiveInOrder(e, sink.QueueURL, events)
	if err := e.WaitItems(table, events, "items marked PUBLISHED", acctest.PublishedWithTTL("expiresAt")); err != nil {
		t.Fatal(err)
	}
}

// applyFIFOExample applies the FIFO example, with an override file for
// x86_64 functions and a fast mapping, and its variables in the
// environment.
func applyFIFOExample(e *acctest.Env, tf, topic string) *tfrun.Runner {
	e.T.Helper()
	override := `module "orders_outbox" {
  ` + fastRelay + `
}
`
	return applyStaged(e, tf, fifoExample, map[string]string{"test_override.tf": override},
		map[string]string{"TF_VAR_name": "fifomod", "TF_VAR_topic_arn": topic})
}

// applyStaged stages the modules, adds files to the configuration in dir
// (relative to the staged root), applies it on e's stack with env added to
// the runner's environment, and destroys it when the test ends.
func applyStaged(e *acctest.Env, tf, dir string, files, env map[string]string) *tfrun.Runner {
	t := e.T
	t.Helper()
	inst, work := stageModules(e.Ctx, t, tf, dir)
	for name, src := range files {
		writeFile(t, work, name, src)
	}
	runEnv := tfrun.AWSEnv(e.Stack.Endpoint(), e.Stack.Options().Region)
	for k, v := range env {
		runEnv[k] = v
	}
	return initAndApply(e.Ctx, t, inst, work, runEnv)
}

// writerTable is the outbox table of the writer_table output: the
// pipeline's own table, in the dedicated layout.
func writerTable(e *acctest.Env, run *tfrun.Runner) outbox.Table {
	e.T.Helper()
	var w demo.WriterTable
	if err := run.OutputInto(e.Ctx, "writer_table", &w); err != nil {
		e.T.Fatal(err)
	}
	table := w.Table()
	table.Layout = outbox.LayoutDedicated
	return table
}

// newFIFOTopic creates the SNS FIFO topic name, deleted when the test ends.
func newFIFOTopic(e *acctest.Env, name string) string {
	e.T.Helper()
	c := sns.NewFromConfig(e.Cfg)
	out, err := c.CreateTopic(e.Ctx, &sns.CreateTopicInput{Name: aws.String(name), Attributes: map[string]string{"FifoTopic": "true"}})
	if err != nil {
		e.T.Fatalf("creating FIFO topic: %v", err)
	}
	e.T.Cleanup(func() { _, _ = c.DeleteTopic(context.Background(), &sns.DeleteTopicInput{TopicArn: out.TopicArn}) })
	return aws.ToString(out.TopicArn)
}

// checkFIFOQueues checks that each subscription's queue, named
// fifomod-<key>.fifo, is a FIFO queue.
func checkFIFOQueues(e *acctest.Env, urls map[string]string, keys []string) {
	e.T.Helper()
	c := sqs.NewFromConfig(e.Cfg)
	for _, k := range keys {
		url := urls[k]
		if !strings.HasSuffix(url, "/fifomod-"+k+".fifo") {
			e.T.Fatalf("the queue of subscription %s is %q, want fifomod-%s.fifo", k, url, k)
		}
		out, err := c.GetQueueAttributes(e.Ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameFifoQueue}})
		if err != nil {
			e.T.Fatal(err)
		}
		if out.Attributes[string(sqstypes.QueueAttributeNameFifoQueue)] != "true" {
			e.T.Fatalf("queue %s is not a FIFO queue", url)
		}
	}
}

// checkTopicSubscriptions checks that each subscription's SNS subscription
// is to the pipeline's topic, with raw message delivery.
func checkTopicSubscriptions(e *acctest.Env, topic string, arns map[string]string, keys []string) {
	e.T.Helper()
	c := sns.NewFromConfig(e.Cfg)
	if len(arns) != len(keys) {
		e.T.Fatalf("subscription_topic_subscription_arns = %v, want one for each of %v", arns, keys)
	}
	for _, k := range keys {
		out, err := c.GetSubscriptionAttributes(e.Ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(arns[k])})
		if err != nil {
			e.T.Fatalf("subscription %s (%q): %v", k, arns[k], err)
		}
		if out.Attributes["TopicArn"] != topic || out.Attributes["RawMessageDelivery"] != "true" {
			e.T.Fatalf("subscription %s: TopicArn %q, RawMessageDelivery %q; want %q and true", k, out.Attributes["TopicArn"], out.Attributes["RawMessageDelivery"], topic)
		}
	}
}

// receiveInOrder receives want from the FIFO queue url and checks that each
// event arrived once, in its group and order, and that no other arrived.
func receiveInOrder(e *acctest.Env, url string, want []outbox.Record) {
	e.T.Helper()
	got, err := acctest.Sink{Env: e, QueueURL: url}.ReceiveFIFO(want)
	if err != nil {
		e.T.Fatalf("%s: %v", url, err)
	}
	if err := acctest.CheckFIFO(want, got); err != nil {
		e.T.Fatalf("%s: %v", url, err)
	}
}

// waitFilteredOut waits until the topic's subscriptions have filtered out
// n deliveries, and fails if they filter out more.
func waitFilteredOut(e *acctest.Env, topic string, n int) {
	e.T.Helper()
	err := acctest.Wait(e.Ctx, "the topic's deliveries filtered out", func() error {
		var out struct {
			Topics map[string]struct {
				FilteredOut int `json:"numberOfNotificationsFilteredOut"`
			} `json:"topics"`
		}
		if err := e.Ctl.Do(e.Ctx, http.MethodGet, "sns/metrics", nil, &out); err != nil {
			return err
		}
		if got := out.Topics[topic].FilteredOut; got != n {
			return fmt.Errorf("%d filtered out, want %d", got, n)
		}
		return nil
	})
	if err != nil {
		e.T.Fatal(err)
	}
}
