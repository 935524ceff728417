package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestAccPipeline_streamViewTypeDrift: the stream of a dedicated table
// disabled by hand and enabled again as KEYS_ONLY plans the view type's
// restoration (not mapping settings read as zeros); one apply replaces the
// stream with a NEW_IMAGE one and moves the mapping to it. Every event is
// delivered: those written while the stream was KEYS_ONLY (left PENDING,
// published by the reconciler) and those written after the repair (by the
// new stream's mapping).
func TestAccPipeline_streamViewTypeDrift(t *testing.T) {
	e := newAccEnv(t)
	d := e.newDelivery("viewtype")
	name, orders, table, s, before := d.name, d.orders, d.table, d.sink, d.before
	config := e.PipelineConfig(name, `
  relay = {
    architecture            = "x86_64"
    batch_size              = 10
    batching_window_seconds = 0
    bisect_on_error         = false
  }
  reconciler = {
    schedule_expression = "rate(1 minute)"
    min_age_seconds     = 1
    timeout             = 60
  }`)
	ddb := dynamodb.NewFromConfig(e.Cfg)
	var firstStream string
	var pending []outbox.Record
	e.run(t, e.CheckDestroy(name, before), []resource.TestStep{
		{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("stream_view_type"), knownvalue.StringExact("NEW_IMAGE")),
			},
			Check: func(st *terraform.State) error {
				firstStream = stateAttr(st, "stream_arn")
				return e.deliverMarked(s, table, orders, 1, 2)(st)
			},
		},
		{
			PreConfig: func() {
				e.setStreamViewType(t, ddb, table.Name, ddbtypes.StreamViewTypeKeysOnly)
				var err error
				if pending, err = e.WriteOrders(e.Writer(table), orders, "com.example.orders", 10, 3, false); err != nil {
					t.Fatalf("writing orders while the stream is KEYS_ONLY: %v", err)
				}
			},
			Config: config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
				expectChange{attr: "stream_view_type", before: "KEYS_ONLY", after: "NEW_IMAGE"},
				plancheck.ExpectUnknownValue(accResource, attrPath("stream_arn")),
				plancheck.ExpectUnknownValue(accResource, attrPath("event_source_mapping_uuid")),
				// The mapping's settings read as they are.
				expectChange{block: "relay", attr: "batch_size", before: 10, after: 10},
				expectChange{block: "relay", attr: "parallelization_factor", before: 1, after: 1},
				plancheck.ExpectKnownValue(accResource, attrPath("table_arn"), knownvalue.NotNull()),
			}},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("stream_view_type"), knownvalue.StringExact("NEW_IMAGE")),
			},
			Check: resource.ComposeTestCheckFunc(
				e.checkStreamRepaired(table.Name, &firstStream),
				func(*terraform.State) error {
					// The events written meanwhile are PENDING: the
					// reconciler publishes them.
					if err := fireSchedule(e, name+"-reconcile"); err != nil {
						return err
					}
					return e.receiveMarked(s, table, pending)
				},
				e.deliverMarked(s, table, orders, 20, 2),
			),
		},
		emptyPlanStep(config),
	})
}

// setStreamViewType changes the view type of a table's stream by hand, as
// DynamoDB allows it: the stream disabled, then enabled again with the
// view type once the table is ACTIVE.
func (e *accEnv) setStreamViewType(t *testing.T, ddb *dynamodb.Client, table string, viewType ddbtypes.StreamViewType) {
	t.Helper()
	active := func(enabled bool) func() error {
		return func() error {
			d, err := ddb.DescribeTable(e.Ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
			if err != nil {
				return err
			}
			spec := d.Table.StreamSpecification
			on := spec != nil && aws.ToBool(spec.StreamEnabled)
			if d.Table.TableStatus != ddbtypes.TableStatusActive || on != enabled || (on && spec.StreamViewType != viewType) {
				return fmt.Errorf("table %s, stream %+v", d.Table.TableStatus, spec)
			}
			return nil
		}
	}
	e.outOfBand(t, "disabling the stream", sdkCall(e.Ctx, ddb.UpdateTable, &dynamodb.UpdateTableInput{
		TableName: aws.String(table), StreamSpecification: &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(false)},
	}), "the stream disabled", active(false))
	e.outOfBand(t, "enabling the stream as "+string(viewType), sdkCall(e.Ctx, ddb.UpdateTable, &dynamodb.UpdateTableInput{
		TableName: aws.String(table), StreamSpecification: &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: viewType},
	}), "the stream enabled as "+string(viewType), active(true))
}

// checkStreamRepaired checks that the table's stream is a NEW_IMAGE stream
// other than the first one, and that the relay's mapping reads it.
func (e *accEnv) checkStreamRepaired(table string, first *string) resource.TestCheckFunc {
	return func(st *terraform.State) error {
		d, err := dynamodb.NewFromConfig(e.Cfg).DescribeTable(e.Ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			return err
		}
		latest := aws.ToString(d.Table.LatestStreamArn)
		if spec := d.Table.StreamSpecification; spec == nil || spec.StreamViewType != ddbtypes.StreamViewTypeNewImage || latest == *first || latest != stateAttr(st, "stream_arn") {
			return fmt.Errorf("stream %+v %s (first %s, state %s): want a new NEW_IMAGE stream, recorded", spec, latest, *first, stateAttr(st, "stream_arn"))
		}
		m, err := lambda.NewFromConfig(e.Cfg).GetEventSourceMapping(e.Ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String(stateAttr(st, "event_source_mapping_uuid"))})
		if err != nil {
			return err
		}
		if aws.ToString(m.EventSourceArn) != latest || aws.ToString(m.State) != "Enabled" {
			return fmt.Errorf("the mapping reads %s (%s), want %s", aws.ToString(m.EventSourceArn), aws.ToString(m.State), latest)
		}
		if m.MetricsConfig == nil || len(m.MetricsConfig.Metrics) != 1 || m.MetricsConfig.Metrics[0] != "EventCount" {
			return fmt.Errorf("the mapping's MetricsConfig is %+v, want its EventCount metrics", m.MetricsConfig)
		}
		return nil
	}
}

