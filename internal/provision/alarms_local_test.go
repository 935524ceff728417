package provision

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/component/componenttest"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
)

func describeAll(t *testing.T, ctx context.Context, c *Provisioner, prefix string) map[string]types.MetricAlarm {
	t.Helper()
	out, err := c.CloudWatch.DescribeAlarms(ctx, &cloudwatch.DescribeAlarmsInput{AlarmNamePrefix: aws.String(prefix)})
	if err != nil {
		t.Fatalf("DescribeAlarms: %v", err)
	}
	got := map[string]types.MetricAlarm{}
	for _, a := range out.MetricAlarms {
		got[aws.ToString(a.AlarmName)] = a
	}
	return got
}

func alarmTags(t *testing.T, ctx context.Context, c *Provisioner, arn string) map[string]string {
	t.Helper()
	out, err := c.CloudWatch.ListTagsForResource(ctx, &cloudwatch.ListTagsForResourceInput{ResourceARN: aws.String(arn)})
	if err != nil {
		t.Fatalf("ListTagsForResource(%s): %v", arn, err)
	}
	tags := map[string]string{}
	for _, tag := range out.Tags {
		tags[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
	}
	return tags
}

func hasChange(d Drift, component, field string) bool {
	return slices.ContainsFunc(d.Changed, func(c Change) bool { return c.Component == component && slices.Contains(c.Fields, field) })
}

// The alarms live and die with the pipeline: created with it, updated in
// place, repaired when deleted out of band, found by Lookup, removed with
// the reconciler they watch, with the alarms block, and by Delete.
func TestLocalAlarms(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, append(coreServices, "scheduler", "cloudwatch")...)
	before := componenttest.Inventory(t, ctx, stack)
	n := NamesFor("alarmed")

	spec := Spec{Name: "alarmed", Tags: map[string]string{"team": "orders"},
		Alarms: AlarmsSpec{Enabled: true, SNSTopicARN: "arn:aws:sns:us-east-1:000000000000:alerts"}}
	st := must.Create(t, ctx, c, spec)
	arns := checkCreatedAlarms(t, ctx, c, spec, st)
	updated, st2 := checkAlarmsInPlace(t, ctx, c, spec, st, arns)
	// An alarm deleted out of band is reported missing and recreated.
	if _, err := c.CloudWatch.DeleteAlarms(ctx, &cloudwatch.DeleteAlarmsInput{AlarmNames: []string{n.AlarmIteratorAge}}); err != nil {
		t.Fatal(err)
	}
	observed, drift := must.Read(t, ctx, c, updated, st2)
	if !slices.Equal(drift.Missing, []string{AlarmComponent(AlarmIteratorAge)}) || observed.Alarms.IteratorAge != "" {
		t.Fatalf("Read after deleting an alarm: %s, state %+v", drift, observed.Alarms)
	}
	st3, err := c.Update(ctx, updated, observed)
	if err != nil {
		t.Fatalf("Update (repair): %v", err)
	}
	if st3.Alarms != st2.Alarms {
		t.Errorf("repair recorded %+v, want %+v", st3.Alarms, st2.Alarms)
	}
	if _, drift := must.Read(t, ctx, c, updated, st3); !drift.None() {
		t.Fatalf("Read after the repair reports drift: %s", drift)
	}

	// Import finds the alarms and their settings.
	found, foundState, err := c.Lookup(ctx, "alarmed")
	if err != nil {
		t.Fatalf("Lookup: %v", err)
	}
	if found.Alarms != updated.Alarms.withDefaults() || foundState.Alarms != st3.Alarms {
		t.Errorf("Lookup found %+v, %+v; want %+v, %+v", found.Alarms, foundState.Alarms, updated.Alarms.withDefaults(), st3.Alarms)
	}
	if _, drift := must.Read(t, ctx, c, found, foundState); !drift.None() {
		t.Errorf("the imported spec drifts: %s", drift)
	}

	updated, st5 := checkAlarmsDisabled(t, ctx, c, updated, st3)

	// Re-enabled, then deleted with the pipeline.
	updated.Alarms = AlarmsSpec{Enabled: true}
	st6, err := c.Update(ctx, updated, st5)
	if err != nil {
		t.Fatalf("Update (enable the alarms again): %v", err)
	}
	if len(st6.Alarms.Map()) != 5 {
		t.Errorf("re-enabled alarms: %v", st6.Alarms.Map())
	}
	must.Delete(t, ctx, c, st6, "Delete")
	componenttest.CheckInventory(t, ctx, stack, before, "Delete")
}

