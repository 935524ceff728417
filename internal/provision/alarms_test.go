package provision

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/outboxkit/terraform-provider-outbox/internal/golden"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
)

const goldenTopic = "arn:aws:sns:eu-west-1:123456789012:alerts"

var (
	goldenFIFO  = TargetSpec{Type: targetkind.SQS, QueueARN: "arn:aws:sqs:eu-west-1:123456789012:orders.fifo"}
	goldenPeers = MultiRegionSpec{Regions: []string{"eu-west-1", "us-east-1"}}
)

func TestAlarmDefinitions(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]Spec{
		"alarms_defaults": {Name: "orders", Alarms: AlarmsSpec{Enabled: true}},
		"alarms_topic_no_reconciler": {Name: "orders", Reconciler: ReconcilerSpec{Disabled: true}, Alarms: AlarmsSpec{
			Enabled: true, SNSTopicARN: goldenTopic, RelayErrorsThreshold: 5, IteratorAgeThresholdSeconds: 60,
			EvaluationPeriods: 3, TreatMissingData: "breaching",
		}},
		"alarms_hourly_reconciler": {Name: "orders", Reconciler: ReconcilerSpec{ScheduleExpression: "rate(1 hour)"}, Alarms: AlarmsSpec{
			Enabled: true, OldestPendingAgeThresholdSeconds: 7200, EvaluationPeriods: 2,
		}},
		"alarms_multi_region_ordered": {Name: "orders", Ordered: true, Target: goldenFIFO, MultiRegion: goldenPeers, Alarms: AlarmsSpec{Enabled: true, SNSTopicARN: goldenTopic}},
	} {
		if err := s.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := json.MarshalIndent(AlarmDefinitions(s), "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, name+".json", string(b))
	}
	if d := AlarmDefinitions(Spec{Name: "orders"}); d != nil {
		t.Errorf("a spec without alarms has alarm definitions: %+v", d)
	}
}

