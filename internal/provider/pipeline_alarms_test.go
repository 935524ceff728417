package provider

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

// alarms returns the metric alarms whose names start with prefix, by name.
func (e *accEnv) alarms(prefix string) (map[string]cwtypes.MetricAlarm, error) {
	out, err := cloudwatch.NewFromConfig(e.Cfg).DescribeAlarms(e.Ctx, &cloudwatch.DescribeAlarmsInput{AlarmNamePrefix: aws.String(prefix)})
	if err != nil {
		return nil, fmt.Errorf("describing the alarms: %w", err)
	}
	got := map[string]cwtypes.MetricAlarm{}
	for _, a := range out.MetricAlarms {
		got[aws.ToString(a.AlarmName)] = a
	}
	return got, nil
}

// checkAlarm checks one alarm of the pipeline through CloudWatch.
func (e *accEnv) checkAlarm(name, namespace, metric, dimension string, threshold float64, topic string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := e.alarms(name)
		if err != nil {
			return err
		}
		a, ok := got[name]
		switch {
		case !ok:
			return fmt.Errorf("alarm %s does not exist", name)
		case aws.ToString(a.Namespace) != namespace || aws.ToString(a.MetricName) != metric:
			return fmt.Errorf("alarm %s watches %s/%s, want %s/%s", name, aws.ToString(a.Namespace), aws.ToString(a.MetricName), namespace, metric)
		case len(a.Dimensions) != 1 || aws.ToString(a.Dimensions[0].Value) != dimension:
			return fmt.Errorf("alarm %s has the dimensions %v, want %s", name, a.Dimensions, dimension)
		case aws.ToFloat64(a.Threshold) != threshold:
			return fmt.Errorf("alarm %s has the threshold %v, want %v", name, aws.ToFloat64(a.Threshold), threshold)
		case !slices.Equal(a.AlarmActions, []string{topic}) || !slices.Equal(a.OKActions, []string{topic}):
			return fmt.Errorf("alarm %s notifies %v and %v, want %s", name, a.AlarmActions, a.OKActions, topic)
		}
		return nil
	}
}

// TestAccPipeline_alarms: the alarms object creates the alarms with an SNS
// topic, a threshold changes in place, an alarm deleted or changed out of
// band is repaired, import finds them, and removing the object deletes
// them.
func TestAccPipeline_alarms(t *testing.T) {
	e := newAccEnv(t)
	name := e.Name("alarmed")
	n := provision.NamesFor(name)
	topic := e.alertTopic(t)
	before := e.Snapshot()
	config := func(alarms string) string {
		return e.PipelineConfig(name, `
  relay = {
    architecture = "x86_64"
  }
  tags = { team = "orders" }
`+alarms)
	}
	withAlarms := func(errors int) string {
		return config(fmt.Sprintf(`
  alarms = {
    sns_topic_arn                  = %q
    relay_errors_threshold         = %d
    iterator_age_threshold_seconds = 120
  }`, topic, errors))
	}
	arnsKept := statecheck.CompareValue(compare.ValuesSame())
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate)}}
	// An update in place that keeps the alarms' ARNs.
	inPlace := func(pre func(), check resource.TestCheckFunc) resource.TestStep {
		return resource.TestStep{
			PreConfig: pre, Config: withAlarms(5), ConfigPlanChecks: update, Check: check,
			ConfigStateChecks: []statecheck.StateCheck{arnsKept.AddStateValue(accResource, attrPath("alarm_arns"))},
		}
	}
	e.run(t, e.CheckDestroy(name, before), []resource.TestStep{
		{
			Config: withAlarms(2),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("alarm_arns"), alarmARNs(name)),
				statecheck.ExpectKnownValue(accResource, attrPath("alarms.evaluation_periods"), knownvalue.Int64Exact(1)),
				arnsKept.AddStateValue(accResource, attrPath("alarm_arns")),
			},
			Check: e.checkAlarms(name, topic),
		},
		// A threshold changes in place.
		inPlace(nil, e.checkAlarm(n.AlarmRelayErrors, "AWS/Lambda", "Errors", n.RelayFunction, 5, topic)),
		// An alarm deleted out of band is recreated.
		inPlace(func() {
			if _, err := cloudwatch.NewFromConfig(e.Cfg).DeleteAlarms(e.Ctx, &cloudwatch.DeleteAlarmsInput{AlarmNames: []string{n.AlarmIteratorAge}}); err != nil {
				t.Fatalf("deleting an alarm out of band: %v", err)
			}
		}, e.checkAlarm(n.AlarmIteratorAge, "AWS/Lambda", "IteratorAge", n.RelayFunction, 120000, topic)),
		// An alarm changed out of band is reset.
		inPlace(func() { e.changeThreshold(t, n.AlarmRelayErrors, 99) },
			e.checkAlarm(n.AlarmRelayErrors, "AWS/Lambda", "Errors", n.RelayFunction, 5, topic)),
		importStep(withAlarms(5), accResource, name),
		{
			// Removing the object deletes the alarms.
			Config:           config(""),
			ConfigPlanChecks: update,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("alarm_arns"), knownvalue.Null()),
			},
			Check: e.noAlarms(name),
		},
	})
}

