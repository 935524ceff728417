// Acceptance tests of outbox_pipeline. Their harness (where they run, the
// fixtures and checks they share) is internal/acctest.
package provider

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relaypackage"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

const accResource = "outbox_pipeline.test"

// attrPath is the path of an attribute in a state or plan, dotted as in
// configurations: "relay.batch_size".
func attrPath(dotted string) tfjsonpath.Path {
	steps := strings.Split(dotted, ".")
	p := tfjsonpath.New(steps[0])
	for _, s := range steps[1:] {
		p = p.AtMapKey(s)
	}
	return p
}

func TestMain(m *testing.M) { acctest.Main(m) }

// accEnv is the environment of one acceptance test function, with the
// provider's factories and this package's checks.
type accEnv struct{ *acctest.Env }

func newAccEnv(t *testing.T) *accEnv { return &accEnv{acctest.New(t)} }

// run runs the steps of a test with this provider; destroyed (or nil)
// checks, after the last, that nothing is left.
func (e *accEnv) run(t *testing.T, destroyed resource.TestCheckFunc, steps []resource.TestStep) {
	t.Helper()
	resource.Test(t, resource.TestCase{ProtoV6ProviderFactories: e.factories(), CheckDestroy: destroyed, Steps: steps})
}

func (e *accEnv) factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"outbox": providerserver.NewProtocol6WithError(New("acctest")()),
	}
}

// fastRelayMapping is the relay object of the tests that deliver: x86_64
// functions, and a mapping that invokes at once and retries a failed batch
// twice, whole.
const fastRelayMapping = `
  relay = {
    architecture            = "x86_64"
    batch_size              = 10
    batching_window_seconds = 0
    maximum_retry_attempts  = 2
    bisect_on_error         = false
  }`

// fastRelay is fastRelayMapping without a reconciler.
const fastRelay = fastRelayMapping + `
  reconciler = {
    enabled = false
  }
`

// TestAccPipeline_dedicatedTable: a dedicated table on the default bus,
// events delivered with the right envelope, items marked, then deleted once
// the published action changes in place.
func TestAccPipeline_dedicatedTable(t *testing.T) {
	e := newAccEnv(t)
	d := e.newDelivery("orders")
	name, orders, table, s, before := d.name, d.orders, d.table, d.sink, d.before
	e.run(t, e.CheckDestroy(name, before), []resource.TestStep{
		{
			Config: e.PipelineConfig(name, fastRelay+`  tags = { team = "orders" }`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("id"), knownvalue.StringExact(name)),
				statecheck.ExpectKnownValue(accResource, attrPath("table_name"), knownvalue.StringExact(name+"-outbox")),
				statecheck.ExpectKnownValue(accResource, attrPath("relay_function_name"), knownvalue.StringExact(name+"-relay")),
				statecheck.ExpectKnownValue(accResource, attrPath("event_source_mapping_uuid"), knownvalue.NotNull()),
				statecheck.ExpectKnownValue(accResource, attrPath("stream_arn"), knownvalue.StringRegexp(regexp.MustCompile(`:table/`+name+`-outbox/stream/`))),
				statecheck.ExpectKnownValue(accResource, attrPath("dead_letter_queue_url"), knownvalue.StringRegexp(regexp.MustCompile(name+`-relay-dlq$`))),
				statecheck.ExpectKnownValue(accResource, attrPath("target_arn"), knownvalue.StringRegexp(regexp.MustCompile(`:event-bus/default$`))),
				statecheck.ExpectKnownValue(accResource, attrPath("ttl_attribute_in_use"), knownvalue.StringExact("expiresAt")),
				statecheck.ExpectKnownValue(accResource, attrPath("relay_package_sha256"), knownvalue.StringExact(acctest.RelaySHA(t, "x86_64"))),
				statecheck.ExpectKnownValue(accResource, attrPath("reconciler_function_arn"), knownvalue.Null()),
				statecheck.ExpectKnownValue(accResource, attrPath("tags_all"), knownvalue.MapExact(map[string]knownvalue.Check{"team": knownvalue.StringExact("orders")})),
			},
			Check: e.Deliver(s, table, orders, 1, 5, "items marked PUBLISHED with a TTL", acctest.PublishedWithTTL("expiresAt")),
		},
		{
			Config: e.PipelineConfig(name, fastRelay+`
  published = {
    action = "delete"
  }
  tags = { team = "orders" }`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
			}},
			Check: e.Deliver(s, table, orders, 100, 5, "items deleted", acctest.Deleted),
		},
	})
}

func stateAttr(s *terraform.State, name string) string {
	if r, ok := s.RootModule().Resources[accResource]; ok {
		return r.Primary.Attributes[name]
	}
	return ""
}

