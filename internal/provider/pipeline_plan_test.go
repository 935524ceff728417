package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// TestAccPipeline_rename: renaming the minimal pipeline (only name) plans a
// replacement, with the names that follow from name and the writer's
// settings known at plan time.
func TestAccPipeline_rename(t *testing.T) {
	e := newAccEnv(t)
	first, second := e.Name("ren1"), e.Name("ren2")
	minimal := func(name string) string {
		return e.ProviderConfig() + fmt.Sprintf("resource \"outbox_pipeline\" \"test\" {\n  name = %q\n}\n", name)
	}
	known := func(name string) []plancheck.PlanCheck {
		return []plancheck.PlanCheck{
			plancheck.ExpectKnownValue(accResource, attrPath("id"), knownvalue.StringExact(name)),
			plancheck.ExpectKnownValue(accResource, attrPath("relay_function_name"), knownvalue.StringExact(name+"-relay")),
			plancheck.ExpectKnownValue(accResource, attrPath("relay_log_group"), knownvalue.StringExact("/aws/lambda/"+name+"-relay")),
			plancheck.ExpectKnownValue(accResource, attrPath("reconciler_log_group"), knownvalue.StringExact("/aws/lambda/"+name+"-reconciler")),
			plancheck.ExpectKnownValue(accResource, attrPath("ttl_attribute_in_use"), knownvalue.StringExact("expiresAt")),
			// The account is the credentials' (STS GetCallerIdentity).
			plancheck.ExpectKnownValue(accResource, attrPath("relay_function_arn"), knownvalue.StringRegexp(regexp.MustCompile(`^arn:aws:lambda:us-east-1:\d{12}:function:`+name+`-relay$`))),
			plancheck.ExpectKnownValue(accResource, attrPath("table_arn"), knownvalue.StringRegexp(regexp.MustCompile(`^arn:aws:dynamodb:us-east-1:\d{12}:table/`+name+`-outbox$`))),
			plancheck.ExpectKnownValue(accResource, attrPath("target_arn"), knownvalue.StringRegexp(regexp.MustCompile(`^arn:aws:events:us-east-1:\d{12}:event-bus/default$`))),
			plancheck.ExpectKnownValue(accResource, attrPath("writer"), knownvalue.ObjectExact(map[string]knownvalue.Check{
				"table_name":           knownvalue.StringExact(name + "-outbox"),
				"partition_key":        knownvalue.StringExact("PK"),
				"sort_key":             knownvalue.StringExact("SK"),
				"sort_key_prefix":      knownvalue.StringExact("OUTBOX#"),
				"pending_index_name":   knownvalue.StringExact("outbox-pending"),
				"pending_index_shards": knownvalue.Int64Exact(16),
				"ttl_attribute":        knownvalue.StringExact("expiresAt"),
				// Without claim_check there is no bucket to write to.
				"claim_bucket":      knownvalue.Null(),
				"claim_kms_key_arn": knownvalue.Null(),
			})),
		}
	}
	e.run(t, nil, []resource.TestStep{
		{
			Config:           minimal(first),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: known(first)},
		},
		{
			Config: minimal(second),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: append(known(second),
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionDestroyBeforeCreate),
			)},
		},
	})
}

// TestAccPipeline_tableDrift: a table deleted out of band is recreated by
// the next apply with no inconsistent result, and what depends on the
// pipeline's target_arn (which does not change) is not replaced.
func TestAccPipeline_tableDrift(t *testing.T) {
	e := newAccEnv(t)
	name := e.Name("tdrift")
	// Deletion protection off, so that the table can be deleted out of band.
	config := e.PipelineConfig(name, fastRelay+`
  table = {
    deletion_protection = false
  }`) + `
resource "terraform_data" "dependent" {
  triggers_replace = [outbox_pipeline.test.target_arn, outbox_pipeline.test.table_arn, outbox_pipeline.test.writer]
}
`
	ddb := dynamodb.NewFromConfig(e.Cfg)
	e.run(t, nil, []resource.TestStep{
		{Config: config},
		{
			PreConfig: func() { e.deleteTable(t, ddb, name+"-outbox") },
			Config:    config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
				plancheck.ExpectResourceAction("terraform_data.dependent", plancheck.ResourceActionNoop),
				plancheck.ExpectUnknownValue(accResource, attrPath("stream_arn")),
				plancheck.ExpectKnownValue(accResource, attrPath("ttl_attribute_in_use"), knownvalue.StringExact("expiresAt")),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("stream_arn"), knownvalue.NotNull()),
			},
		},
		emptyPlanStep(config),
	})
}

