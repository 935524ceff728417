package provider

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestAccPipeline_reconcilerWorkers: a backlog larger than one run's share
// (the relay stopped while 300 events were written, over 2 pending index
// shards read 100 events a page) is published by the reconciler run and
// the worker it starts, an asynchronous invocation of its own function,
// each on its own shard: every event arrives once, and every item ends
// PUBLISHED.
func TestAccPipeline_reconcilerWorkers(t *testing.T) {
	e := newAccEnv(t)
	f := e.newFixture("workers")
	f.table.PendingShards = 2
	queue := e.Name("acc-workers")
	sink := e.NewQueue(queue, nil)
	before := e.Snapshot()
	config := e.PipelineConfig(f.name, fastRelayMapping+fmt.Sprintf(`
  pending_index = {
    shards = 2
  }
  reconciler = {
    schedule_expression = "rate(1 hour)"
    max_workers         = 2
  }
  target = { queue_arn = %q }`, sink.QueueARN))
	e.run(t, e.CheckDestroy(f.name, before), []resource.TestStep{{
		Config: config,
		Check: func(st *terraform.State) error {
			uuid := stateAttr(st, "event_source_mapping_uuid")
			e.disableMapping(t, uuid)
			defer e.setMapping(t, uuid, true)
			records, err := e.WriteOrders(e.Writer(f.table), f.orders, "com.example.orders", 1, 300, false)
			if err != nil {
				return err
			}
			report, err := e.reconcileReport(f.name + "-reconciler")
			if err != nil {
				return err
			}
			if report.Workers != 1 || report.ShardsLeased != 2 || report.Published >= len(records) {
				return fmt.Errorf("reconciler report %+v: want both shards leased, one handed to a worker", report)
			}
			if err := e.waitMarked(f.table, records); err != nil {
				return fmt.Errorf("%w\nthe reconciler's log:\n%s", err, e.functionLog(f.name+"-reconciler"))
			}
			return e.receivedOnce(sink, queue, records)
		},
	}})
}

// functionLog is what the function logged, a line an event, for a test's
// failure message.
func (e *accEnv) functionLog(function string) string {
	c := cloudwatchlogs.NewFromConfig(e.Cfg)
	var b strings.Builder
	p := cloudwatchlogs.NewFilterLogEventsPaginator(c, &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String("/aws/lambda/" + function)})
	for p.HasMorePages() {
		out, err := p.NextPage(e.Ctx)
		if err != nil {
			return "reading it: " + err.Error()
		}
		for _, ev := range out.Events {
			b.WriteString(aws.ToString(ev.Message) + "\n")
		}
	}
	return b.String()
}

// receivedOnce checks that the queue received each event of want exactly
// once and nothing else.
func (e *accEnv) receivedOnce(sink acctest.Sink, queue string, want []outbox.Record) error {
	times := map[string]int{}
	if err := sink.Drain("receiving the published events", want, func(m types.Message) (string, error) {
		var ev acctest.Event
		if err := json.Unmarshal([]byte(*m.Body), &ev); err != nil {
			return "", err
		}
		times[ev.Detail.Metadata.EventID]++
		return ev.Detail.Metadata.EventID, nil
	}); err != nil {
		return err
	}
	for id, n := range times {
		if n != 1 {
			return fmt.Errorf("event %s arrived %d times", id, n)
		}
	}
	return e.checkQueueEmpty(queue)
}