// TestAccPipeline_adoptedTable: a shared application table with OUTBOX#
// items beside the aggregates. Writes that are not outbox items never invoke
// the relay; destroy reverts only what the pipeline added.
func TestAccPipeline_adoptedTable(t *testing.T) {
	e := newAccEnv(t)
	name := e.Name("shop")
	app := e.Name("acc-shop")
	e.CreateAppTable(app, "")
	s := e.NewBusSink("com.example.orders")
	before := e.Snapshot()
	table := outbox.Table{Name: app, Layout: outbox.LayoutShared, PartitionKey: "pk", SortKey: "sk"}
	ddb := dynamodb.NewFromConfig(e.Cfg)
	destroyed := e.CheckDestroy(name, before)
	e.run(t, func(st *terraform.State) error {
		if err := destroyed(st); err != nil {
			return err
		}
		return adoptedTableReverted(e, ddb, app)
	}, []resource.TestStep{{
		Config: e.PipelineConfig(name, fastRelay+fmt.Sprintf(`
  table = {
    existing      = true
    name          = %q
    partition_key = "pk"
    sort_key      = "sk"
  }`, app)),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(accResource, attrPath("table_name"), knownvalue.StringExact(app)),
			statecheck.ExpectKnownValue(accResource, attrPath("stream_arn"), knownvalue.StringRegexp(regexp.MustCompile(`:table/`+app+`/stream/`))),
			statecheck.ExpectKnownValue(accResource, attrPath("pending_index_arn"), knownvalue.StringRegexp(regexp.MustCompile(`/index/outbox-pending$`))),
		},
		Check: func(st *terraform.State) error {
			// Aggregate items only: the filter drops them before the relay.
			const plain = 6
			for i := range plain {
				if _, err := ddb.PutItem(e.Ctx, &dynamodb.PutItemInput{TableName: aws.String(app), Item: map[string]ddbtypes.AttributeValue{
					"pk": &ddbtypes.AttributeValueMemberS{Value: fmt.Sprintf("CUSTOMER#%d", i)}, "sk": &ddbtypes.AttributeValueMemberS{Value: "PROFILE"},
				}}); err != nil {
					return err
				}
			}
			uuid := stateAttr(st, "event_source_mapping_uuid")
			if err := filteredWithoutInvoking(e, uuid, plain); err != nil {
				return err
			}
			// Orders with their events, beside the aggregates.
			if err := e.deliverMarked(s, table, app, 1, 4)(st); err != nil {
				return err
			}
			return wentThroughRelay(e, uuid, 4)
		},
	}})
}

// adoptedTableReverted checks that the adopted table survived its
// pipeline without what the pipeline added: the stream and the pending
// index.
func adoptedTableReverted(e *accEnv, ddb *dynamodb.Client, app string) error {
	out, err := ddb.DescribeTable(e.Ctx, &dynamodb.DescribeTableInput{TableName: aws.String(app)})
	if err != nil {
		return fmt.Errorf("the adopted table must survive the pipeline: %w", err)
	}
	if ss := out.Table.StreamSpecification; ss != nil && aws.ToBool(ss.StreamEnabled) {
		return fmt.Errorf("the stream that the pipeline enabled is still enabled")
	}
	if len(out.Table.GlobalSecondaryIndexes) != 0 {
		return fmt.Errorf("the pending index that the pipeline added is still there")
	}
	return nil
}

// wentThroughRelay waits, on the local stack, until the mapping counts at
// least n records that the relay succeeded on. The items are marked
// PUBLISHED inside the invocation, before the mapping counts its result.
func wentThroughRelay(e *accEnv, uuid string, n int64) error {
	if e.Ctl == nil {
		return nil
	}
	return acctest.Wait(e.Ctx, "the outbox items going through the relay", func() error {
		ms, err := e.Ctl.MappingStatus(e.Ctx, uuid)
		if err != nil {
			return err
		}
		if ms.Counters.Invocations == 0 || ms.Counters.RecordsSucceeded < n {
			return fmt.Errorf("the mapping counts %+v, want %d records succeeded", ms.Counters, n)
		}
		return nil
	})
}

// filteredWithoutInvoking checks, on the local stack, that the mapping
// filtered out at least n records without invoking the relay.
func filteredWithoutInvoking(e *accEnv, uuid string, n int64) error {
	if e.Ctl == nil {
		return nil
	}
	if err := acctest.Wait(e.Ctx, "the mapping reading the aggregate writes", func() error {
		ms, err := e.Ctl.MappingStatus(e.Ctx, uuid)
		if err != nil {
			return err
		}
		if ms.Counters.RecordsFiltered < n {
			return fmt.Errorf("%d records filtered out, want %d", ms.Counters.RecordsFiltered, n)
		}
		return nil
	}); err != nil {
		return err
	}
	ms, err := e.Ctl.MappingStatus(e.Ctx, uuid)
	if err != nil {
		return err
	}
	if ms.Counters.Invocations != 0 {
		return fmt.Errorf("aggregate writes invoked the relay %d times", ms.Counters.Invocations)
	}
	return nil
}