// expectChange is a plan check of one attribute of a block of the
// pipeline's planned change (a top-level attribute without block; a nested
// block dotted, as "claim_check.bucket_settings"): its value before and
// after.
type expectChange struct {
	block, attr   string
	before, after any
}

func (c expectChange) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != accResource {
			continue
		}
		get := func(v any) any {
			m, _ := v.(map[string]any)
			for _, b := range strings.FieldsFunc(c.block, func(r rune) bool { return r == '.' }) {
				m, _ = m[b].(map[string]any)
			}
			return m[c.attr]
		}
		before, after := get(rc.Change.Before), get(rc.Change.After)
		if fmt.Sprint(before) != fmt.Sprint(c.before) || fmt.Sprint(after) != fmt.Sprint(c.after) {
			resp.Error = fmt.Errorf("%s.%s: planned %v -> %v, want %v -> %v", c.block, c.attr, before, after, c.before, c.after)
		}
		return
	}
	resp.Error = fmt.Errorf("no change of %s planned", accResource)
}

// TestAccPipeline_driftShown: a mapping's batch_size changed by hand plans
// its restoration from the observed value, with the mapping's UUID
// unchanged, and the apply restores it.
func TestAccPipeline_driftShown(t *testing.T) {
	e := newAccEnv(t)
	name := e.Name("shown")
	config := e.PipelineConfig(name, fastRelay)
	lc := lambda.NewFromConfig(e.Cfg)
	var uuid string
	e.run(t, nil, []resource.TestStep{
		{
			Config: config,
			Check: func(st *terraform.State) error {
				uuid = stateAttr(st, "event_source_mapping_uuid")
				return nil
			},
		},
		{
			PreConfig: func() {
				// As a change made by hand, long before the next apply:
				// the mapping is enabled again.
				change := sdkCall(e.Ctx, lc.UpdateEventSourceMapping, &lambda.UpdateEventSourceMappingInput{UUID: aws.String(uuid), BatchSize: aws.Int32(5)})
				e.outOfBand(t, "changing the mapping", change, "the mapping enabled again", func() error {
					out, err := lc.GetEventSourceMapping(e.Ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String(uuid)})
					if err != nil || aws.ToString(out.State) != "Enabled" {
						return fmt.Errorf("state %v: %w", out, err)
					}
					return nil
				})
			},
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
				expectChange{block: "relay", attr: "batch_size", before: 5, after: 10},
				plancheck.ExpectKnownValue(accResource, attrPath("event_source_mapping_uuid"), knownvalue.NotNull()),
			}},
		},
		{
			// A change that no setting shows (the function's
			// environment) still plans an update that repairs it.
			PreConfig: func() {
				changeFunction(t, e, lc, &lambda.UpdateFunctionConfigurationInput{
					FunctionName: aws.String(name + "-relay"), Environment: &lambdatypes.Environment{Variables: map[string]string{"CHANGED": "by hand"}},
				})
			},
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
			}},
		},
		{
			// A control of the functions changed by hand is shown too.
			PreConfig: func() {
				changeFunction(t, e, lc, &lambda.UpdateFunctionConfigurationInput{
					FunctionName: aws.String(name + "-relay"), TracingConfig: &lambdatypes.TracingConfig{Mode: lambdatypes.TracingModeActive},
				})
			},
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
				expectChange{block: "relay", attr: "tracing_mode", before: "Active", after: "PassThrough"},
			}},
		},
		emptyPlanStep(config),
	})
}

// changeFunction changes a function's configuration out of band and waits
// until the update is done.
func changeFunction(t *testing.T, e *accEnv, lc *lambda.Client, in *lambda.UpdateFunctionConfigurationInput) {
	t.Helper()
	e.outOfBand(t, "changing the function", sdkCall(e.Ctx, lc.UpdateFunctionConfiguration, in), "the function updated", func() error {
		out, err := lc.GetFunctionConfiguration(e.Ctx, &lambda.GetFunctionConfigurationInput{FunctionName: in.FunctionName})
		if err != nil || out.LastUpdateStatus != lambdatypes.LastUpdateStatusSuccessful {
			return fmt.Errorf("function %v: %w", out, err)
		}
		return nil
	})
}

