package cloudwatch_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	cw "github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/schemas"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/smithy-go/transport/http/protocol/awsjson"
	"github.com/aws/smithy-go/transport/http/protocol/awsquery"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/cloudwatch"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// protocol is a wire protocol the SDK client is switched to: CloudWatch
// serves rpcv2Cbor (the SDK's default), awsJson1_0 and awsQuery.
type protocol = localawstest.Protocol[cw.Options]

var protocols = []protocol{
	{Name: "cbor", Option: func(*cw.Options) {}},
	{Name: "json", Option: func(o *cw.Options) { o.Protocol = awsjson.New10(schemas.GraniteServiceVersion20100801) }},
	{Name: "query", Option: func(o *cw.Options) { o.Protocol = awsquery.New(schemas.GraniteServiceVersion20100801) }},
}

// eachProtocol runs test once per wire protocol, in parallel.
func eachProtocol(t *testing.T, test func(*testing.T, protocol)) {
	localawstest.EachProtocol(t, protocols, test)
}

func TestAlarmCRUD(t *testing.T) { eachProtocol(t, testAlarmCRUD) }

func TestPutMetricAlarmValidation(t *testing.T) { eachProtocol(t, testPutMetricAlarmValidation) }

func start(t *testing.T, p protocol) *cw.Client {
	t.Helper()
	s := localawstest.StartEmpty(t)
	localawstest.Serve(t, s, cloudwatch.New(s.Env()))
	return cw.NewFromConfig(localawstest.Config(s), func(o *cw.Options) { o.RetryMaxAttempts = 1 }, p.Option)
}

// modelled names the error shapes of the awsQuery codes.
var modelled = map[string]string{
	"InvalidParameterValue":       "InvalidParameterValueException",
	"InvalidParameterCombination": "InvalidParameterCombinationException",
	"MissingParameter":            "MissingRequiredParameterException",
}