// TestAccPipeline_snsTarget publishes to an SNS topic with a queue
// subscribed.
func TestAccPipeline_snsTarget(t *testing.T) {
	e := newAccEnv(t)
	f := e.newFixture("notify")
	s, topic := e.NewTopicSink()
	before := e.Snapshot()
	e.run(t, e.CheckDestroy(f.name, before), []resource.TestStep{{
		Config: e.PipelineConfig(f.name, fastRelay+fmt.Sprintf(`
  target = {
    topic_arn = %q
  }`, topic)),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(accResource, attrPath("target_arn"), knownvalue.StringExact(topic)),
		},
		Check: e.deliverMarked(s, f.table, f.orders, 1, 4),
	}})
}

// TestAccPipeline_relayFailure: while PutEvents fails, the mapping's
// retries run out and the dead-letter queue receives the failure record;
// the items stay pending, so nothing is lost.
func TestAccPipeline_relayFailure(t *testing.T) {
	e := newAccEnv(t)
	e.needsFaults()
	f := e.newFixture("faulty")
	before := e.Inventory()
	e.run(t, e.CheckDestroy(f.name, before), []resource.TestStep{{
		// The events stay pending: destroy deletes them.
		Config: e.PipelineConfig(f.name, `
  force_destroy = true
  relay = {
    architecture            = "x86_64"
    batch_size              = 10
    maximum_retry_attempts  = 1
    bisect_on_error         = false
  }
  reconciler = {
    enabled = false
  }`),
		Check: func(st *terraform.State) error {
			records, err := e.writeDuringOutage(f.table, f.orders)
			if err != nil {
				return err
			}
			dlq := acctest.Sink{Env: e.Env, QueueURL: stateAttr(st, "dead_letter_queue_url")}
			c := sqs.NewFromConfig(e.Cfg)
			var failure string
			if err := acctest.Wait(e.Ctx, "the dead-letter queue receiving the failed batch", func() error {
				out, err := c.ReceiveMessage(e.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(dlq.QueueURL), WaitTimeSeconds: 1})
				if err != nil {
					return err
				}
				if len(out.Messages) == 0 {
					return fmt.Errorf("no message yet")
				}
				failure = aws.ToString(out.Messages[0].Body)
				return nil
			}); err != nil {
				return err
			}
			var meta struct {
				RequestContext struct {
					Condition string `json:"condition"`
				} `json:"requestContext"`
				DDBStreamBatchInfo struct {
					BatchSize int    `json:"batchSize"`
					StreamARN string `json:"streamArn"`
				} `json:"DDBStreamBatchInfo"`
			}
			if err := json.Unmarshal([]byte(failure), &meta); err != nil {
				return fmt.Errorf("the dead-letter record is not JSON: %s: %w", failure, err)
			}
			if meta.DDBStreamBatchInfo.BatchSize == 0 || meta.DDBStreamBatchInfo.StreamARN != stateAttr(st, "stream_arn") {
				return fmt.Errorf("the dead-letter record is not the mapping's failure record: %s", failure)
			}
			// Nothing is lost: every item is still pending, in the index.
			return e.WaitItems(f.table, records, "items still pending", func(item map[string]ddbtypes.AttributeValue) error {
				if err := pendingItem(item); err != nil {
					return err
				}
				if acctest.AttrS(item, "outboxPendingShard") == "" {
					return fmt.Errorf("is %v; want it in the index", item)
				}
				return nil
			})
		},
	}})
}

// TestAccPipeline_reconciler: after an outage of the target, the
// reconciler, fired as its schedule fires it, delivers every pending event.
func TestAccPipeline_reconciler(t *testing.T) {
	e := newAccEnv(t)
	if e.Stack != nil {
		if _, ok := e.Stack.Service("scheduler"); !ok {
			t.Skip("the local AWS stack does not serve EventBridge Scheduler yet: the reconciler cannot be created")
		}
	}
	e.needsFaults()
	d := e.newDelivery("recon")
	name, orders, table, s, before := d.name, d.orders, d.table, d.sink, d.before
	e.run(t, e.CheckDestroy(name, before), []resource.TestStep{{
		Config: e.PipelineConfig(name, `
  relay = {
    architecture           = "x86_64"
    maximum_retry_attempts = 0
    bisect_on_error        = false
  }
  reconciler = {
    schedule_expression = "rate(1 minute)"
    min_age_seconds     = 1
    timeout             = 60
  }`),
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(accResource, attrPath("schedule_arn"), knownvalue.NotNull()),
			statecheck.ExpectKnownValue(accResource, attrPath("reconciler_function_arn"), knownvalue.NotNull()),
		},
		Check: func(st *terraform.State) error {
			fault, err := e.Ctl.AddFault(e.Ctx, control.FaultRule{Service: "events", Operation: "PutEvents", Entry: true, Code: "InternalFailure", Message: "injected outage"})
			if err != nil {
				return err
			}
			records, err := e.WriteOrders(e.Writer(table), orders, "com.example.orders", 1, 3, false)
			if err != nil {
				return err
			}
			uuid := stateAttr(st, "event_source_mapping_uuid")
			if err := acctest.Wait(e.Ctx, "the mapping giving up on the batch", func() error {
				ms, err := e.Ctl.MappingStatus(e.Ctx, uuid)
				if err != nil {
					return err
				}
				if ms.Counters.OnFailureSent == 0 {
					return fmt.Errorf("nothing dead-lettered yet: %+v", ms.Counters)
				}
				return nil
			}); err != nil {
				return err
			}
			if err := e.Ctl.RemoveFault(e.Ctx, fault.ID); err != nil {
				return err
			}
			// One run republishes only what is pending and older than
			// min_age_seconds when it runs; a batch still failing then
			// leaves its items pending after it. Fire it, as its schedule
			// does, until every item is published.
			if err := acctest.Wait(e.Ctx, "the reconciler publishing every pending event", func() error {
				if err := fireSchedule(e, name+"-reconcile"); err != nil {
					return err
				}
				return e.CheckItems(table, records, acctest.PublishedWithTTL("expiresAt"))
			}); err != nil {
				return err
			}
			return e.receiveMarked(s, table, records)
		},
	}})
}