// TestAccPipeline_alarmsMultiRegion: a multi-Region pipeline's alarms add
// takeover_unavailable, on the reconciler's TakeoverUnavailable, to
// alarm_arns; import finds it.
func TestAccPipeline_alarmsMultiRegion(t *testing.T) {
	e := newAccEnv(t)
	name, app := e.Name("alarmedregions"), e.Name("acc-alarmedregions")
	n := provision.NamesFor(name)
	e.CreateAppTable(app, ddbtypes.StreamViewTypeNewAndOldImages)
	topic := e.alertTopic(t)
	before := e.Snapshot()
	config := e.PipelineConfig(name, fastRelayMapping+fmt.Sprintf(`
  table = {
    existing      = true
    name          = %q
    partition_key = "pk"
    sort_key      = "sk"
  }
  multi_region = {
    regions = ["us-east-1", "eu-west-1"]
  }
  alarms = {
    sns_topic_arn = %q
  }`, app, topic))
	e.run(t, e.CheckDestroy(name, before), []resource.TestStep{
		{
			Config: config,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("alarm_arns"), alarmARNs(name, provision.AlarmTakeoverUnavailable)),
			},
			Check: e.checkAlarm(n.Alarm(provision.AlarmTakeoverUnavailable), "Outbox", "TakeoverUnavailable", n.ReconcilerFunction, 0, topic),
		},
		emptyPlanStep(config),
		importStep(config, accResource, name, "table.deletion_protection", "table.point_in_time_recovery"),
	})
}

// alarmARNs checks alarm_arns: every alarm of the pipeline, by key, those
// of a single-Region pipeline and the extra keys.
func alarmARNs(name string, extra ...string) knownvalue.Check {
	n := provision.NamesFor(name)
	arn := func(alarm string) knownvalue.Check {
		return knownvalue.StringRegexp(regexp.MustCompile(`^arn:aws:cloudwatch:[a-z0-9-]+:\d{12}:alarm:` + regexp.QuoteMeta(alarm) + `$`))
	}
	want := map[string]knownvalue.Check{
		provision.AlarmDLQNotEmpty:                 arn(n.AlarmDLQNotEmpty),
		provision.AlarmRelayErrors:                 arn(n.AlarmRelayErrors),
		provision.AlarmIteratorAge:                 arn(n.AlarmIteratorAge),
		provision.AlarmOldestPendingAge:            arn(n.AlarmOldestPendingAge),
		provision.AlarmEventsFailed:                arn(name + "-events-failed"),
		provision.AlarmEnvironmentErrors:           arn(name + "-environment-errors"),
		provision.AlarmReconcilerEventsFailed:      arn(name + "-reconciler-events-failed"),
		provision.AlarmReconcilerEnvironmentErrors: arn(name + "-reconciler-environment-errors"),
		provision.AlarmStuck:                       arn(name + "-stuck"),
	}
	for _, k := range extra {
		want[k] = arn(n.Alarm(k))
	}
	return knownvalue.MapExact(want)
}

// checkAlarms checks the alarms that TestAccPipeline_alarms configures,
// with a relay errors threshold of 2.
func (e *accEnv) checkAlarms(name, topic string) resource.TestCheckFunc {
	n := provision.NamesFor(name)
	return resource.ComposeTestCheckFunc(
		e.checkAlarm(n.AlarmDLQNotEmpty, "AWS/SQS", "ApproximateNumberOfMessagesVisible", n.DeadLetterQueue, 0, topic),
		e.checkAlarm(n.AlarmRelayErrors, "AWS/Lambda", "Errors", n.RelayFunction, 2, topic),
		e.checkAlarm(n.AlarmIteratorAge, "AWS/Lambda", "IteratorAge", n.RelayFunction, 120000, topic),
		e.checkAlarm(n.AlarmOldestPendingAge, "Outbox", "OldestPendingAge", n.ReconcilerFunction, 900, topic),
		e.checkAlarm(name+"-events-failed", "Outbox", "EventsFailed", n.RelayFunction, 0, topic),
		e.checkAlarm(name+"-reconciler-events-failed", "Outbox", "EventsFailed", n.ReconcilerFunction, 0, topic),
	)
}

// changeThreshold changes an alarm's threshold out of band.
func (e *accEnv) changeThreshold(t *testing.T, alarm string, threshold float64) {
	t.Helper()
	got, err := e.alarms(alarm)
	if err != nil {
		t.Fatal(err)
	}
	a := got[alarm]
	if _, err := cloudwatch.NewFromConfig(e.Cfg).PutMetricAlarm(e.Ctx, &cloudwatch.PutMetricAlarmInput{
		AlarmName: a.AlarmName, AlarmDescription: a.AlarmDescription, Namespace: a.Namespace, MetricName: a.MetricName,
		Dimensions: a.Dimensions, Statistic: a.Statistic, Period: a.Period, EvaluationPeriods: a.EvaluationPeriods,
		Threshold: aws.Float64(threshold), ComparisonOperator: a.ComparisonOperator, TreatMissingData: a.TreatMissingData,
		AlarmActions: a.AlarmActions, OKActions: a.OKActions,
	}); err != nil {
		t.Fatalf("changing an alarm out of band: %v", err)
	}
}

// noAlarms checks that no alarm of the pipeline is left.
func (e *accEnv) noAlarms(name string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		got, err := e.alarms(name + "-")
		if err != nil {
			return err
		}
		if len(got) != 0 {
			return fmt.Errorf("the alarms outlived their object: %v", slices.Sorted(maps.Keys(got)))
		}
		return nil
	}
}

// alertTopic creates an SNS topic for the alarms, deleted with the test.
func (e *accEnv) alertTopic(t *testing.T) string {
	t.Helper()
	topics := sns.NewFromConfig(e.Cfg)
	out, err := topics.CreateTopic(e.Ctx, &sns.CreateTopicInput{Name: aws.String(e.Name("acc-alerts"))})
	if err != nil {
		t.Fatalf("creating the topic: %v", err)
	}
	topic := aws.ToString(out.TopicArn)
	t.Cleanup(func() {
		_, _ = topics.DeleteTopic(context.Background(), &sns.DeleteTopicInput{TopicArn: aws.String(topic)})
	})
	return topic
}