// The alarms of a multi-Region pipeline: ordering_conflicts in ordered
// mode only (on both functions, or the relay alone without the
// reconciler), takeover_unavailable with the reconciler only; neither for
// a single-Region pipeline.
func TestRegionAlarms(t *testing.T) {
	t.Parallel()
	on := AlarmsSpec{Enabled: true}
	for _, c := range []struct {
		name string
		spec Spec
		want []string
	}{
		{"single Region, ordered", Spec{Ordered: true, Target: goldenFIFO, Alarms: on}, nil},
		{"multi-Region", Spec{MultiRegion: goldenPeers, Alarms: on}, []string{AlarmTakeoverUnavailable}},
		{"multi-Region, ordered", Spec{Ordered: true, Target: goldenFIFO, MultiRegion: goldenPeers, Alarms: on}, []string{AlarmOrderingConflicts, AlarmTakeoverUnavailable}},
		{"multi-Region, ordered, no reconciler", Spec{Ordered: true, Target: goldenFIFO, MultiRegion: goldenPeers, Reconciler: ReconcilerSpec{Disabled: true}, Alarms: on},
			[]string{AlarmOrderingConflicts}},
	} {
		c.spec.Name = "orders"
		if err := c.spec.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []string
		var conflicts AlarmDefinition
		for _, d := range AlarmDefinitions(c.spec) {
			if d.Key == AlarmOrderingConflicts || d.Key == AlarmTakeoverUnavailable {
				got = append(got, d.Key)
			}
			if d.Key == AlarmOrderingConflicts {
				conflicts = d
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: region alarms %q, want %q", c.name, got, c.want)
		}
		if conflicts.Key == "" {
			continue
		}
		// Without the reconciler, one metric of the relay; with it, the sum
		// of both functions'.
		if c.spec.Reconciler.Disabled != (conflicts.MetricName == metrics.OrderingConflicts && conflicts.Dimensions[metrics.DimensionFunctionName] == "orders-relay" && len(conflicts.Metrics) == 0) {
			t.Errorf("%s: ordering_conflicts watches %s %v %+v", c.name, conflicts.MetricName, conflicts.Dimensions, conflicts.Metrics)
		}
	}
}

// Every definition is accepted as is by the local CloudWatch's rules and
// compares equal to the alarm it creates; a changed setting is reported.
func TestAlarmDefinitionDiff(t *testing.T) {
	t.Parallel()
	defs := AlarmDefinitions(Spec{Name: "orders", Ordered: true, Target: goldenFIFO, MultiRegion: goldenPeers, Alarms: AlarmsSpec{Enabled: true, SNSTopicARN: goldenTopic}})
	if len(defs) != len(AlarmKeys) {
		t.Fatalf("%d definitions, want %d", len(defs), len(AlarmKeys))
	}
	for _, d := range defs {
		in := d.input(map[string]string{"team": "orders"})
		have := types.MetricAlarm{
			AlarmName: in.AlarmName, AlarmDescription: in.AlarmDescription, Namespace: in.Namespace, MetricName: in.MetricName,
			Dimensions: in.Dimensions, Statistic: in.Statistic, Period: in.Period, EvaluationPeriods: in.EvaluationPeriods,
			Threshold: in.Threshold, ComparisonOperator: in.ComparisonOperator, TreatMissingData: in.TreatMissingData,
			ActionsEnabled: in.ActionsEnabled, AlarmActions: in.AlarmActions, OKActions: in.OKActions, Metrics: in.Metrics,
		}
		if diff := d.diff(have); len(diff) != 0 {
			t.Errorf("%s: the alarm of its own input differs: %v", d.Key, diff)
		}
		if len(in.Tags) != 1 || aws.ToString(in.Tags[0].Key) != "team" {
			t.Errorf("%s: tags = %+v", d.Key, in.Tags)
		}
		changed := have
		changed.Threshold = aws.Float64(d.Threshold + 1)
		changed.OKActions = nil
		if diff := d.diff(changed); strings.Join(diff, ",") != "threshold,actions" {
			t.Errorf("%s: diff = %v, want threshold and actions", d.Key, diff)
		}
	}
}

func TestAlarmsValidation(t *testing.T) {
	t.Parallel()
	on := func(a AlarmsSpec) AlarmsSpec { a.Enabled = true; return a }
	cases := []struct {
		name  string
		spec  Spec
		field string
		text  string
	}{
		{"topic", Spec{Alarms: on(AlarmsSpec{SNSTopicARN: "alerts"})}, "Alarms.SNSTopicARN", `is "alerts": use an SNS topic ARN`},
		{"errors", Spec{Alarms: on(AlarmsSpec{RelayErrorsThreshold: -1})}, "Alarms.RelayErrorsThreshold", "is -1: use 1 or more"},
		{"iterator age", Spec{Alarms: on(AlarmsSpec{IteratorAgeThresholdSeconds: 90000})}, "Alarms.IteratorAgeThresholdSeconds", "is 90000: use 1 to 86400 seconds"},
		{"periods", Spec{Alarms: on(AlarmsSpec{EvaluationPeriods: 1441})}, "Alarms.EvaluationPeriods", "is 1441: use 1 to 1440"},
		{"missing data", Spec{Alarms: on(AlarmsSpec{TreatMissingData: "ok"})}, "Alarms.TreatMissingData", `is "ok": use "breaching"`},
		{"oldest negative", Spec{Reconciler: ReconcilerSpec{Disabled: true}, Alarms: on(AlarmsSpec{OldestPendingAgeThresholdSeconds: -1})},
			"Alarms.OldestPendingAgeThresholdSeconds", "is -1: use 1 or more seconds"},
		{"oldest below min age", Spec{Reconciler: ReconcilerSpec{MinAge: 20 * time.Minute}, Alarms: on(AlarmsSpec{})},
			"Alarms.OldestPendingAgeThresholdSeconds", "is 900: use more than the reconciler's min age (1200 seconds)"},
		{"periods of a daily reconciler", Spec{Reconciler: ReconcilerSpec{ScheduleExpression: "rate(12 hours)"}, Alarms: on(AlarmsSpec{EvaluationPeriods: 3})},
			"Alarms.EvaluationPeriods", "is 3: use at most 2"},
	}
	for _, c := range cases {
		c.spec.Name = "orders"
		err := c.spec.Validate()
		var ve *ValidationError
		if !errors.As(err, &ve) {
			t.Errorf("%s: Validate = %v, want a ValidationError", c.name, err)
			continue
		}
		if ve.Field != c.field || !strings.Contains(ve.Problem+": "+ve.Fix, c.text) {
			t.Errorf("%s: %s %s: %s; want %s ... %s", c.name, ve.Field, ve.Problem, ve.Fix, c.field, c.text)
		}
	}
	// Disabled alarms are not validated, and the same values are fine
	// without the reconciler they depend on.
	for _, s := range []Spec{
		{Name: "orders", Alarms: AlarmsSpec{SNSTopicARN: "alerts"}},
		{Name: "orders", Reconciler: ReconcilerSpec{Disabled: true, MinAge: 20 * time.Minute}, Alarms: on(AlarmsSpec{})},
	} {
		if err := s.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", s.Alarms, err)
		}
	}
}

func TestReconcilerPeriod(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]int32{
		"rate(1 minute)": 60, "rate(5 minutes)": 300, "rate(2 hours)": 7200, "rate(1 day)": 86400,
		"rate(3 days)": 86400, "cron(0 * * * ? *)": 300,
	} {
		if got := reconcilerPeriod(expr); got != want {
			t.Errorf("reconcilerPeriod(%q) = %d, want %d", expr, got, want)
		}
	}
}