// fireSchedule runs a schedule once: it invokes the schedule's target with
// its input, and fails if the function does.
func fireSchedule(e *accEnv, name string) error {
	sch, err := scheduler.NewFromConfig(e.Cfg).GetSchedule(e.Ctx, &scheduler.GetScheduleInput{Name: aws.String(name)})
	if err != nil {
		return err
	}
	_, err = e.invokeReconciler(aws.ToString(sch.Target.Arn), aws.ToString(sch.Target.Input))
	return err
}

// TestAccPipeline_updates: mapping and function settings change in place
// (the mapping is kept); the architecture changes the relay package in
// place; a new name replaces the pipeline.
func TestAccPipeline_updates(t *testing.T) {
	e := newAccEnv(t)
	name := e.Name("upd")
	before := e.Snapshot()
	mappingKept := statecheck.CompareValue(compare.ValuesSame())
	body := func(batch int, memory int, arch, prefix string) string {
		return fmt.Sprintf(`
  relay = {
    architecture = %q
    batch_size   = %d
    memory_size  = %d
  }
  table = {
    sort_key_prefix = %q
  }
  reconciler = {
    enabled = false
  }`, arch, batch, memory, prefix)
	}
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate)}}
	e.run(t, e.CheckDestroy(e.Name("upd2"), before), []resource.TestStep{
		{
			Config:            e.PipelineConfig(name, body(100, 256, "x86_64", "OUTBOX#")),
			ConfigStateChecks: []statecheck.StateCheck{mappingKept.AddStateValue(accResource, attrPath("event_source_mapping_uuid"))},
		},
		{
			Config:           e.PipelineConfig(name, body(25, 512, "x86_64", "EVT#")),
			ConfigPlanChecks: update,
			ConfigStateChecks: []statecheck.StateCheck{
				mappingKept.AddStateValue(accResource, attrPath("event_source_mapping_uuid")),
				statecheck.ExpectKnownValue(accResource, attrPath("relay.batch_size"), knownvalue.Int64Exact(25)),
			},
			Check: func(*terraform.State) error {
				out, err := lambda.NewFromConfig(e.Cfg).GetFunctionConfiguration(e.Ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(name + "-relay")})
				if err != nil {
					return err
				}
				if aws.ToInt32(out.MemorySize) != 512 || out.Environment.Variables["OUTBOX_SORT_KEY_PREFIX"] != "EVT#" {
					return fmt.Errorf("the relay function was not updated: memory %d, env %v", aws.ToInt32(out.MemorySize), out.Environment.Variables)
				}
				return nil
			},
		},
		{
			Config:           e.PipelineConfig(name, body(25, 512, "arm64", "EVT#")),
			ConfigPlanChecks: update,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("relay_package_sha256"), knownvalue.StringExact(acctest.RelaySHA(t, "arm64"))),
			},
		},
		{
			Config: e.PipelineConfig(e.Name("upd2"), body(25, 512, "arm64", "EVT#")),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionDestroyBeforeCreate),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("table_name"), knownvalue.StringExact(e.Name("upd2")+"-outbox")),
			},
		},
	})
}

// TestAccPipeline_import imports a pipeline by name: the imported state
// matches, and a plan with an import block is empty.
func TestAccPipeline_import(t *testing.T) {
	e := newAccEnv(t)
	name := e.Name("imp")
	before := e.Snapshot()
	config := e.PipelineConfig(name, `
  relay = {
    architecture           = "x86_64"
    batch_size             = 50
    maximum_retry_attempts = 3
    log_retention_days     = 7
  }
  published = {
    action   = "mark"
    ttl_days = 7
  }
  pending_index = {
    shards = 8
  }
  dead_letter = {
    message_retention_seconds = 86400
  }
  reconciler = {
    enabled = false
  }
  tags = { team = "imports" }`)
	e.run(t, e.CheckDestroy(name, before), []resource.TestStep{
		{Config: config},
		importStep(config, accResource, name),
		importBlockStep(config, accResource, name),
		{
			// terraform plan -generate-config-out writes a
			// configuration that imports with no change.
			Config:          e.ProviderConfig(),
			ResourceName:    accResource,
			ImportState:     true,
			ImportStateKind: resource.ImportBlockWithID,
			ImportStateId:   name,
			GenerateConfig:  true,
		},
	})
}