// checkCreatedAlarms checks the alarms that Create made for spec and
// returns their ARNs.
func checkCreatedAlarms(t *testing.T, ctx context.Context, c *Provisioner, spec Spec, st State) map[string]string {
	t.Helper()
	n := NamesFor(spec.Name)
	arns := st.Alarms.Map()
	if len(arns) != 9 {
		t.Fatalf("Create recorded the alarms %v, want 9", arns)
	}
	got := describeAll(t, ctx, c, "alarmed-")
	for _, d := range AlarmDefinitions(spec) {
		a, ok := got[d.Name]
		if !ok {
			t.Errorf("alarm %s was not created", d.Name)
			continue
		}
		if aws.ToString(a.AlarmArn) != arns[d.Key] {
			t.Errorf("%s: ARN %s, recorded %s", d.Name, aws.ToString(a.AlarmArn), arns[d.Key])
		}
		if diff := d.diff(a); len(diff) > 0 {
			t.Errorf("%s differs from its definition: %v", d.Name, diff)
		}
		if !slices.Equal(a.AlarmActions, []string{spec.Alarms.SNSTopicARN}) || !slices.Equal(a.OKActions, a.AlarmActions) {
			t.Errorf("%s: alarm actions %v, OK actions %v", d.Name, a.AlarmActions, a.OKActions)
		}
		if tags := alarmTags(t, ctx, c, arns[d.Key]); tags["team"] != "orders" || tags[TagPipeline] != "alarmed" {
			t.Errorf("%s: tags %v", d.Name, tags)
		}
	}
	oldest := got[n.AlarmOldestPendingAge]
	if aws.ToString(oldest.Namespace) != "Outbox" || aws.ToString(oldest.MetricName) != "OldestPendingAge" ||
		len(oldest.Dimensions) != 1 || aws.ToString(oldest.Dimensions[0].Value) != n.ReconcilerFunction || aws.ToFloat64(oldest.Threshold) != 900 {
		t.Errorf("oldest_pending_age alarm = %+v", oldest)
	}
	checkStuckAlarm(t, got["alarmed-stuck"], n, 900, 1)
	env := got["alarmed-environment-errors"]
	dims := map[string]string{}
	for _, d := range env.Dimensions {
		dims[aws.ToString(d.Name)] = aws.ToString(d.Value)
	}
	if aws.ToString(env.MetricName) != "PublishErrors" || dims["ErrorClass"] != "environment" || dims["FunctionName"] != n.RelayFunction || aws.ToFloat64(env.Threshold) != 0 {
		t.Errorf("environment_errors alarm = %+v", env)
	}
	if f := got["alarmed-reconciler-events-failed"]; aws.ToString(f.MetricName) != "EventsFailed" || aws.ToString(f.Dimensions[0].Value) != n.ReconcilerFunction {
		t.Errorf("reconciler_events_failed alarm = %+v", f)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Fatalf("Read after Create reports drift: %s", drift)
	}
	return arns
}

// checkAlarmsInPlace updates thresholds, periods and tags in place: the
// ARNs stay.
func checkAlarmsInPlace(t *testing.T, ctx context.Context, c *Provisioner, spec Spec, st State, arns map[string]string) (Spec, State) {
	t.Helper()
	n := NamesFor(spec.Name)
	updated := spec
	updated.Alarms.RelayErrorsThreshold = 3
	updated.Alarms.IteratorAgeThresholdSeconds = 120
	updated.Alarms.EvaluationPeriods = 2
	updated.Alarms.OldestPendingAgeThresholdSeconds = 1200
	updated.Tags = map[string]string{"team": "payments"}
	st2, err := c.Update(ctx, updated, st)
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if !maps.Equal(st2.Alarms.Map(), arns) {
		t.Errorf("Update changed the alarms' ARNs: %v -> %v", arns, st2.Alarms.Map())
	}
	got := describeAll(t, ctx, c, "alarmed-")
	if a := got[n.AlarmRelayErrors]; aws.ToFloat64(a.Threshold) != 3 || aws.ToInt32(a.EvaluationPeriods) != 2 {
		t.Errorf("relay_errors after Update: threshold %v, periods %v", aws.ToFloat64(a.Threshold), aws.ToInt32(a.EvaluationPeriods))
	}
	if a := got[n.AlarmIteratorAge]; aws.ToFloat64(a.Threshold) != 120000 {
		t.Errorf("iterator_age threshold after Update = %v ms, want 120000", aws.ToFloat64(a.Threshold))
	}
	checkStuckAlarm(t, got[n.Alarm(AlarmStuck)], n, 1200, 2)
	if tags := alarmTags(t, ctx, c, arns[AlarmRelayErrors]); tags["team"] != "payments" {
		t.Errorf("tags after Update: %v", tags)
	}
	if _, drift := must.Read(t, ctx, c, updated, st2); !drift.None() {
		t.Fatalf("Read after Update reports drift: %s", drift)
	}
	if _, drift := must.Read(t, ctx, c, spec, st2); !hasChange(drift, AlarmComponent(AlarmRelayErrors), "threshold") ||
		!hasChange(drift, AlarmComponent(AlarmIteratorAge), "evaluation_periods") || !hasChange(drift, AlarmComponent(AlarmStuck), "metric") {
		t.Errorf("Read against the old spec: %s; want the thresholds and periods", drift)
	}
	return updated, st2
}

