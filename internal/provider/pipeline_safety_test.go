package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// checkTableProtection checks the deletion protection and point-in-time
// recovery of the table.
func (e *accEnv) checkTableProtection(table string, protection, pitr bool) resource.TestCheckFunc {
	return func(*terraform.State) error {
		c := dynamodb.NewFromConfig(e.Cfg)
		d, err := c.DescribeTable(e.Ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			return err
		}
		b, err := c.DescribeContinuousBackups(e.Ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String(table)})
		if err != nil {
			return err
		}
		gotPITR := b.ContinuousBackupsDescription.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus == ddbtypes.PointInTimeRecoveryStatusEnabled
		if aws.ToBool(d.Table.DeletionProtectionEnabled) != protection || gotPITR != pitr {
			return fmt.Errorf("table %s: deletion protection %t, point-in-time recovery %t; want %t, %t",
				table, aws.ToBool(d.Table.DeletionProtectionEnabled), gotPITR, protection, pitr)
		}
		return nil
	}
}

// TestAccPipeline_destroyKeepsUndeliveredEvents: with events pending (the
// target fails), neither a replacement nor a destroy deletes the table; with
// force_destroy applied, destroy goes through. Deletion protection and
// point-in-time recovery are on by default and change in place.
func TestAccPipeline_destroyKeepsUndeliveredEvents(t *testing.T) {
	e := newAccEnv(t)
	e.needsFaults()
	f := e.newFixture("guarded")
	name := f.name
	before := e.Inventory()
	pending := e.pendingOrders(f.table, f.orders)
	e.run(t, e.CheckDestroy(name, before), []resource.TestStep{
		{
			Config: e.PipelineConfig(name, fastRelay),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("force_destroy"), knownvalue.Bool(false)),
			},
			Check: resource.ComposeTestCheckFunc(e.checkTableProtection(name+"-outbox", true, true), pending),
		},
		{
			// A replacement deletes the table: refused.
			Config: e.PipelineConfig(name, fastRelay+`
  table = {
    partition_key = "pk"
  }`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionDestroyBeforeCreate),
			}},
			ExpectError: regexp.MustCompile(`holds 3 PENDING\s+and\s+0\s+FAILED\s+events(.|\s)*outbox\s+drain`),
		},
		{
			Config:      e.PipelineConfig(name, fastRelay),
			Destroy:     true,
			ExpectError: regexp.MustCompile(`holds 3 PENDING\s+and\s+0\s+FAILED\s+events(.|\s)*force_destroy\s+=\s+true`),
		},
		// Nothing was deleted: the pipeline is as it was.
		emptyPlanStep(e.PipelineConfig(name, fastRelay)),
		{
			Config: e.PipelineConfig(name, fastRelay+`
  force_destroy = true
  table = {
    deletion_protection    = false
    point_in_time_recovery = false
  }`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
			}},
			Check: e.checkTableProtection(name+"-outbox", false, false),
		},
		{
			// Back on, in place; destroy then deletes the pending events.
			Config: e.PipelineConfig(name, fastRelay+`
  force_destroy = true`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
			}},
			Check: e.checkTableProtection(name+"-outbox", true, true),
		},
	})
}

// pendingOrders writes three orders while the bus fails, and waits until
// their events are pending.
func (e *accEnv) pendingOrders(table outbox.Table, orders string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		records, err := e.writeDuringOutage(table, orders)
		if err != nil {
			return err
		}
		return e.WaitItems(table, records, "items pending", pendingItem)
	}
}

// writeDuringOutage makes the bus fail (an injected fault), then writes
// three orders.
func (e *accEnv) writeDuringOutage(table outbox.Table, orders string) ([]outbox.Record, error) {
	if _, err := e.Ctl.AddFault(e.Ctx, control.FaultRule{Service: "events", Operation: "PutEvents", Entry: true, Code: "InternalFailure", Message: "injected outage"}); err != nil {
		return nil, err
	}
	return e.WriteOrders(e.Writer(table), orders, "com.example.orders", 1, 3, false)
}

// pendingItem checks that an outbox item is PENDING.
func pendingItem(item map[string]ddbtypes.AttributeValue) error {
	if item == nil || acctest.AttrS(item, outbox.AttrStatus) != string(outbox.StatusPending) {
		return fmt.Errorf("is %v; want it PENDING", item)
	}
	return nil
}