// TestAccPipeline_drift: components deleted out of band make the next
// plan an update that repairs them, after which delivery works again; a
// pipeline deleted entirely is planned for creation.
func TestAccPipeline_drift(t *testing.T) {
	e := newAccEnv(t)
	d := e.newDelivery("drift")
	name, orders, table, s, before := d.name, d.orders, d.table, d.sink, d.before
	config := e.PipelineConfig(name, fastRelay)
	lc := lambda.NewFromConfig(e.Cfg)
	var mappingUUID string
	repair := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectNonEmptyPlan(),
		plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
	}}
	e.run(t, e.CheckDestroy(name, before), []resource.TestStep{
		{
			Config: config,
			Check: func(st *terraform.State) error {
				mappingUUID = stateAttr(st, "event_source_mapping_uuid")
				return e.deliverMarked(s, table, orders, 1, 2)(st)
			},
		},
		{
			PreConfig:        func() { deleteMapping(t, e, lc, mappingUUID) },
			Config:           config,
			ConfigPlanChecks: repair,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("event_source_mapping_uuid"), knownvalue.NotNull()),
			},
			Check: resource.ComposeTestCheckFunc(
				func(st *terraform.State) error {
					if got := stateAttr(st, "event_source_mapping_uuid"); got == mappingUUID {
						return fmt.Errorf("the mapping was not recreated")
					}
					return nil
				},
				e.deliverMarked(s, table, orders, 10, 2),
			),
		},
		{
			PreConfig: func() {
				if _, err := lc.DeleteFunction(e.Ctx, &lambda.DeleteFunctionInput{FunctionName: aws.String(name + "-relay")}); err != nil {
					t.Fatalf("deleting the relay function out of band: %v", err)
				}
			},
			Config:           config,
			ConfigPlanChecks: repair,
			Check:            e.deliverMarked(s, table, orders, 20, 2),
		},
		// An empty plan once repaired.
		emptyPlanStep(config),
		{
			PreConfig: func() { deletePipeline(t, e, name) },
			Config:    config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionCreate),
			}},
			Check: e.deliverMarked(s, table, orders, 30, 2),
		},
	})
}

// deleteMapping deletes an event source mapping out of band and waits
// until it is gone.
func deleteMapping(t *testing.T, e *accEnv, lc *lambda.Client, uuid string) {
	t.Helper()
	e.deleteOutOfBand(t, "the mapping", sdkCall(e.Ctx, lc.DeleteEventSourceMapping, &lambda.DeleteEventSourceMappingInput{UUID: aws.String(uuid)}),
		sdkCall(e.Ctx, lc.GetEventSourceMapping, &lambda.GetEventSourceMappingInput{UUID: aws.String(uuid)}))
}

// deletePipeline deletes every component of a pipeline out of band.
func deletePipeline(t *testing.T, e *accEnv, name string) {
	t.Helper()
	c := provision.New(e.Cfg, provision.RelayCode{Zip: relaypackage.Zip, SHA256: relaypackage.SHA256})
	_, st, err := c.Lookup(e.Ctx, name)
	if err != nil {
		t.Fatalf("finding the pipeline: %v", err)
	}
	if _, err := c.Delete(e.Ctx, st); err != nil {
		t.Fatalf("deleting the pipeline out of band: %v", err)
	}
}

// words turns a message into a pattern that tolerates Terraform's line
// wrapping of diagnostics.
func words(msg string) *regexp.Regexp {
	parts := strings.Fields(msg)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(strings.Join(parts, `\s+`))
}

// TestAccPipeline_invalid: bad configurations fail at plan, each with a
// message naming the attribute and the fix.
func TestAccPipeline_invalid(t *testing.T) {
	e := newAccEnv(t)
	var steps []resource.TestStep
	for _, c := range invalidPipelines {
		steps = append(steps, resource.TestStep{
			Config:      e.PipelineConfig(c.name, "  "+c.body),
			PlanOnly:    true,
			ExpectError: words(c.want),
		})
	}
	e.run(t, nil, steps)
}

