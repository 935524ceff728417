package differential_test

import (
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwschemas "github.com/aws/aws-sdk-go-v2/service/cloudwatch/schemas"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	logtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	schedtypes "github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/smithy-go/transport/http/protocol/awsquery"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

func TestDifferentialScheduler(t *testing.T) {
	compareOn(t, "scheduler/schedules", scheduler.NewFromConfig, func(r *run, c *scheduler.Client) {
		g, err := c.CreateScheduleGroup(r.ctx, &scheduler.CreateScheduleGroupInput{Name: aws.String("diff-group")})
		r.rec("CreateScheduleGroup", g, err)
		role := r.schedulerRole("diff-scheduler")
		if role == nil {
			return
		}
		target := &schedtypes.Target{Arn: aws.String("arn:aws:lambda:us-east-1:123456789012:function:diff-reconciler"),
			RoleArn: role, Input: aws.String(`{"reconcile":true}`)}
		for _, tc := range []struct{ name, expr, role string }{
			{"rate", "rate(5 minutes)", ""}, {"cron", "cron(0/15 * * * ? *)", ""}, {"bad-rate-unit", "rate(5 minute)", ""},
			{"bad-cron", "cron(0 25 * * ? *)", ""}, {"five-field-cron", "cron(0 * * * *)", ""}, {"one-time", "at(2030-01-01T00:00:00)", ""},
			{"missing-role", "rate(5 minutes)", "arn:aws:iam::123456789012:role/diff-no-such-role"},
		} {
			tgt := *target
			if tc.role != "" {
				tgt.RoleArn = aws.String(tc.role)
			}
			out, err := c.CreateSchedule(r.ctx, &scheduler.CreateScheduleInput{Name: aws.String("diff-" + tc.name), GroupName: aws.String("diff-group"),
				ScheduleExpression: aws.String(tc.expr), Target: &tgt, ScheduleExpressionTimezone: aws.String("Europe/Paris"),
				FlexibleTimeWindow: &schedtypes.FlexibleTimeWindow{Mode: schedtypes.FlexibleTimeWindowModeFlexible, MaximumWindowInMinutes: aws.Int32(5)}})
			r.rec("CreateSchedule "+tc.name, out, err)
		}
		get, err := c.GetSchedule(r.ctx, &scheduler.GetScheduleInput{Name: aws.String("diff-rate"), GroupName: aws.String("diff-group")})
		r.rec("GetSchedule", get, err)
		upd, err := c.UpdateSchedule(r.ctx, &scheduler.UpdateScheduleInput{Name: aws.String("diff-rate"), GroupName: aws.String("diff-group"),
			ScheduleExpression: aws.String("rate(1 minute)"), Target: target, State: schedtypes.ScheduleStateDisabled,
			FlexibleTimeWindow: &schedtypes.FlexibleTimeWindow{Mode: schedtypes.FlexibleTimeWindowModeOff}})
		r.rec("UpdateSchedule", upd, err)
		get, err = c.GetSchedule(r.ctx, &scheduler.GetScheduleInput{Name: aws.String("diff-rate"), GroupName: aws.String("diff-group")})
		r.rec("GetSchedule after update", get, err)
		missing, err := c.GetSchedule(r.ctx, &scheduler.GetScheduleInput{Name: aws.String("diff-none"), GroupName: aws.String("diff-group")})
		r.rec("GetSchedule missing", missing, err)
		list, err := c.ListSchedules(r.ctx, &scheduler.ListSchedulesInput{GroupName: aws.String("diff-group")})
		if err == nil {
			sort.Slice(list.Schedules, func(i, j int) bool { return *list.Schedules[i].Name < *list.Schedules[j].Name })
		}
		r.rec("ListSchedules", list, err)
		for _, name := range []string{"diff-rate", "diff-cron", "diff-one-time"} {
			_, err = c.DeleteSchedule(r.ctx, &scheduler.DeleteScheduleInput{Name: aws.String(name), GroupName: aws.String("diff-group")})
			r.rec("DeleteSchedule "+name, nil, err)
		}
		_, err = c.DeleteScheduleGroup(r.ctx, &scheduler.DeleteScheduleGroupInput{Name: aws.String("diff-group")})
		r.rec("DeleteScheduleGroup", nil, err)
	})
}

// schedulerRole creates a role the scheduler may assume and returns its
// ARN, or nil after recording the failure.
func (r *run) schedulerRole(name string) *string {
	out, err := iam.NewFromConfig(r.cfg).CreateRole(r.ctx, &iam.CreateRoleInput{RoleName: aws.String(name),
		AssumeRolePolicyDocument: aws.String(localawstest.TrustPolicy("scheduler.amazonaws.com"))})
	if err != nil {
		r.rec("CreateRole", nil, err)
		return nil
	}
	return out.Role.Arn
}

func TestDifferentialLogs(t *testing.T) {
	compareOn(t, "logs/groups", cloudwatchlogs.NewFromConfig, func(r *run, c *cloudwatchlogs.Client) {
		group := aws.String("/aws/lambda/diff-relay")
		_, err := c.CreateLogGroup(r.ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: group})
		r.rec("CreateLogGroup", nil, err)
		_, err = c.CreateLogGroup(r.ctx, &cloudwatchlogs.CreateLogGroupInput{LogGroupName: group})
		r.rec("CreateLogGroup again", nil, err)
		_, err = c.PutRetentionPolicy(r.ctx, &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: group, RetentionInDays: aws.Int32(14)})
		r.rec("PutRetentionPolicy", nil, err)
		_, err = c.PutRetentionPolicy(r.ctx, &cloudwatchlogs.PutRetentionPolicyInput{LogGroupName: group, RetentionInDays: aws.Int32(15)})
		r.rec("PutRetentionPolicy invalid days", nil, err)
		dg, err := c.DescribeLogGroups(r.ctx, &cloudwatchlogs.DescribeLogGroupsInput{LogGroupNamePrefix: aws.String("/aws/lambda/diff-")})
		r.rec("DescribeLogGroups", dg, err)
		_, err = c.CreateLogStream(r.ctx, &cloudwatchlogs.CreateLogStreamInput{LogGroupName: group, LogStreamName: aws.String("s1")})
		r.rec("CreateLogStream", nil, err)
		now := time.Now().UnixMilli()
		pe, err := c.PutLogEvents(r.ctx, &cloudwatchlogs.PutLogEventsInput{LogGroupName: group, LogStreamName: aws.String("s1"), LogEvents: []logtypes.InputLogEvent{
			{Timestamp: aws.Int64(now - 2), Message: aws.String(`{"level":"ERROR","msg":"publish failed","class":"environment"}`)},
			{Timestamp: aws.Int64(now - 1), Message: aws.String(`{"level":"INFO","msg":"published","n":3}`)},
			{Timestamp: aws.Int64(now), Message: aws.String("plain text ERROR line")},
		}})
		r.rec("PutLogEvents", pe, err)
		ge, err := c.GetLogEvents(r.ctx, &cloudwatchlogs.GetLogEventsInput{LogGroupName: group, LogStreamName: aws.String("s1"), StartFromHead: aws.Bool(true)})
		r.rec("GetLogEvents", ge, err)
		for _, p := range []struct{ name, pattern string }{{"term", "ERROR"}, {"json", `{ $.level = "ERROR" }`}, {"all", ""}} {
			fe, err := c.FilterLogEvents(r.ctx, &cloudwatchlogs.FilterLogEventsInput{LogGroupName: group, FilterPattern: aws.String(p.pattern)})
			r.rec("FilterLogEvents "+p.name, fe, err)
		}
		ds, err := c.DescribeLogStreams(r.ctx, &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: group})
		r.rec("DescribeLogStreams", ds, err)
		_, err = c.DeleteLogGroup(r.ctx, &cloudwatchlogs.DeleteLogGroupInput{LogGroupName: group})
		r.rec("DeleteLogGroup", nil, err)
		_, err = c.DeleteLogGroup(r.ctx, &cloudwatchlogs.DeleteLogGroupInput{LogGroupName: group})
		r.rec("DeleteLogGroup again", nil, err)
	})
}