// checkAlarmsDisabled disables the reconciler, whose alarm goes, then the
// alarms block, and all go.
func checkAlarmsDisabled(t *testing.T, ctx context.Context, c *Provisioner, updated Spec, st3 State) (Spec, State) {
	t.Helper()
	n := NamesFor(updated.Name)
	updated.Reconciler.Disabled = true
	st4, err := c.Update(ctx, updated, st3)
	if err != nil {
		t.Fatalf("Update (disable the reconciler): %v", err)
	}
	if st4.Alarms.OldestPendingAge != "" || len(st4.Alarms.Map()) != 5 {
		t.Errorf("alarms without the reconciler: %v", st4.Alarms.Map())
	}
	if _, ok := describeAll(t, ctx, c, "alarmed-")[n.AlarmOldestPendingAge]; ok {
		t.Error("the oldest_pending_age alarm outlived the reconciler")
	}
	if _, drift := must.Read(t, ctx, c, updated, st4); !drift.None() {
		t.Fatalf("Read without the reconciler reports drift: %s", drift)
	}
	if _, drift := must.Read(t, ctx, c, Spec{Name: "alarmed", Tags: updated.Tags, Reconciler: updated.Reconciler}, st4); !hasChange(drift, AlarmComponent(AlarmDLQNotEmpty), "disabled") {
		t.Errorf("Read of alarms that the spec no longer has: %s", drift)
	}
	updated.Alarms = AlarmsSpec{}
	st5, err := c.Update(ctx, updated, st4)
	if err != nil {
		t.Fatalf("Update (disable the alarms): %v", err)
	}
	if st5.Alarms.Exists() || len(describeAll(t, ctx, c, "alarmed-")) != 0 {
		t.Errorf("disabling the alarms left %+v", st5.Alarms)
	}
	return updated, st5
}

// An alarm of the pipeline's name that the pipeline did not create is not
// taken over.
func TestLocalAlarmsRefuseForeignAlarm(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, append(coreServices, "cloudwatch")...)
	spec := Spec{Name: "foreign", Reconciler: ReconcilerSpec{Disabled: true}, Alarms: AlarmsSpec{Enabled: true}}
	d := AlarmDefinitions(spec)[1]
	if _, err := c.CloudWatch.PutMetricAlarm(ctx, d.input(nil)); err != nil {
		t.Fatal(err)
	}
	st, err := c.Create(ctx, spec)
	if err == nil || st.Exists() {
		t.Fatalf("Create = %+v, %v; want an error and nothing left", st, err)
	}
	if want := "creating alarm (foreign-relay-errors): an alarm of that name already exists"; !strings.Contains(err.Error(), want) {
		t.Errorf("Create error = %v", err)
	}
	if got := describeAll(t, ctx, c, "foreign-"); len(got) != 1 {
		t.Errorf("the foreign alarm was touched: %v", got)
	}
}