// invalidPipelines are the configurations of TestAccPipeline_invalid: a
// name, a body, and the message expected at plan.
var invalidPipelines = []struct {
	name, body, want string
}{
	{"bad name!", ``, `name "bad name!" has characters that Lambda and IAM names do not allow: use letters, digits`},
	{strings.Repeat("n", 60), ``, `name is 60 characters long: use at most 53 characters`},
	{"p", `relay = { batch_size = 0 }`, `relay.batch_size is 0: use 1 to 10000`},
	{"p", `relay = { batching_window_seconds = 301 }`, `relay.batching_window_seconds is 301: use 0 to 300 seconds`},
	{"p", `relay = { parallelization_factor = 11 }`, `relay.parallelization_factor is 11: use 1 to 10`},
	{"p", `relay = { maximum_retry_attempts = -2 }`, `relay.maximum_retry_attempts is -2: use -1 (retry until the record expires) to 10000`},
	{"p", `relay = { maximum_record_age_seconds = 30 }`, `relay.maximum_record_age_seconds is 30: use -1 (no limit) or 60 to 604800 seconds`},
	{"p", `relay = { memory_size = 64 }`, `relay.memory_size is 64: use 128 to 10240 MB`},
	{"p", `relay = { timeout = 901 }`, `relay.timeout is 901: use 1 to 900 seconds`},
	{"p", `relay = { architecture = "sparc" }`, `relay.architecture is "sparc": use "arm64" or "x86_64"`},
	{"p", `relay = { log_retention_days = 2 }`, `relay.log_retention_days is 2: use one of 1, 3, 5, 7, 14`},
	{"p", `published = { action = "archive" }`, `published.action is "archive": use "mark" or "delete"`},
	{"p", `published = { ttl_days = -1 }`, `published.ttl_days is -1: use 0 (keep published items forever) or more days`},
	{"p", `pending_index = { shards = 300 }`, `pending_index.shards is 300: use 1 to 256`},
	{"p", `reconciler = { schedule_expression = "every 5 minutes" }`, `reconciler.schedule_expression "every 5 minutes" is neither a rate, a cron nor an at expression: use "rate(5 minutes)"`},
	{"p", `reconciler = { schedule_expression = "rate(1 minute)" }`, `reconciler.schedule_expression is "rate(1 minute)", every 60 seconds, shorter than the reconciler's timeout (300 seconds): a run could start before the previous one ends: use an interval of at least the timeout, such as "rate(5 minutes)", or lower the reconciler's timeout to at most 60 seconds`},
	{"p", `reconciler = { min_age_seconds = 0 }`, `reconciler.min_age_seconds is 0: use 1 or more seconds, longer than the stream's usual delivery delay`},
	{"p", `reconciler = { min_age_seconds = -5 }`, `reconciler.min_age_seconds is -5: use 1 or more seconds`},
	{"p", `table = { name = "" }`, `table.name is empty: remove it to use the default, or set a value`},
	{"p", `pending_index = { shards = 0 }`, `pending_index.shards is 0: use 1 to 256`},
	{"p", `dead_letter = { message_retention_seconds = 30 }`, `dead_letter.message_retention_seconds is 30: use 60 to 1209600 seconds (14 days)`},
	{"p", `relay = { tracing_mode = "On" }`, `relay.tracing_mode is "On": use "PassThrough" or "Active"`},
	{"p", `relay = {
    logging = { application_log_level = "DEBUG" }
  }`, `relay.logging.application_log_level is set with the Text log format: set the log format to "JSON"`},
	{"p", `relay = {
    vpc_config = { subnet_ids = ["subnet-0a1"] }
  }`, `relay.vpc_config.subnet_ids has 1 subnets and 0 security groups: set both subnet_ids and security_group_ids, or neither`},
	{"p", `iam = { path = "outbox" }`, `iam.path is "outbox": use a path that begins and ends with "/"`},
	{"p", `iam = { permissions_boundary = "boundary" }`, `iam.permissions_boundary is "boundary": use the ARN of a managed policy`},
	{"p", `reconciler = { schedule_timezone = "Mars/Olympus" }`, `reconciler.schedule_timezone is "Mars/Olympus": use an IANA time zone`},
	{"p", `reconciler = { flexible_time_window_minutes = 1441 }`, `reconciler.flexible_time_window_minutes is 1441: use 0 (run exactly on schedule) to 1440 minutes`},
	{"p", `table = {
    existing    = true
    name        = "app"
    kms_key_arn = "arn:aws:kms:us-east-1:123456789012:key/abc"
  }`, `table.kms_key_arn is set for an adopted table: remove it`},
	{"p", `target = {
    event_bus = "orders"
    topic_arn = "arn:aws:sns:us-east-1:123456789012:orders"
  }`, `Attribute "target.topic_arn" cannot be specified when "target.event_bus" is specified`},
	{"p", `target = {
    topic_arn = "arn:aws:sns:us-east-1:123456789012:orders"
    queue_arn = "arn:aws:sqs:us-east-1:123456789012:orders"
  }`, `Attribute "target.queue_arn" cannot be specified when "target.topic_arn" is specified`},
	{"p", `target = { topic_arn = "orders" }`, `target.topic_arn is "orders", not an SNS topic ARN: use an ARN such as`},
	{"p", `target = { queue_arn = "arn:aws:sns:us-east-1:123456789012:orders" }`, `target.queue_arn is "arn:aws:sns:us-east-1:123456789012:orders", not an SQS queue ARN: use an ARN such as "arn:aws:sqs:`},
	{"p", `target = { event_bus = "bad bus" }`, `target.event_bus is "bad bus", not an event bus name or ARN: use a bus name such as "default" or an ARN`},
	{"p", `table = { existing = true }`, `table.name is required with table.existing = true: name the existing table to adopt`},
	{"p", `table = {
    partition_key = "id"
    sort_key      = "id"
  }`, `table.sort_key equals the partition key ("id"): use two different key attribute names`},
	{"p", `table = { sort_key_prefix = " " }`, `table.sort_key_prefix is blank`},
	{"p", `tags = { "aws:owner" = "me" }`, `tags has the key "aws:owner": remove the key: the "aws:" prefix is reserved by AWS`},
	{"p", `alarms = { relay_errors_threshold = 0 }`, `alarms.relay_errors_threshold is 0: use 1 or more errors per minute`},
	{"p", `alarms = { sns_topic_arn = "alerts" }`, `alarms.sns_topic_arn is "alerts": use an SNS topic ARN such as`},
	{"p", `alarms = { iterator_age_threshold_seconds = 90000 }`, `alarms.iterator_age_threshold_seconds is 90000: use 1 to 86400 seconds: a stream keeps records 24 hours`},
	{"p", `alarms = { treat_missing_data = "ok" }`, `alarms.treat_missing_data is "ok": use "breaching", "notBreaching", "ignore" or "missing"`},
	{"p", `alarms = { oldest_pending_age_threshold_seconds = 120 }`, `alarms.oldest_pending_age_threshold_seconds is 120: use more than the reconciler's min age (300 seconds)`},
	{"p", `relay = { timeout = 1.5 }`, `relay.timeout is 1.5: it must be a whole number, such as 1 or 2`},
	{"p", `relay = { reserved_concurrency = 0 }`, `relay.reserved_concurrency is 0: use 1 or more, or leave it unset for unreserved concurrency`},
	{"p", `reconciler = { schedule_expression = "rate(1 minutes)" }`, `reconciler.schedule_expression "rate(1 minutes)" has a plural unit for a value of 1: write "rate(1 minute)"`},
	{"p", `reconciler = { schedule_expression = "rate(10 minute)" }`, `reconciler.schedule_expression "rate(10 minute)" has a singular unit for a value other than 1: write "rate(10 minutes)"`},
	{"p", `reconciler = { schedule_expression = "cron(0 * * * *)" }`, `reconciler.schedule_expression "cron(0 * * * *)" has 5 fields: use the six fields`},
	{"p", `reconciler = { schedule_expression = "cron(0 25 * * ? *)" }`, `reconciler.schedule_expression "cron(0 25 * * ? *)" has "25" in the hours field: use 0 to 23`},
	{"p", `table = { ttl_attribute = "PK" }`, `table.ttl_attribute "PK" is a key attribute of the table: use an attribute that is not a key`},
	// Every invalid value is reported at once: both of these.
	{"p", `relay = {
    batch_size  = 0
    memory_size = 64
  }`, `relay.batch_size is 0: use 1 to 10000`},
	{"p", `relay = {
    batch_size  = 0
    memory_size = 64
  }`, `relay.memory_size is 64: use 128 to 10240 MB`},
	{"p", `alarms = { evaluation_periods = 2000 }`, `alarms.evaluation_periods is 2000: use 1 to 1440 one-minute periods`},
}