// TestAccPipeline_pendingIndexInPlace: a pipeline without the pending
// index delivers; enabling the index, renaming it and disabling it again
// are updates in place that keep delivering.
func TestAccPipeline_pendingIndexInPlace(t *testing.T) {
	e := newAccEnv(t)
	d := e.newDelivery("gsifree")
	name, orders, table, s, before := d.name, d.orders, d.table, d.sink, d.before
	config := func(index string) string {
		return e.PipelineConfig(name, fastRelay+`
  published = {
    action = "delete"
  }
  pending_index = {
`+index+`
  }`)
	}
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate)}}
	e.run(t, e.CheckDestroy(name, before), []resource.TestStep{
		{
			Config:      e.PipelineConfig(name, fastRelay+"\n  pending_index = {\n    enabled = false\n  }"),
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`pending_index.enabled is off with the published action\s+"mark"`),
		},
		{
			Config: config("    enabled = false"),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("pending_index_arn"), knownvalue.Null()),
			},
			Check: e.Deliver(s, table, orders, 1, 3, "items deleted", acctest.Deleted),
		},
		{
			Config:           config("    enabled = true"),
			ConfigPlanChecks: update,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("pending_index_arn"), knownvalue.StringRegexp(regexp.MustCompile(`/index/outbox-pending$`))),
			},
			Check: e.Deliver(s, table, orders, 10, 3, "items deleted", acctest.Deleted),
		},
		{
			Config:           config(`    name = "pending-v2"`),
			ConfigPlanChecks: update,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("pending_index_arn"), knownvalue.StringRegexp(regexp.MustCompile(`/index/pending-v2$`))),
			},
			Check: e.Deliver(s, table, orders, 20, 3, "items deleted", acctest.Deleted),
		},
		{
			Config:           config("    enabled = false"),
			ConfigPlanChecks: update,
			Check:            e.Deliver(s, table, orders, 30, 3, "items deleted", acctest.Deleted),
		},
	})
}

// TestAccPipeline_missingTarget: a bus that does not exist fails the apply
// with a clear message, and nothing is left behind.
func TestAccPipeline_missingTarget(t *testing.T) {
	e := newAccEnv(t)
	name := e.Name("untargeted")
	before := e.Snapshot()
	e.run(t, e.CheckDestroy(name, before), []resource.TestStep{{
		Config: e.PipelineConfig(name, fastRelay+`
  target = {
    event_bus = "no-such-bus"
  }`),
		ExpectError: regexp.MustCompile(`event\s+bus\s+\(no-such-bus\):\s+it\s+does\s+not\s+exist\s+in\s+us-east-1:\s+create\s+it\s+first`),
	}})
}

// TestAccPipeline_driftDoesNotCascade: the table or its stream removed out
// of band is recreated by the next apply, with no inconsistent result, and
// a resource that depends on target_arn is left alone.
func TestAccPipeline_driftDoesNotCascade(t *testing.T) {
	e := newAccEnv(t)
	d := e.newDelivery("cascade")
	name, orders, table, s, before := d.name, d.orders, d.table, d.sink, d.before
	config := e.PipelineConfig(name, fastRelay+`
  table = {
    deletion_protection = false
  }`) + `
resource "terraform_data" "dependent" {
  triggers_replace = [outbox_pipeline.test.target_arn]
}
`
	ddb := dynamodb.NewFromConfig(e.Cfg)
	repair := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
		plancheck.ExpectResourceAction("terraform_data.dependent", plancheck.ResourceActionNoop),
		plancheck.ExpectKnownValue(accResource, attrPath("target_arn"), knownvalue.StringRegexp(regexp.MustCompile(`:event-bus/default$`))),
	}}
	e.run(t, e.CheckDestroy(name, before), []resource.TestStep{
		{
			Config: config,
			Check:  e.deliverMarked(s, table, orders, 1, 2),
		},
		{
			PreConfig:        func() { e.deleteTable(t, ddb, table.Name) },
			Config:           config,
			ConfigPlanChecks: repair,
			Check:            e.deliverMarked(s, table, orders, 10, 2),
		},
		{
			PreConfig: func() {
				if _, err := ddb.UpdateTable(e.Ctx, &dynamodb.UpdateTableInput{
					TableName: aws.String(table.Name), StreamSpecification: &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(false)},
				}); err != nil {
					t.Fatalf("disabling the stream out of band: %v", err)
				}
			},
			Config:           config,
			ConfigPlanChecks: repair,
			Check:            e.deliverMarked(s, table, orders, 20, 2),
		},
		emptyPlanStep(config),
	})
}