// checkStuckAlarm checks the stuck alarm as CloudWatch describes it: an
// alarm on metric math over the reconciler's oldest pending age and both
// functions' published events, per period of the reconciler's default
// schedule, raised by the expression's 1.
func checkStuckAlarm(t *testing.T, a types.MetricAlarm, n Names, threshold, periods int) {
	t.Helper()
	if a.Namespace != nil || a.MetricName != nil || a.Period != nil || aws.ToInt32(a.EvaluationPeriods) != int32(periods) ||
		aws.ToFloat64(a.Threshold) != 0 || a.ComparisonOperator != types.ComparisonOperatorGreaterThanThreshold || len(a.Metrics) != 4 {
		t.Fatalf("stuck alarm = %+v", a)
	}
	want := map[string]string{"age": n.ReconcilerFunction + " OldestPendingAge Maximum", "relay": n.RelayFunction + " EventsPublished Sum",
		"reconciler": n.ReconcilerFunction + " EventsPublished Sum"}
	for _, q := range a.Metrics {
		id := aws.ToString(q.Id)
		if id == "stuck" {
			expr := fmt.Sprintf("IF((age > %d) AND ((FILL(relay, 0) + FILL(reconciler, 0)) == 0), 1, 0)", threshold)
			if aws.ToString(q.Expression) != expr || q.ReturnData == nil || !*q.ReturnData {
				t.Errorf("stuck alarm's expression: %q (returns data: %v), want %q", aws.ToString(q.Expression), q.ReturnData, expr)
			}
			continue
		}
		s := q.MetricStat
		if s == nil || aws.ToInt32(s.Period) != 300 || q.ReturnData == nil || *q.ReturnData || len(s.Metric.Dimensions) != 1 ||
			aws.ToString(s.Metric.Namespace) != "Outbox" ||
			aws.ToString(s.Metric.Dimensions[0].Value)+" "+aws.ToString(s.Metric.MetricName)+" "+aws.ToString(s.Stat) != want[id] {
			t.Errorf("stuck alarm's metric %s = %+v, want %s per 300 s, not returning data", id, s, want[id])
		}
		delete(want, id)
	}
	if len(want) != 0 {
		t.Errorf("stuck alarm lacks the metrics %v", want)
	}
}

// An ordered multi-Region pipeline gets the alarms of its Region's
// takeover and of its ordering keys written in two Regions, as CloudWatch
// describes them, reads back without drift, and loses both when it
// becomes a single-Region pipeline.
func TestLocalRegionAlarms(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, append(coreServices, "scheduler", "cloudwatch")...)
	region := c.DynamoDB.Options().Region
	createAppTable(t, ctx, c, "regional", ddbtypes.StreamViewTypeNewAndOldImages)
	q, err := c.SQS.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("regional-orders.fifo"), Attributes: map[string]string{"FifoQueue": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	qa, err := c.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Name: "regional", Table: TableSpec{Existing: true, Name: "regional", PartitionKey: "pk", SortKey: "sk"},
		Ordered: true, Target: TargetSpec{Type: targetkind.SQS, QueueARN: qa.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]},
		MultiRegion: MultiRegionSpec{Regions: []string{region, "eu-west-1"}}, Alarms: AlarmsSpec{Enabled: true}}
	st := must.Create(t, ctx, c, spec)
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })
	n := NamesFor(spec.Name)
	got := describeAll(t, ctx, c, "regional-")
	conflicts, unavailable := got[n.Alarm(AlarmOrderingConflicts)], got[n.Alarm(AlarmTakeoverUnavailable)]
	if st.Alarms.OrderingConflicts != aws.ToString(conflicts.AlarmArn) || len(conflicts.Metrics) != 3 ||
		aws.ToString(conflicts.Metrics[2].Expression) != "FILL(relay, 0) + FILL(reconciler, 0)" {
		t.Errorf("ordering_conflicts: recorded %q, described %+v", st.Alarms.OrderingConflicts, conflicts)
	}
	if st.Alarms.TakeoverUnavailable != aws.ToString(unavailable.AlarmArn) || aws.ToString(unavailable.MetricName) != "TakeoverUnavailable" ||
		len(unavailable.Dimensions) != 1 || aws.ToString(unavailable.Dimensions[0].Value) != n.ReconcilerFunction {
		t.Errorf("takeover_unavailable: recorded %q, described %+v", st.Alarms.TakeoverUnavailable, unavailable)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Errorf("Read reports drift: %s", drift)
	}

	single := spec
	single.MultiRegion = MultiRegionSpec{}
	st = must.Update(t, ctx, c, single, st, "a single Region")
	got = describeAll(t, ctx, c, "regional-")
	for _, k := range []string{AlarmOrderingConflicts, AlarmTakeoverUnavailable} {
		if _, ok := got[n.Alarm(k)]; ok || st.Alarms.get(k) != "" {
			t.Errorf("%s of a single-Region pipeline: described %t, recorded %q", k, ok, st.Alarms.get(k))
		}
	}
	if len(st.Alarms.Map()) != len(AlarmKeys)-2 {
		t.Errorf("a single-Region pipeline has alarms %v, want every other", slices.Sorted(maps.Keys(st.Alarms.Map())))
	}
}