func testAlarmCRUD(t *testing.T, p protocol) {
	c := start(t, p)
	ctx := context.Background()
	dlq := "arn:aws:sns:us-east-1:000000000000:alerts"
	in := &cw.PutMetricAlarmInput{
		AlarmName: aws.String("outbox-dlq-depth"), AlarmDescription: aws.String("DLQ not empty"),
		Namespace: aws.String("AWS/SQS"), MetricName: aws.String("ApproximateNumberOfMessagesVisible"), Statistic: cwtypes.StatisticMaximum,
		Dimensions: []cwtypes.Dimension{{Name: aws.String("QueueName"), Value: aws.String("dlq")}},
		Period:     aws.Int32(60), EvaluationPeriods: aws.Int32(3), DatapointsToAlarm: aws.Int32(2), Threshold: aws.Float64(0.5),
		ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanThreshold, TreatMissingData: aws.String("notBreaching"),
		AlarmActions: []string{dlq}, OKActions: []string{dlq}, ActionsEnabled: aws.Bool(true),
		Tags: []cwtypes.Tag{{Key: aws.String("team"), Value: aws.String("outbox")}},
	}
	if _, err := c.PutMetricAlarm(ctx, in); err != nil {
		t.Fatal(err)
	}
	math := &cw.PutMetricAlarmInput{
		AlarmName: aws.String("outbox-error-rate"), EvaluationPeriods: aws.Int32(1), Threshold: aws.Float64(5),
		ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanOrEqualToThreshold,
		Metrics: []cwtypes.MetricDataQuery{
			{Id: aws.String("e"), Expression: aws.String("100*errors/invocations"), Label: aws.String("rate"), ReturnData: aws.Bool(true)},
			{Id: aws.String("errors"), ReturnData: aws.Bool(false), MetricStat: &cwtypes.MetricStat{Period: aws.Int32(300), Stat: aws.String("Sum"),
				Metric: &cwtypes.Metric{Namespace: aws.String("AWS/Lambda"), MetricName: aws.String("Errors")}}},
			{Id: aws.String("invocations"), ReturnData: aws.Bool(false), MetricStat: &cwtypes.MetricStat{Period: aws.Int32(300), Stat: aws.String("Sum"),
				Metric: &cwtypes.Metric{Namespace: aws.String("AWS/Lambda"), MetricName: aws.String("Invocations")}}},
		},
	}
	if _, err := c.PutMetricAlarm(ctx, math); err != nil {
		t.Fatal(err)
	}

	out, err := c.DescribeAlarms(ctx, &cw.DescribeAlarmsInput{AlarmNames: []string{"outbox-dlq-depth"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.MetricAlarms) != 1 {
		t.Fatalf("alarms = %+v", out.MetricAlarms)
	}
	a := out.MetricAlarms[0]
	if aws.ToString(a.AlarmArn) != "arn:aws:cloudwatch:us-east-1:000000000000:alarm:outbox-dlq-depth" || a.StateValue != cwtypes.StateValueInsufficientData ||
		aws.ToFloat64(a.Threshold) != 0.5 || aws.ToInt32(a.Period) != 60 || aws.ToInt32(a.EvaluationPeriods) != 3 || aws.ToInt32(a.DatapointsToAlarm) != 2 ||
		a.Statistic != cwtypes.StatisticMaximum || len(a.Dimensions) != 1 || aws.ToString(a.Dimensions[0].Value) != "dlq" ||
		len(a.AlarmActions) != 1 || aws.ToString(a.TreatMissingData) != "notBreaching" || aws.ToString(a.AlarmDescription) != "DLQ not empty" ||
		a.AlarmConfigurationUpdatedTimestamp == nil || a.AlarmConfigurationUpdatedTimestamp.IsZero() || !aws.ToBool(a.ActionsEnabled) {
		t.Fatalf("alarm = %+v", a)
	}
	if d := time.Since(*a.AlarmConfigurationUpdatedTimestamp); d < -time.Minute || d > time.Minute {
		t.Fatalf("AlarmConfigurationUpdatedTimestamp %v is not about now", a.AlarmConfigurationUpdatedTimestamp)
	}
	prefixed, err := c.DescribeAlarms(ctx, &cw.DescribeAlarmsInput{AlarmNamePrefix: aws.String("outbox-")})
	if err != nil || len(prefixed.MetricAlarms) != 2 {
		t.Fatalf("prefix = %+v, %v", prefixed, err)
	}
	m := prefixed.MetricAlarms[1]
	if aws.ToString(m.AlarmName) != "outbox-error-rate" || len(m.Metrics) != 3 || aws.ToString(m.Metrics[1].MetricStat.Metric.MetricName) != "Errors" || aws.ToBool(m.Metrics[1].ReturnData) {
		t.Fatalf("metric math alarm = %+v", m)
	}
	page, err := c.DescribeAlarms(ctx, &cw.DescribeAlarmsInput{MaxRecords: aws.Int32(1)})
	if err != nil || len(page.MetricAlarms) != 1 || page.NextToken == nil {
		t.Fatalf("page = %+v, %v", page, err)
	}

	checkAlarmTags(t, c, a.AlarmArn)

	checkAlarmUpdateAndDelete(t, c, in)
}

// checkAlarmUpdateAndDelete updates alarm in's threshold, then deletes it
// and outbox-error-rate, and deletes the alarm again.
func checkAlarmUpdateAndDelete(t *testing.T, c *cw.Client, in *cw.PutMetricAlarmInput) {
	t.Helper()
	ctx := context.Background()
	// Update keeps the alarm and changes its configuration.
	in.Threshold = aws.Float64(10)
	if _, err := c.PutMetricAlarm(ctx, in); err != nil {
		t.Fatal(err)
	}
	out, _ := c.DescribeAlarms(ctx, &cw.DescribeAlarmsInput{AlarmNames: []string{"outbox-dlq-depth"}})
	if aws.ToFloat64(out.MetricAlarms[0].Threshold) != 10 {
		t.Fatalf("threshold after update = %v", aws.ToFloat64(out.MetricAlarms[0].Threshold))
	}

	if _, err := c.DeleteAlarms(ctx, &cw.DeleteAlarmsInput{AlarmNames: []string{"outbox-dlq-depth", "outbox-error-rate"}}); err != nil {
		t.Fatal(err)
	}
	out, err := c.DescribeAlarms(ctx, &cw.DescribeAlarmsInput{})
	if err != nil || len(out.MetricAlarms) != 0 {
		t.Fatalf("after delete = %+v, %v", out, err)
	}
	_, err = c.DeleteAlarms(ctx, &cw.DeleteAlarmsInput{AlarmNames: []string{"outbox-dlq-depth"}})
	if code := localawstest.ErrorCode(err); code != "ResourceNotFound" {
		t.Fatalf("delete missing = %v", err)
	}
}

// checkAlarmTags checks the tags of alarm arn (created with team=outbox)
// through a change, and the error for a missing alarm.
func checkAlarmTags(t *testing.T, c *cw.Client, arn *string) {
	t.Helper()
	ctx := context.Background()
	tags, err := c.ListTagsForResource(ctx, &cw.ListTagsForResourceInput{ResourceARN: arn})
	if err != nil || len(tags.Tags) != 1 || aws.ToString(tags.Tags[0].Value) != "outbox" {
		t.Fatalf("tags = %+v, %v", tags, err)
	}
	if _, err := c.TagResource(ctx, &cw.TagResourceInput{ResourceARN: arn, Tags: []cwtypes.Tag{{Key: aws.String("env"), Value: aws.String("test")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UntagResource(ctx, &cw.UntagResourceInput{ResourceARN: arn, TagKeys: []string{"team"}}); err != nil {
		t.Fatal(err)
	}
	tags, _ = c.ListTagsForResource(ctx, &cw.ListTagsForResourceInput{ResourceARN: arn})
	if len(tags.Tags) != 1 || aws.ToString(tags.Tags[0].Key) != "env" {
		t.Fatalf("tags after update = %+v", tags.Tags)
	}
	_, err = c.ListTagsForResource(ctx, &cw.ListTagsForResourceInput{ResourceARN: aws.String("arn:aws:cloudwatch:us-east-1:000000000000:alarm:nope")})
	localawstest.WantError[*cwtypes.ResourceNotFoundException](t, err, "tags of missing alarm")
}

func testPutMetricAlarmValidation(t *testing.T, p protocol) {
	c := start(t, p)
	ctx := context.Background()
	base := func() *cw.PutMetricAlarmInput {
		return &cw.PutMetricAlarmInput{AlarmName: aws.String("a"), Namespace: aws.String("N"), MetricName: aws.String("M"),
			Statistic: cwtypes.StatisticSum, Period: aws.Int32(60), EvaluationPeriods: aws.Int32(1), Threshold: aws.Float64(1),
			ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanThreshold}
	}
	tests := []struct {
		name   string
		modify func(*cw.PutMetricAlarmInput)
		code   string
	}{
		{"valid", func(*cw.PutMetricAlarmInput) {}, ""},
		{"bad period", func(in *cw.PutMetricAlarmInput) { in.Period = aws.Int32(45) }, "InvalidParameterValue"},
		{"both statistics", func(in *cw.PutMetricAlarmInput) { in.ExtendedStatistic = aws.String("p99") }, "InvalidParameterCombination"},
		{"no namespace", func(in *cw.PutMetricAlarmInput) { in.Namespace = nil }, "MissingParameter"},
		{"datapoints above periods", func(in *cw.PutMetricAlarmInput) { in.DatapointsToAlarm = aws.Int32(2) }, "InvalidParameterValue"},
		{"bad missing data", func(in *cw.PutMetricAlarmInput) { in.TreatMissingData = aws.String("zero") }, "InvalidParameterValue"},
		{"metrics with metric name", func(in *cw.PutMetricAlarmInput) {
			in.Metrics = []cwtypes.MetricDataQuery{{Id: aws.String("e"), Expression: aws.String("1")}}
		}, "InvalidParameterCombination"},
	}
	for _, tc := range tests {
		in := base()
		tc.modify(in)
		_, err := c.PutMetricAlarm(ctx, in)
		want := tc.code
		if p.Name == "query" && modelled[want] != "" {
			// awsQuery carries the query code, which the SDK maps to
			// the modelled error and reports by its name.
			want = modelled[want]
		}
		if code := localawstest.ErrorCode(err); code != want {
			t.Errorf("%s: error %v, want code %q", tc.name, err, want)
		}
	}
}