// TestAccPipeline_controls: IAM boundary and path, tracing, logging, KMS
// keys, VPC and the schedule's time zone, window and group, applied,
// read back without drift (every apply step ends with an empty plan), and
// changed in place. The stack's enforcement of a boundary and of the VPC's
// permissions is tested in internal/localaws/iam and internal/provision.
func TestAccPipeline_controls(t *testing.T) {
	e := newAccEnv(t)
	if e.Stack == nil {
		t.Skip("the VPC, keys and boundary of this test exist only on the local stack")
	}
	f := e.newFixture("controlled")
	name, orders, table := f.name, f.orders, f.table
	s := e.NewBusSink("com.example.orders")
	policy := func(name, doc string) string {
		out, err := iam.NewFromConfig(e.Cfg).CreatePolicy(e.Ctx, &iam.CreatePolicyInput{PolicyName: aws.String(name), PolicyDocument: aws.String(doc)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.Policy.Arn)
	}
	open := policy(e.Name("open"), `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`)
	if _, err := scheduler.NewFromConfig(e.Cfg).CreateScheduleGroup(e.Ctx, &scheduler.CreateScheduleGroupInput{Name: aws.String(e.Name("ops"))}); err != nil {
		t.Fatal(err)
	}
	before := e.Inventory()
	key := "arn:aws:kms:us-east-1:000000000000:key/1234abcd-12ab-34cd-56ef-1234567890ab"
	controlled := func(boundary string) string {
		return e.PipelineConfig(name, controlsBody(boundary, key, e.Name("ops")))
	}
	checkFunction := func(tracing, format string, subnets int) resource.TestCheckFunc {
		return e.checkControls(name, tracing, format, subnets)
	}
	e.run(t, e.CheckDestroy(name, before), []resource.TestStep{
		{
			// IAM refuses a boundary that does not exist; nothing is left.
			Config:      controlled("arn:aws:iam::000000000000:policy/no-such-boundary"),
			ExpectError: regexp.MustCompile(`no-such-boundary\s+does\s+not\s+exist`),
		},
		{
			Config: controlled(open),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("relay_role_arn"), knownvalue.StringRegexp(regexp.MustCompile(`:role/outbox/`+name+`-relay$`))),
			},
			Check: resource.ComposeTestCheckFunc(checkFunction("Active", "JSON", 2),
				e.deliverMarked(s, table, orders, 1, 3)),
		},
		{
			Config: e.PipelineConfig(name, `
  relay = {
    architecture = "x86_64"
    batch_size   = 10
  }`),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
			}},
			Check: resource.ComposeTestCheckFunc(checkFunction("PassThrough", "Text", 0),
				e.deliverMarked(s, table, orders, 10, 3)),
		},
	})
}

// controlsBody sets every control of TestAccPipeline_controls.
func controlsBody(boundary, key, group string) string {
	return fmt.Sprintf(`
  iam = {
    permissions_boundary = %q
    path                 = "/outbox/"
  }
  table = {
    kms_key_arn = %q
  }
  relay = {
    architecture = "x86_64"
    batch_size   = 10
    tracing_mode = "Active"
    kms_key_arn  = %q
    logging = {
      log_format            = "JSON"
      application_log_level = "DEBUG"
      system_log_level      = "WARN"
    }
    vpc_config = {
      subnet_ids         = ["subnet-0a1", "subnet-0b2"]
      security_group_ids = ["sg-0c3"]
    }
  }
  reconciler = {
    schedule_expression          = "cron(0/5 * * * ? *)"
    schedule_timezone            = "Europe/Paris"
    flexible_time_window_minutes = 5
    schedule_group               = %q
  }`, boundary, key, key, group)
}

// checkControls checks both functions' tracing mode, log format and number
// of subnets.
func (e *accEnv) checkControls(name, tracing, format string, subnets int) resource.TestCheckFunc {
	lc := lambda.NewFromConfig(e.Cfg)
	return func(*terraform.State) error {
		for _, fn := range []string{name + "-relay", name + "-reconciler"} {
			out, err := lc.GetFunction(e.Ctx, &lambda.GetFunctionInput{FunctionName: aws.String(fn)})
			if err != nil {
				return err
			}
			c := out.Configuration
			n := 0
			if c.VpcConfig != nil {
				n = len(c.VpcConfig.SubnetIds)
			}
			if string(c.TracingConfig.Mode) != tracing || string(c.LoggingConfig.LogFormat) != format || n != subnets {
				return fmt.Errorf("%s: tracing %s, log format %s, %d subnets; want %s, %s, %d", fn, c.TracingConfig.Mode, c.LoggingConfig.LogFormat, n, tracing, format, subnets)
			}
		}
		return nil
	}
}