// deleteTable deletes a table out of band and waits until it is gone.
func (e *accEnv) deleteTable(t *testing.T, ddb *dynamodb.Client, name string) {
	t.Helper()
	e.deleteOutOfBand(t, "the table", sdkCall(e.Ctx, ddb.DeleteTable, &dynamodb.DeleteTableInput{TableName: aws.String(name)}),
		sdkCall(e.Ctx, ddb.DescribeTable, &dynamodb.DescribeTableInput{TableName: aws.String(name)}))
}

// deleteOutOfBand deletes a component (what) out of band with del, and
// waits until it is gone: until get fails.
func (e *accEnv) deleteOutOfBand(t *testing.T, what string, del, get func() error) {
	t.Helper()
	e.outOfBand(t, "deleting "+what, del, what+" gone", func() error {
		if get() == nil {
			return fmt.Errorf("still there")
		}
		return nil
	})
}

// sdkCall is the AWS SDK call op with input in, as a function that returns
// only its error.
func sdkCall[In, Out, Options any](ctx context.Context, op func(context.Context, In, ...func(*Options)) (Out, error), in In) func() error {
	return func() error {
		_, err := op(ctx, in)
		return err
	}
}

// outOfBand makes a change by hand (what names it in the failure) and
// waits until done, which settled names, reports no error.
func (e *accEnv) outOfBand(t *testing.T, what string, change func() error, settled string, done func() error) {
	t.Helper()
	if err := change(); err != nil {
		t.Fatalf("%s out of band: %v", what, err)
	}
	if err := acctest.Wait(e.Ctx, settled, done); err != nil {
		t.Fatal(err)
	}
}

// TestAccPipeline_defaultsAtPlan: with only name set, the settings of every
// object are readable at plan (they are the objects of their defaults) and
// after apply; an import of the same configuration plans no change.
func TestAccPipeline_defaultsAtPlan(t *testing.T) {
	e := newAccEnv(t)
	name := e.Name("dflt")
	config := e.ProviderConfig() + fmt.Sprintf(`
resource "outbox_pipeline" "test" {
  name = %q
}

output "settings" {
  value = {
    sort_key_prefix     = outbox_pipeline.test.table.sort_key_prefix
    batch_size          = outbox_pipeline.test.relay.batch_size
    log_format          = outbox_pipeline.test.relay.logging.log_format
    schedule_expression = outbox_pipeline.test.reconciler.schedule_expression
    ttl_days            = outbox_pipeline.test.published.ttl_days
    shards              = outbox_pipeline.test.pending_index.shards
    retention           = outbox_pipeline.test.dead_letter.message_retention_seconds
    iam_path            = outbox_pipeline.test.iam.path
    no_alarms           = outbox_pipeline.test.alarms == null
  }
}
`, name)
	want := knownvalue.ObjectExact(map[string]knownvalue.Check{
		"sort_key_prefix":     knownvalue.StringExact("OUTBOX#"),
		"batch_size":          knownvalue.Int64Exact(provision.DefaultBatchSize),
		"log_format":          knownvalue.StringExact(provision.DefaultLogFormat),
		"schedule_expression": knownvalue.StringExact(provision.DefaultScheduleExpression),
		"ttl_days":            knownvalue.Int64Exact(30),
		"shards":              knownvalue.Int64Exact(16),
		"retention":           knownvalue.Int64Exact(provision.DefaultQueueRetentionSeconds),
		"iam_path":            knownvalue.StringExact("/"),
		"no_alarms":           knownvalue.Bool(true),
	})
	e.run(t, nil, []resource.TestStep{
		{
			Config:            config,
			ConfigPlanChecks:  resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectKnownOutputValue("settings", want)}},
			ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectKnownOutputValue("settings", want)},
		},
		// The import reads whole objects: the minimal
		// configuration plans no change.
		importBlockStep(config, accResource, name),
		importStep(config, accResource, name),
	})
}

// The mapping's settings are shown only from the mapping that Read
// observed: one that Lookup did not find (or found another of) shows none.
func TestFoundChanged(t *testing.T) {
	t.Parallel()
	changed := []string{provision.ComponentMapping, provision.ComponentTable}
	observed := provision.State{MappingUUID: "a"}
	if got := foundChanged(changed, observed, provision.State{MappingUUID: "a"}); len(got) != 2 {
		t.Errorf("same mapping: %v, want both components", got)
	}
	for _, other := range []string{"", "b"} {
		if got := foundChanged(changed, observed, provision.State{MappingUUID: other}); len(got) != 1 || got[0] != provision.ComponentTable {
			t.Errorf("mapping %q found: %v, want the table only", other, got)
		}
	}
	if len(changed) != 2 {
		t.Errorf("the argument changed: %v", changed)
	}
}