// receiveMarked checks that the events of records, written earlier, arrive
// at s, each by its id, and that their items end marked PUBLISHED.
func (e *accEnv) receiveMarked(s acctest.Sink, table outbox.Table, records []outbox.Record) error {
	got, err := s.Receive(records)
	if err != nil {
		return err
	}
	if err := acctest.CheckEvents(records, got); err != nil {
		return err
	}
	return e.waitMarked(table, records)
}

// TestAccPipeline_protectionDrift: deletion protection and point-in-time
// recovery turned off by hand show in the plan as what they are and what
// apply restores (false -> true), with the table's ARNs known; the apply
// turns both on again.
func TestAccPipeline_protectionDrift(t *testing.T) {
	e := newAccEnv(t)
	name := e.Name("protect")
	config := e.PipelineConfig(name, fastRelay)
	table := name + "-outbox"
	ddb := dynamodb.NewFromConfig(e.Cfg)
	before := e.Snapshot()
	arns := []string{"table_arn", "stream_arn", "pending_index_arn", "event_source_mapping_uuid", "relay_role_arn"}
	known := []plancheck.PlanCheck{
		plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
		expectChange{block: "table", attr: "deletion_protection", before: false, after: true},
		expectChange{block: "table", attr: "point_in_time_recovery", before: false, after: true},
	}
	for _, a := range arns {
		known = append(known, plancheck.ExpectKnownValue(accResource, attrPath(a), knownvalue.StringRegexp(regexp.MustCompile(`.`))))
	}
	e.run(t, e.CheckDestroy(name, before), []resource.TestStep{
		{Config: config, Check: e.checkTableProtection(table, true, true)},
		{
			PreConfig:        func() { e.unprotectTable(t, ddb, table) },
			Config:           config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: known},
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("table.deletion_protection"), knownvalue.Bool(true)),
				statecheck.ExpectKnownValue(accResource, attrPath("table.point_in_time_recovery"), knownvalue.Bool(true)),
			},
			Check: e.checkTableProtection(table, true, true),
		},
		emptyPlanStep(config),
	})
}

// unprotectTable turns the table's deletion protection and point-in-time
// recovery off by hand.
func (e *accEnv) unprotectTable(t *testing.T, ddb *dynamodb.Client, table string) {
	t.Helper()
	e.outOfBand(t, "turning deletion protection off", sdkCall(e.Ctx, ddb.UpdateTable, &dynamodb.UpdateTableInput{
		TableName: aws.String(table), DeletionProtectionEnabled: aws.Bool(false),
	}), "deletion protection off", func() error {
		d, err := ddb.DescribeTable(e.Ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil || aws.ToBool(d.Table.DeletionProtectionEnabled) || d.Table.TableStatus != ddbtypes.TableStatusActive {
			return fmt.Errorf("table %v: %w", d, err)
		}
		return nil
	})
	e.outOfBand(t, "turning point-in-time recovery off", sdkCall(e.Ctx, ddb.UpdateContinuousBackups, &dynamodb.UpdateContinuousBackupsInput{
		TableName: aws.String(table), PointInTimeRecoverySpecification: &ddbtypes.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(false)},
	}), "point-in-time recovery off", func() error { return e.checkTableProtection(table, false, false)(nil) })
}

// TestAccPipeline_adoptedStreamViewType: an adopted table's stream changed
// by hand to KEYS_ONLY plans the view type back, but the apply refuses to
// replace another's stream and names the fix; once the owner enables a
// NEW_IMAGE stream again, the apply moves the mapping to it.
func TestAccPipeline_adoptedStreamViewType(t *testing.T) {
	e := newAccEnv(t)
	name, app := e.Name("adoptview"), e.Name("acc-adoptview")
	e.CreateAppTable(app, ddbtypes.StreamViewTypeNewImage)
	before := e.Snapshot()
	ddb := dynamodb.NewFromConfig(e.Cfg)
	config := e.PipelineConfig(name, fastRelay+fmt.Sprintf(`
  table = {
    existing      = true
    name          = %q
    partition_key = "pk"
    sort_key      = "sk"
  }`, app))
	var first string
	e.run(t, e.CheckDestroy(name, before), []resource.TestStep{
		{
			Config: config,
			Check: func(st *terraform.State) error {
				first = stateAttr(st, "stream_arn")
				return nil
			},
		},
		{
			PreConfig: func() { e.setStreamViewType(t, ddb, app, ddbtypes.StreamViewTypeKeysOnly) },
			Config:    config,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				expectChange{attr: "stream_view_type", before: "KEYS_ONLY", after: "NEW_IMAGE"},
			}},
			ExpectError: words("its stream has view type KEYS_ONLY, which lacks the new image that the relay reads: change it to NEW_IMAGE or NEW_AND_OLD_IMAGES"),
		},
		{
			PreConfig: func() { e.setStreamViewType(t, ddb, app, ddbtypes.StreamViewTypeNewImage) },
			Config:    config,
			Check:     e.checkStreamRepaired(app, &first),
		},
		emptyPlanStep(config),
	})
}