// A check that compares two settings waits for apply when one of them is
// known only then: here the reconciler's timeout comes from another
// resource, so a short schedule cannot be judged at plan time.
func TestAccPipeline_unknownAtPlan(t *testing.T) {
	e := newAccEnv(t)
	config := e.ProviderConfig() + `
resource "terraform_data" "timeout" {
  input = 50
}

resource "outbox_pipeline" "test" {
  name = "p"
  reconciler = {
    schedule_expression = "rate(1 minute)"
    timeout             = terraform_data.timeout.output
  }
  alarms = {
    oldest_pending_age_threshold_seconds = 120
  }
}
`
	e.run(t, nil, []resource.TestStep{{
		Config:             strings.Replace(config, "  alarms = {\n    oldest_pending_age_threshold_seconds = 120\n  }\n", "", 1),
		PlanOnly:           true,
		ExpectNonEmptyPlan: true,
	}, {
		// With the timeout known, a conflict is reported at plan.
		Config:      strings.Replace(config, "terraform_data.timeout.output", "50", 1),
		PlanOnly:    true,
		ExpectError: words(`alarms.oldest_pending_age_threshold_seconds is 120: use more than the reconciler's min age (300 seconds)`),
	}})
}

// TestAccPipeline_unknownObjectAtPlan: whole objects known only at apply
// (table = terraform_data.x.output) plan unknown, with what follows from
// them; the other objects plan their defaults; checks against an unknown
// object (the alarms' threshold against the reconciler's min age) wait for
// apply, which applies the values.
func TestAccPipeline_unknownObjectAtPlan(t *testing.T) {
	e := newAccEnv(t)
	name := e.Name("unk")
	config := e.ProviderConfig() + fmt.Sprintf(`
resource "terraform_data" "table" {
  input = { sort_key_prefix = "EVT#" }
}

resource "terraform_data" "reconciler" {
  input = { min_age_seconds = 60, schedule_expression = "rate(10 minutes)" }
}

resource "outbox_pipeline" "test" {
  name       = %q
  table      = terraform_data.table.output
  reconciler = terraform_data.reconciler.output
  relay      = { architecture = "x86_64" }
  alarms = {
    oldest_pending_age_threshold_seconds = 120
  }
}
`, name)
	e.run(t, nil, []resource.TestStep{{
		Config: config,
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
			plancheck.ExpectUnknownValue(accResource, attrPath("table")),
			plancheck.ExpectUnknownValue(accResource, attrPath("reconciler")),
			plancheck.ExpectUnknownValue(accResource, attrPath("writer.sort_key_prefix")),
			plancheck.ExpectKnownValue(accResource, attrPath("relay.batch_size"), knownvalue.Int64Exact(provision.DefaultBatchSize)),
			plancheck.ExpectKnownValue(accResource, attrPath("published.ttl_days"), knownvalue.Int64Exact(30)),
		}},
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(accResource, attrPath("table.sort_key_prefix"), knownvalue.StringExact("EVT#")),
			statecheck.ExpectKnownValue(accResource, attrPath("table.partition_key"), knownvalue.StringExact("PK")),
			statecheck.ExpectKnownValue(accResource, attrPath("reconciler.min_age_seconds"), knownvalue.Int64Exact(60)),
			statecheck.ExpectKnownValue(accResource, attrPath("reconciler.timeout"), knownvalue.Int64Exact(provision.DefaultReconcilerTimeout)),
			statecheck.ExpectKnownValue(accResource, attrPath("writer.sort_key_prefix"), knownvalue.StringExact("EVT#")),
		},
	}})
}

