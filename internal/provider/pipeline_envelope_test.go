package provider

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	cloudevents "github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/extensions"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
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
		importStep(cloud, accResource, f.name),
		{
			Config: plain,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
				plancheck.ExpectKnownValue(accResource, attrPath("target.envelope"), knownvalue.StringExact("outbox")),
			}},
			Check: e.deliverMarked(sink, f.table, f.orders, 10, 3),
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

// TestAccPipeline_cloudEventsExtensions publishes CloudEvents from an
// ordered pipeline with a claim-check bucket to an SQS FIFO queue: every
// message parses with the CloudEvents SDK and carries its event's id,
// source, type, subject, time and data; each ordered event's sequence
// extension reads back as the sequence the writer gave it, and its
// partitionkey is its aggregate; the claim-checked one carries no data but
// the dataref of its object, whose content fetched has the published
// datasha256 and is the data written.
func TestAccPipeline_cloudEventsExtensions(t *testing.T) {
	e := newAccEnv(t)
	f := e.newFixture("cesequence")
	sink := e.NewFIFOQueue(e.Name("acc-ce-ordered")+".fifo", nil)
	before := e.Snapshot()
	config := e.PipelineConfig(f.name, fastRelay+fmt.Sprintf(`
  target = {
    queue_arn = %q
    envelope  = "cloudevents"
  }
  ordering    = { enabled = true }
  claim_check = {}`, sink.QueueARN))
	e.run(t, e.CheckDestroy(f.name, before), []resource.TestStep{
		{Config: config, Check: e.receiveExtensions(f, sink, s3.NewFromConfig(e.Cfg))},
		emptyPlanStep(config),
	})
}

// receiveExtensions writes three ordered events of each of two orders and
// a fourth of the first one with 1,100 KiB of data, claim-checked (more
// than an item holds) and published as its reference (more than the
// queue's 1 MiB message), and checks the CloudEvents the queue receives of
// them.
func (e *accEnv) receiveExtensions(f fixture, sink acctest.Sink, objects *s3.Client) resource.TestCheckFunc {
	return func(st *terraform.State) error {
		w, err := outbox.NewWriter(dynamodb.NewFromConfig(e.Cfg), f.table, outbox.WithOrdering(), outbox.WithClaimCheck(objects, stateAttr(st, "writer.claim_bucket")))
		if err != nil {
			return err
		}
		records, err := e.WriteAggregates(w, f.orders, []string{"ORDER#a", "ORDER#b"}, 3)
		if err != nil {
			return err
		}
		large, _ := json.Marshal(map[string]string{"invoice": strings.Repeat("x", 1100<<10)})
		claimed, err := w.Write(e.Ctx, nil, outbox.Event{PartitionKey: "ORDER#a", Source: "com.example.orders", DetailType: "InvoiceAttached", Detail: large})
		if err != nil {
			return fmt.Errorf("writing the 1,100 KiB event: %w", err)
		}
		if claimed[0].DataRef == nil {
			return fmt.Errorf("the 1,100 KiB event %s was not claim-checked", claimed[0].EventID)
		}
		got, err := sink.ReceiveCloudEvents(append(records, claimed...))
		if err != nil {
			return err
		}
		if err := acctest.CheckCloudEvents(records, got); err != nil {
			return err
		}
		for _, r := range append(records, claimed...) {
			if err := checkSequenceExtensions(r, got[r.EventID]); err != nil {
				return err
			}
		}
		return e.checkDataRef(objects, claimed[0], large, got[claimed[0].EventID])
	}
}

// checkSequenceExtensions checks the extensions of an ordered event's
// CloudEvent: sequence, a string, reads back as the record's sequence, and
// partitionkey is its ordering key.
func checkSequenceExtensions(r outbox.Record, ev cloudevents.Event) error {
	ext := ev.Extensions()
	seq, _ := ext["sequence"].(string)
	n, err := strconv.ParseInt(seq, 10, 64)
	if err != nil || n != r.Sequence || r.Sequence < 1 || ext["partitionkey"] != r.OrderingKey {
		return fmt.Errorf("event %s arrived with sequence %v and partitionkey %v; want %d and %q", r.EventID, ext["sequence"], ext["partitionkey"], r.Sequence, r.OrderingKey)
	}
	return nil
}

// checkDataRef checks the CloudEvent of a claim-checked record: no data,
// the dataref (read by the SDK's extension) and datasha256 of the record's
// object, which fetched has that hash and is the data written; with that
// data, the event is the record written.
func (e *accEnv) checkDataRef(objects *s3.Client, r outbox.Record, data []byte, ev cloudevents.Event) error {
	ref, ok := extensions.GetDataRefExtension(ev)
	sha, _ := ev.Extensions()["datasha256"].(string)
	if !ok || ref.DataRef != r.DataRef.URI() || sha != r.DataRef.SHA256 || len(ev.Data()) > 0 {
		return fmt.Errorf("the claim-checked event %s arrived with dataref %q, datasha256 %q and %d bytes of data; want %q, %q and none",
			r.EventID, ref.DataRef, sha, len(ev.Data()), r.DataRef.URI(), r.DataRef.SHA256)
	}
	if err := fetchClaimed(e.Ctx, objects, ref.DataRef, sha, data); err != nil {
		return fmt.Errorf("event %s: %w", r.EventID, err)
	}
	if err := ev.SetData(cloudevents.ApplicationJSON, data); err != nil {
		return err
	}
	r.Detail = data
	return acctest.CheckCloudEvents([]outbox.Record{r}, map[string]cloudevents.Event{r.EventID: ev})
}