func TestDifferentialCloudWatchAlarms(t *testing.T) {
	compare(t, "cloudwatch/alarms", func(r *run) {
		c := cloudwatch.NewFromConfig(r.cfg, func(o *cloudwatch.Options) {
			if r.target == "moto" {
				// moto 5.2.1 serves CloudWatch in awsQuery and awsJson1_0,
				// not in rpcv2Cbor, the client's default; the responses
				// compare after decoding either way.
				o.Protocol = awsquery.New(cwschemas.GraniteServiceVersion20100801)
			}
		})
		_, err := c.PutMetricAlarm(r.ctx, &cloudwatch.PutMetricAlarmInput{AlarmName: aws.String("diff-dlq-depth"),
			Namespace: aws.String("AWS/SQS"), MetricName: aws.String("ApproximateNumberOfMessagesVisible"),
			Dimensions: []cwtypes.Dimension{{Name: aws.String("QueueName"), Value: aws.String("diff-dlq")}},
			Statistic:  cwtypes.StatisticMaximum, Period: aws.Int32(60), EvaluationPeriods: aws.Int32(1), Threshold: aws.Float64(0),
			ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanThreshold, TreatMissingData: aws.String("notBreaching"),
			AlarmActions: []string{"arn:aws:sns:us-east-1:123456789012:diff-alerts"}, AlarmDescription: aws.String("events are dead-lettered")})
		r.rec("PutMetricAlarm", nil, err)
		_, err = c.PutMetricAlarm(r.ctx, &cloudwatch.PutMetricAlarmInput{AlarmName: aws.String("diff-bad"), MetricName: aws.String("M"),
			Namespace: aws.String("N"), Period: aws.Int32(60), EvaluationPeriods: aws.Int32(1), Threshold: aws.Float64(1),
			ComparisonOperator: cwtypes.ComparisonOperatorGreaterThanThreshold})
		r.rec("PutMetricAlarm without a statistic", nil, err)
		d, err := c.DescribeAlarms(r.ctx, &cloudwatch.DescribeAlarmsInput{AlarmNames: []string{"diff-dlq-depth"}})
		r.rec("DescribeAlarms", d, err)
		_, err = c.DeleteAlarms(r.ctx, &cloudwatch.DeleteAlarmsInput{AlarmNames: []string{"diff-dlq-depth"}})
		r.rec("DeleteAlarms", nil, err)
		d, err = c.DescribeAlarms(r.ctx, &cloudwatch.DescribeAlarmsInput{AlarmNames: []string{"diff-dlq-depth"}})
		r.rec("DescribeAlarms after delete", d, err)
	})
}