// emptyPlanStep checks that config plans no change: what the steps before
// applied reads back as configured.
func emptyPlanStep(config string) resource.TestStep {
	return resource.TestStep{
		Config:           config,
		ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}},
	}
}

// importStep imports res by id (`terraform import`) with config and checks
// that the state read matches the state before, but for the attributes
// ignored.
func importStep(config, res, id string, ignored ...string) resource.TestStep {
	return resource.TestStep{
		Config: config, ResourceName: res, ImportState: true, ImportStateId: id,
		ImportStateVerify: true, ImportStateVerifyIgnore: ignored,
	}
}

// importBlockStep imports res by id with an import block added to config:
// the plan imports it with no change.
func importBlockStep(config, res, id string) resource.TestStep {
	return resource.TestStep{Config: config, ResourceName: res, ImportState: true, ImportStateKind: resource.ImportBlockWithID, ImportStateId: id}
}

// deliverMarked writes n orders numbered from `from` and checks that their
// events arrive at s and that their items end marked PUBLISHED.
func (e *accEnv) deliverMarked(s acctest.Sink, table outbox.Table, orders string, from, n int) resource.TestCheckFunc {
	return e.Deliver(s, table, orders, from, n, "items marked PUBLISHED", acctest.PublishedWithTTL("expiresAt"))
}

// waitMarked waits until the items of records in table are marked
// PUBLISHED.
func (e *accEnv) waitMarked(table outbox.Table, records []outbox.Record) error {
	return e.WaitItems(table, records, "items marked PUBLISHED", acctest.PublishedWithTTL("expiresAt"))
}

// fixture is what a test of a pipeline starts from: the pipeline's name,
// its dedicated table, and the application's orders table (created).
type fixture struct {
	name, orders string
	table        outbox.Table
}

func (e *accEnv) newFixture(base string) fixture {
	f := fixture{name: e.Name(base), orders: e.Name("acc-orders")}
	f.table = outbox.Table{Name: f.name + "-outbox"}
	e.CreateAppTable(f.orders, "")
	return f
}

// needsFaults skips the test where the local stack's control API, which
// injects faults, is missing: on AWS.
func (e *accEnv) needsFaults() {
	e.T.Helper()
	if e.Ctl == nil {
		e.T.Skip("fault injection needs the local stack's control API")
	}
}

// delivery is what a test of delivery starts from: the fixture, a sink of
// the default bus for the orders' events, and the inventory before the
// pipeline (for CheckDestroy).
type delivery struct {
	fixture
	sink   acctest.Sink
	before map[string][]string
}

func (e *accEnv) newDelivery(base string) delivery {
	d := delivery{fixture: e.newFixture(base)}
	d.sink = e.NewBusSink("com.example.orders")
	d.before = e.Snapshot()
	return d
}
