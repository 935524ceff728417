package provision

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
)

// Keys of the alarms, as in State.Alarms and the provider's alarm_arns.
const (
	AlarmDLQNotEmpty      = "dlq_not_empty"
	AlarmRelayErrors      = "relay_errors"
	AlarmIteratorAge      = "iterator_age"
	AlarmOldestPendingAge = "oldest_pending_age"
	// AlarmEventsFailed raises on any event marked FAILED (poison) by the
	// relay; AlarmReconcilerEventsFailed by the reconciler.
	AlarmEventsFailed           = "events_failed"
	AlarmReconcilerEventsFailed = "reconciler_events_failed"
	// AlarmEnvironmentErrors raises on publish errors caused by the
	// environment (permission, missing bus or topic, KMS) in the relay;
	// AlarmReconcilerEnvironmentErrors in the reconciler. The events stay
	// pending until a person fixes the cause.
	AlarmEnvironmentErrors           = "environment_errors"
	AlarmReconcilerEnvironmentErrors = "reconciler_environment_errors"
	// AlarmStuck raises when the oldest pending event is older than
	// oldest_pending_age's threshold and nothing was published, by the
	// relay or the reconciler: the pipeline is stuck. oldest_pending_age
	// alone means behind, which a pipeline catching up after an outage is.
	AlarmStuck = "stuck"
	// AlarmOrderingConflicts raises, on an ordered multi-Region pipeline,
	// on any ordered event published out of its key's order because the
	// key was written in two Regions at once: a warning, nothing is lost.
	AlarmOrderingConflicts = "ordering_conflicts"
	// AlarmTakeoverUnavailable raises, on a multi-Region pipeline, when a
	// scheduled reconciler run could not read or write the Regions'
	// heartbeats and takeover claims and swept only its own Region.
	AlarmTakeoverUnavailable = "takeover_unavailable"
)

// AlarmKeys lists the alarm keys in the order the alarms are created.
var AlarmKeys = []string{AlarmDLQNotEmpty, AlarmRelayErrors, AlarmIteratorAge, AlarmOldestPendingAge,
	AlarmEventsFailed, AlarmEnvironmentErrors, AlarmReconcilerEventsFailed, AlarmReconcilerEnvironmentErrors, AlarmStuck,
	AlarmOrderingConflicts, AlarmTakeoverUnavailable}

// The relay's metric of publish errors by class (internal/relay/metrics).
const (
	metricPublishErrors   = "PublishErrors"
	dimensionErrorClass   = "ErrorClass"
	errorClassEnvironment = "environment"
	environmentErrorsHint = "publishing fails for a reason of the environment (a missing permission, bus or topic, or a disabled KMS key): the events stay pending until it is fixed; the function's log names the probable fix"
	eventsFailedHint      = "events were marked FAILED: they can never be accepted as they are; inspect them and requeue them once fixed"
)

// Defaults of an AlarmsSpec.
const (
	DefaultRelayErrorsThreshold             = 1
	DefaultIteratorAgeThresholdSeconds      = 5 * 60
	DefaultOldestPendingAgeThresholdSeconds = 15 * 60
	DefaultAlarmEvaluationPeriods           = 1
	DefaultTreatMissingData                 = "notBreaching"
	// alarmPeriod is the period of the relay's alarms: Lambda and SQS
	// publish these metrics every minute.
	alarmPeriod = 60
	// maxEvaluationSeconds bounds Period × EvaluationPeriods (one day).
	maxEvaluationSeconds = 86400
	// maxIteratorAgeSeconds: a stream keeps records 24 hours, so the
	// iterator age cannot grow beyond that.
	maxIteratorAgeSeconds = 86400
)

// TreatMissingDataValues are the values CloudWatch accepts.
var TreatMissingDataValues = []string{"breaching", "notBreaching", "ignore", "missing"}

// AlarmsSpec configures the CloudWatch alarms of the pipeline.
type AlarmsSpec struct {
	// Enabled creates the alarms; the zero Spec has none.
	Enabled bool
	// SNSTopicARN receives the alarm and OK notifications; empty sends
	// none.
	SNSTopicARN string
	// RelayErrorsThreshold is the number of relay errors per minute that
	// raises the relay_errors alarm; default 1.
	RelayErrorsThreshold int32
	// IteratorAgeThresholdSeconds is the age of the last record the relay
	// read above which iterator_age raises; default 300.
	IteratorAgeThresholdSeconds int32
	// OldestPendingAgeThresholdSeconds is the age of the oldest pending
	// event, as the reconciler reports it, above which oldest_pending_age
	// raises; default 900.
	OldestPendingAgeThresholdSeconds int32
	// EvaluationPeriods of the relay_errors, iterator_age and
	// oldest_pending_age alarms; default 1. dlq_not_empty raises on the
	// first message.
	EvaluationPeriods int32
	// TreatMissingData of the relay_errors, iterator_age and
	// oldest_pending_age alarms; default notBreaching. dlq_not_empty
	// always treats missing data as not breaching: SQS stops sending the
	// metrics of an inactive queue.
	TreatMissingData string
}

func (a AlarmsSpec) withDefaults() AlarmsSpec {
	a.RelayErrorsThreshold = cmp.Or(a.RelayErrorsThreshold, DefaultRelayErrorsThreshold)
	a.IteratorAgeThresholdSeconds = cmp.Or(a.IteratorAgeThresholdSeconds, DefaultIteratorAgeThresholdSeconds)
	a.OldestPendingAgeThresholdSeconds = cmp.Or(a.OldestPendingAgeThresholdSeconds, DefaultOldestPendingAgeThresholdSeconds)
	a.EvaluationPeriods = cmp.Or(a.EvaluationPeriods, DefaultAlarmEvaluationPeriods)
	a.TreatMissingData = cmp.Or(a.TreatMissingData, DefaultTreatMissingData)
	return a
}

func (s Spec) validateAlarms() error {
	a := s.Alarms
	if !a.Enabled {
		return nil
	}
	if a.SNSTopicARN != "" && !topicARNPattern.MatchString(a.SNSTopicARN) {
		return invalid("Alarms.SNSTopicARN", `use an SNS topic ARN such as "arn:aws:sns:us-east-1:123456789012:alerts"`, "is %q", a.SNSTopicARN)
	}
	switch {
	case a.RelayErrorsThreshold < 1:
		return invalid("Alarms.RelayErrorsThreshold", "use 1 or more errors per minute", "is %d", a.RelayErrorsThreshold)
	case a.IteratorAgeThresholdSeconds < 1 || a.IteratorAgeThresholdSeconds > maxIteratorAgeSeconds:
		return invalid("Alarms.IteratorAgeThresholdSeconds", "use 1 to 86400 seconds: a stream keeps records 24 hours", "is %d", a.IteratorAgeThresholdSeconds)
	case a.EvaluationPeriods < 1 || a.EvaluationPeriods*alarmPeriod > maxEvaluationSeconds:
		return invalid("Alarms.EvaluationPeriods", fmt.Sprintf("use 1 to %d one-minute periods (CloudWatch evaluates at most one day)", maxEvaluationSeconds/alarmPeriod), "is %d", a.EvaluationPeriods)
	case !slices.Contains(TreatMissingDataValues, a.TreatMissingData):
		return invalid("Alarms.TreatMissingData", `use "breaching", "notBreaching", "ignore" or "missing"`, "is %q", a.TreatMissingData)
	case a.OldestPendingAgeThresholdSeconds < 1:
		return invalid("Alarms.OldestPendingAgeThresholdSeconds", "use 1 second or more, such as 900", "is %d", a.OldestPendingAgeThresholdSeconds)
	}
	if s.Reconciler.Disabled {
		return nil
	}
	if minAge := int64(s.Reconciler.MinAge.Seconds()); int64(a.OldestPendingAgeThresholdSeconds) <= minAge {
		return invalidAgainst("Alarms.OldestPendingAgeThresholdSeconds", []string{"Reconciler.MinAge"},
			fmt.Sprintf("use more than the reconciler's min age (%d seconds): the reconciler reports only events older than that, and republishes them", minAge),
			"is %d", a.OldestPendingAgeThresholdSeconds)
	}
	if p := reconcilerPeriod(s.Reconciler.ScheduleExpression); int64(a.EvaluationPeriods)*int64(p) > maxEvaluationSeconds {
		return invalidAgainst("Alarms.EvaluationPeriods", []string{"Reconciler.ScheduleExpression"},
			fmt.Sprintf("use at most %d: the oldest_pending_age alarm's period is the reconciler's schedule (%d seconds) and CloudWatch evaluates at most one day", maxEvaluationSeconds/p, p),
			"is %d", a.EvaluationPeriods)
	}
	return nil
}

var rateExpression = regexp.MustCompile(`^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$`)

// reconcilerPeriod is the period of the oldest_pending_age alarm: the
// reconciler reports the metric once a run, so a period shorter than its
// schedule would see missing data between runs. A cron schedule gets 5
// minutes.
func reconcilerPeriod(expr string) int32 {
	m := rateExpression.FindStringSubmatch(expr)
	if m == nil {
		return 300
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 {
		return 300
	}
	return int32(min(int64(n)*rateUnitSeconds(m[2]), maxEvaluationSeconds))
}

// rateUnitSeconds is the length in seconds of the unit of a rate
// expression that rateExpression matched.
func rateUnitSeconds(unit string) int64 {
	switch {
	case strings.HasPrefix(unit, "hour"):
		return 3600
	case strings.HasPrefix(unit, "day"):
		return 86400
	}
	return 60
}

// AlarmDefinition is one CloudWatch metric alarm of a pipeline.
type AlarmDefinition struct {
	Key                string            `json:"key"`
	Name               string            `json:"name"`
	Description        string            `json:"description"`
	Namespace          string            `json:"namespace"`
	MetricName         string            `json:"metricName"`
	Dimensions         map[string]string `json:"dimensions"`
	Statistic          string            `json:"statistic"`
	Period             int32             `json:"period"`
	EvaluationPeriods  int32             `json:"evaluationPeriods"`
	Threshold          float64           `json:"threshold"`
	ComparisonOperator string            `json:"comparisonOperator"`
	TreatMissingData   string            `json:"treatMissingData"`
	// Actions are both the alarm and the OK actions.
	Actions []string `json:"actions"`
	// Metrics, when set, are the metrics and the expression of an alarm on
	// metric math, which has no Namespace, MetricName, Dimensions,
	// Statistic or Period of its own.
	Metrics []AlarmMetric `json:"metrics,omitempty"`
}

// AlarmMetric is a metric or an expression of an alarm on metric math.
type AlarmMetric struct {
	ID         string            `json:"id"`
	Expression string            `json:"expression,omitempty"`
	Namespace  string            `json:"namespace,omitempty"`
	MetricName string            `json:"metricName,omitempty"`
	Dimensions map[string]string `json:"dimensions,omitempty"`
	Statistic  string            `json:"statistic,omitempty"`
	Period     int32             `json:"period,omitempty"`
	// ReturnData is true for the one expression the alarm watches.
	ReturnData bool `json:"returnData"`
}

// AlarmDefinitions returns the alarms that s asks for, in AlarmKeys order:
// none when the alarms are disabled, and no oldest_pending_age without the
// reconciler.
func AlarmDefinitions(s Spec) []AlarmDefinition {
	s = s.WithDefaults()
	a := s.Alarms
	if !a.Enabled {
		return nil
	}
	n := NamesFor(s.Name)
	var actions []string
	if a.SNSTopicARN != "" {
		actions = []string{a.SNSTopicARN}
	}
	var def alarmDef = func(key, desc, namespace, metric, dimension, value, stat string, period, evals int32, threshold float64, cmp types.ComparisonOperator) AlarmDefinition {
		return AlarmDefinition{
			Key: key, Name: n.Alarm(key), Description: "Outbox pipeline " + s.Name + ": " + desc,
			Namespace: namespace, MetricName: metric, Dimensions: map[string]string{dimension: value},
			Statistic: stat, Period: period, EvaluationPeriods: evals, Threshold: threshold,
			ComparisonOperator: string(cmp), TreatMissingData: a.TreatMissingData, Actions: actions,
		}
	}
	dlq := def(AlarmDLQNotEmpty, "the relay's dead-letter queue has messages: batches ran out of retries (their events stay pending for the reconciler)",
		"AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", n.DeadLetterQueue, "Maximum",
		alarmPeriod, 1, 0, types.ComparisonOperatorGreaterThanThreshold)
	// SQS stops sending the metrics of a queue inactive for 6 hours: for
	// the dead-letter queue, missing data is an empty queue.
	dlq.TreatMissingData = "notBreaching"
	defs := []AlarmDefinition{
		dlq,
		def(AlarmRelayErrors, "the relay function fails",
			"AWS/Lambda", "Errors", "FunctionName", n.RelayFunction, "Sum",
			alarmPeriod, a.EvaluationPeriods, float64(a.RelayErrorsThreshold), types.ComparisonOperatorGreaterThanOrEqualToThreshold),
		def(AlarmIteratorAge, "the relay falls behind the table's stream",
			"AWS/Lambda", "IteratorAge", "FunctionName", n.RelayFunction, "Maximum",
			alarmPeriod, a.EvaluationPeriods, float64(a.IteratorAgeThresholdSeconds)*1000, types.ComparisonOperatorGreaterThanThreshold),
	}
	defs = append(defs, eventAlarms(def, AlarmEventsFailed, AlarmEnvironmentErrors, n.RelayFunction, "the relay")...)
	if !s.Reconciler.Disabled {
		defs = append(defs, eventAlarms(def, AlarmReconcilerEventsFailed, AlarmReconcilerEnvironmentErrors, n.ReconcilerFunction, "the reconciler")...)
		defs = append(defs, def(AlarmOldestPendingAge, "behind: pending events are older than the threshold; unless the stuck alarm is raised too, they are being published (`outbox status` says when they will be done)",
			metrics.Namespace, metrics.OldestPendingAge, metrics.DimensionFunctionName, n.ReconcilerFunction, "Maximum",
			reconcilerPeriod(s.Reconciler.ScheduleExpression), a.EvaluationPeriods, float64(a.OldestPendingAgeThresholdSeconds),
			types.ComparisonOperatorGreaterThanThreshold))
		defs = append(defs, stuckAlarm(def, s, n))
	}
	return append(defs, regionAlarms(def, s, n)...)
}

// regionAlarms are the alarms of a multi-Region pipeline (none for
// another): with ordered mode, ordering_conflicts on OrderingConflicts of
// both functions (either publishes through the ordered gate; the
// reconciler's only with it), and, with the reconciler,
// takeover_unavailable on its TakeoverUnavailable. Each raises on the
// first occurrence in a period and treats missing data as not breaching:
// OrderingConflicts is sent only when there are some, TakeoverUnavailable
// only by scheduled runs.
func regionAlarms(def alarmDef, s Spec, n Names) []AlarmDefinition {
	if len(s.MultiRegion.Regions) == 0 {
		return nil
	}
	var defs []AlarmDefinition
	if s.Ordered {
		d := def(AlarmOrderingConflicts, "warning: ordered events were published out of their key's order because the key was written in two Regions at once; nothing is lost and consumers drop repeats by event id, "+
			"but those events' order is undefined: write each ordering key in one Region at a time (a home Region per aggregate)",
			metrics.Namespace, metrics.OrderingConflicts, metrics.DimensionFunctionName, n.RelayFunction, "Sum",
			alarmPeriod, 1, 0, types.ComparisonOperatorGreaterThanThreshold)
		if !s.Reconciler.Disabled {
			d.Namespace, d.MetricName, d.Statistic, d.Period, d.Dimensions = "", "", "", 0, nil
			metric := func(id, function string) AlarmMetric {
				return AlarmMetric{ID: id, Namespace: metrics.Namespace, MetricName: metrics.OrderingConflicts,
					Dimensions: map[string]string{metrics.DimensionFunctionName: function}, Statistic: "Sum", Period: alarmPeriod}
			}
			d.Metrics = []AlarmMetric{metric("relay", n.RelayFunction), metric("reconciler", n.ReconcilerFunction),
				{ID: "conflicts", ReturnData: true, Expression: "FILL(relay, 0) + FILL(reconciler, 0)"}}
		}
		d.TreatMissingData = "notBreaching"
		defs = append(defs, d)
	}
	if !s.Reconciler.Disabled {
		d := def(AlarmTakeoverUnavailable, "the reconciler could not read or write the Regions' heartbeats and takeover claims and swept only its own Region's events: "+
			"while this lasts the Region writes no heartbeat (its peers take it over after the takeover delay, and publish some of its events twice) and takes over no silent peer; "+
			"the function's log names the error (a missing dynamodb:GetItem, PutItem or DeleteItem permission, throttling)",
			metrics.Namespace, metrics.TakeoverUnavailable, metrics.DimensionFunctionName, n.ReconcilerFunction, "Sum",
			reconcilerPeriod(s.Reconciler.ScheduleExpression), 1, 0, types.ComparisonOperatorGreaterThanThreshold)
		d.TreatMissingData = "notBreaching"
		defs = append(defs, d)
	}
	return defs
}

// stuckAlarm is the stuck alarm: in a period of the reconciler's schedule,
// the oldest pending event the reconciler found is older than the
// oldest_pending_age threshold and neither the relay nor the reconciler
// published an event (a function sends EventsPublished only from the
// invocations that had events to publish, so a missing value is 0:
// FILL). A period without a reconciler run has no OldestPendingAge, and
// so no value, treated as TreatMissingData says.
func stuckAlarm(def alarmDef, s Spec, n Names) AlarmDefinition {
	a := s.Alarms
	period := reconcilerPeriod(s.Reconciler.ScheduleExpression)
	metric := func(id, name, function, stat string) AlarmMetric {
		return AlarmMetric{ID: id, Namespace: metrics.Namespace, MetricName: name,
			Dimensions: map[string]string{metrics.DimensionFunctionName: function}, Statistic: stat, Period: period}
	}
	d := def(AlarmStuck, "stuck: pending events are older than the oldest_pending_age threshold and nothing was published; find the cause with `outbox status`, the functions' logs and the other alarms",
		"", "", "", "", "", 0, a.EvaluationPeriods, 0, types.ComparisonOperatorGreaterThanThreshold)
	d.Dimensions = nil
	d.Metrics = []AlarmMetric{
		metric("age", metrics.OldestPendingAge, n.ReconcilerFunction, "Maximum"),
		metric("relay", metrics.EventsPublished, n.RelayFunction, "Sum"),
		metric("reconciler", metrics.EventsPublished, n.ReconcilerFunction, "Sum"),
		{ID: "stuck", ReturnData: true, Expression: fmt.Sprintf("IF((age > %d) AND ((FILL(relay, 0) + FILL(reconciler, 0)) == 0), 1, 0)", a.OldestPendingAgeThresholdSeconds)},
	}
	return d
}

type alarmDef func(key, desc, namespace, metric, dimension, value, stat string, period, evals int32, threshold float64, cmp types.ComparisonOperator) AlarmDefinition

// eventAlarms are the alarms on the outbox metrics of one function: any
// event marked FAILED, any publish error of the environment class. Both
// raise on the first occurrence in a minute and treat missing data as not
// breaching (the metrics are emitted only when events flow).
func eventAlarms(def alarmDef, failedKey, envKey, function, who string) []AlarmDefinition {
	failed := def(failedKey, who+": "+eventsFailedHint, metrics.Namespace, metrics.EventsFailed, metrics.DimensionFunctionName, function, "Sum",
		alarmPeriod, 1, 0, types.ComparisonOperatorGreaterThanThreshold)
	env := def(envKey, who+": "+environmentErrorsHint, metrics.Namespace, metricPublishErrors, metrics.DimensionFunctionName, function, "Sum",
		alarmPeriod, 1, 0, types.ComparisonOperatorGreaterThanThreshold)
	env.Dimensions[dimensionErrorClass] = errorClassEnvironment
	failed.TreatMissingData, env.TreatMissingData = "notBreaching", "notBreaching"
	return []AlarmDefinition{failed, env}
}

func (d AlarmDefinition) input(tags map[string]string) *cloudwatch.PutMetricAlarmInput {
	in := &cloudwatch.PutMetricAlarmInput{
		AlarmName: aws.String(d.Name), AlarmDescription: aws.String(d.Description),
		Namespace: aws.String(d.Namespace), MetricName: aws.String(d.MetricName),
		Statistic: types.Statistic(d.Statistic), Period: aws.Int32(d.Period),
		EvaluationPeriods: aws.Int32(d.EvaluationPeriods), Threshold: aws.Float64(d.Threshold),
		ComparisonOperator: types.ComparisonOperator(d.ComparisonOperator),
		TreatMissingData:   aws.String(d.TreatMissingData),
		ActionsEnabled:     aws.Bool(true),
		AlarmActions:       d.Actions, OKActions: d.Actions,
	}
	in.Dimensions = dimensions(d.Dimensions)
	if len(d.Metrics) > 0 {
		in.Namespace, in.MetricName, in.Statistic, in.Period = nil, nil, "", nil
		for _, m := range d.Metrics {
			in.Metrics = append(in.Metrics, m.query())
		}
	}
	in.Tags = awsops.TagList(tags, cloudWatchTag)
	return in
}

func dimensions(m map[string]string) []types.Dimension {
	var out []types.Dimension
	for _, k := range awsops.SortedKeys(m) {
		out = append(out, types.Dimension{Name: aws.String(k), Value: aws.String(m[k])})
	}
	return out
}

// query is m as PutMetricAlarm takes it.
func (m AlarmMetric) query() types.MetricDataQuery {
	q := types.MetricDataQuery{Id: aws.String(m.ID), ReturnData: aws.Bool(m.ReturnData)}
	if m.Expression != "" {
		q.Expression = aws.String(m.Expression)
		return q
	}
	q.MetricStat = &types.MetricStat{
		Metric: &types.Metric{Namespace: aws.String(m.Namespace), MetricName: aws.String(m.MetricName), Dimensions: dimensions(m.Dimensions)},
		Period: aws.Int32(m.Period), Stat: aws.String(m.Statistic),
	}
	return q
}

// alarmMetricOf is the AlarmMetric of a query that DescribeAlarms returned.
func alarmMetricOf(q types.MetricDataQuery) AlarmMetric {
	m := AlarmMetric{ID: aws.ToString(q.Id), Expression: aws.ToString(q.Expression), ReturnData: q.ReturnData == nil || *q.ReturnData}
	if s := q.MetricStat; s != nil {
		m.Period, m.Statistic = aws.ToInt32(s.Period), aws.ToString(s.Stat)
		if s.Metric != nil {
			m.Namespace, m.MetricName = aws.ToString(s.Metric.Namespace), aws.ToString(s.Metric.MetricName)
			for _, dim := range s.Metric.Dimensions {
				if m.Dimensions == nil {
					m.Dimensions = map[string]string{}
				}
				m.Dimensions[aws.ToString(dim.Name)] = aws.ToString(dim.Value)
			}
		}
	}
	return m
}

// sameMetrics reports whether the queries of an alarm are want.
func sameMetrics(have []types.MetricDataQuery, want []AlarmMetric) bool {
	return slices.EqualFunc(have, want, func(q types.MetricDataQuery, m AlarmMetric) bool {
		h := alarmMetricOf(q)
		return h.ID == m.ID && h.Expression == m.Expression && h.Namespace == m.Namespace && h.MetricName == m.MetricName &&
			equalMaps(h.Dimensions, m.Dimensions) && h.Statistic == m.Statistic && h.Period == m.Period && h.ReturnData == m.ReturnData
	})
}

// diff lists the settings of have that differ from d.
func (d AlarmDefinition) diff(have types.MetricAlarm) []string {
	var fields awsops.Fields
	add := fields.Add
	dims := map[string]string{}
	for _, dim := range have.Dimensions {
		dims[aws.ToString(dim.Name)] = aws.ToString(dim.Value)
	}
	add(aws.ToString(have.Namespace) != d.Namespace || aws.ToString(have.MetricName) != d.MetricName || !sameMetrics(have.Metrics, d.Metrics), "metric")
	add(!equalMaps(dims, d.Dimensions), "dimensions")
	add(string(have.Statistic) != d.Statistic, "statistic")
	add(aws.ToInt32(have.Period) != d.Period, "period")
	add(aws.ToInt32(have.EvaluationPeriods) != d.EvaluationPeriods, "evaluation_periods")
	add(aws.ToFloat64(have.Threshold) != d.Threshold, "threshold")
	add(string(have.ComparisonOperator) != d.ComparisonOperator, "comparison_operator")
	add(aws.ToString(have.TreatMissingData) != d.TreatMissingData, "treat_missing_data")
	add(!aws.ToBool(have.ActionsEnabled) || !slices.Equal(have.AlarmActions, d.Actions) || !slices.Equal(have.OKActions, d.Actions), "actions")
	add(aws.ToString(have.AlarmDescription) != d.Description, "description")
	return fields
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// AlarmComponent is the Drift component of the alarm key.
func AlarmComponent(key string) string { return "alarm_" + key }

// AlarmARNs are the ARNs of a pipeline's alarms; empty when the alarm does
// not exist.
type AlarmARNs struct {
	DLQNotEmpty      string `json:"DLQNotEmpty"`
	RelayErrors      string `json:"RelayErrors"`
	IteratorAge      string `json:"IteratorAge"`
	OldestPendingAge string `json:"OldestPendingAge"`

	EventsFailed                string `json:"EventsFailed,omitempty"`
	EnvironmentErrors           string `json:"EnvironmentErrors,omitempty"`
	ReconcilerEventsFailed      string `json:"ReconcilerEventsFailed,omitempty"`
	ReconcilerEnvironmentErrors string `json:"ReconcilerEnvironmentErrors,omitempty"`
	Stuck                       string `json:"Stuck,omitempty"`
	OrderingConflicts           string `json:"OrderingConflicts,omitempty"`
	TakeoverUnavailable         string `json:"TakeoverUnavailable,omitempty"`
}

func (a *AlarmARNs) field(key string) *string {
	fields := map[string]*string{
		AlarmDLQNotEmpty: &a.DLQNotEmpty, AlarmRelayErrors: &a.RelayErrors,
		AlarmIteratorAge: &a.IteratorAge, AlarmOldestPendingAge: &a.OldestPendingAge,
		AlarmEventsFailed: &a.EventsFailed, AlarmEnvironmentErrors: &a.EnvironmentErrors,
		AlarmReconcilerEventsFailed: &a.ReconcilerEventsFailed, AlarmReconcilerEnvironmentErrors: &a.ReconcilerEnvironmentErrors,
		AlarmStuck: &a.Stuck, AlarmOrderingConflicts: &a.OrderingConflicts, AlarmTakeoverUnavailable: &a.TakeoverUnavailable,
	}
	if f, ok := fields[key]; ok {
		return f
	}
	panic("provision: unknown alarm key " + key)
}

func (a AlarmARNs) get(key string) string { return *a.field(key) }

func (a *AlarmARNs) set(key, arn string) { *a.field(key) = arn }

// recorded returns the names (by n) of the alarms among keys that a records.
func (a AlarmARNs) recorded(n Names, keys []string) []string {
	var names []string
	for _, k := range keys {
		if a.get(k) != "" {
			names = append(names, n.Alarm(k))
		}
	}
	return names
}

// Map returns the ARNs of the existing alarms by key.
func (a AlarmARNs) Map() map[string]string {
	out := map[string]string{}
	for _, k := range AlarmKeys {
		if v := a.get(k); v != "" {
			out[k] = v
		}
	}
	return out
}

// Exists reports whether any alarm is recorded.
func (a AlarmARNs) Exists() bool { return a != AlarmARNs{} }

// alarmsComponent is the alarms, which report each its own drift.
var alarmsComponent = componentDef{
	Recorded: func(st State) bool { return st.Alarms.Exists() },
	Ensure:   func(c *Provisioner, ctx context.Context, p *pass) error { return c.ensureAlarms(ctx, p.s, p.st) },
	Read:     func(c *Provisioner, ctx context.Context, p *pass) error { return c.readAlarms(ctx, p.s, p.st, p.d) },
	Remove:   func(c *Provisioner, ctx context.Context, st *State) error { return c.deleteAlarms(ctx, st) },
	Lookup:   func(c *Provisioner, ctx context.Context, p *pass) error { return c.lookupAlarms(ctx, &p.s, p.st) },
}

// describeAlarms returns the metric alarms that exist among names, by name.
func (c *Provisioner) describeAlarms(ctx context.Context, names []string) (map[string]types.MetricAlarm, error) {
	out := map[string]types.MetricAlarm{}
	if len(names) == 0 {
		return out, nil
	}
	p := cloudwatch.NewDescribeAlarmsPaginator(c.CloudWatch, &cloudwatch.DescribeAlarmsInput{
		AlarmNames: names, AlarmTypes: []types.AlarmType{types.AlarmTypeMetricAlarm},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, a := range page.MetricAlarms {
			out[aws.ToString(a.AlarmName)] = a
		}
	}
	return out, nil
}

// ensureAlarms creates or updates the alarms that s asks for and deletes
// the recorded ones it no longer asks for.
func (c *Provisioner) ensureAlarms(ctx context.Context, s Spec, st *State) error {
	defs := AlarmDefinitions(s)
	wanted := map[string]bool{}
	var names []string
	for _, d := range defs {
		wanted[d.Key] = true
		names = append(names, d.Name)
	}
	var stale []string
	for _, k := range AlarmKeys {
		if !wanted[k] && st.Alarms.get(k) != "" {
			stale = append(stale, k)
		}
	}
	if err := c.deleteAlarms(ctx, st, stale...); err != nil {
		return err
	}
	have, err := c.describeAlarms(ctx, names)
	if err != nil {
		return fmt.Errorf("reading alarms (%s): %w", strings.Join(names, ", "), err)
	}
	tags := s.tags()
	for _, d := range defs {
		a, exists := have[d.Name]
		known := st.Alarms.get(d.Key) != ""
		switch {
		case exists && !known:
			return fmt.Errorf("creating alarm (%s): an alarm of that name already exists: delete it or choose another pipeline name", d.Name)
		case !exists:
			if _, err := c.CloudWatch.PutMetricAlarm(ctx, d.input(tags)); err != nil {
				return fmt.Errorf("creating alarm (%s): %w", d.Name, err)
			}
			created, err := c.describeAlarms(ctx, []string{d.Name})
			if err != nil {
				return fmt.Errorf("reading alarm (%s) after creating it: %w", d.Name, err)
			}
			if created[d.Name].AlarmArn == nil {
				return fmt.Errorf("reading alarm (%s) after creating it: CloudWatch does not describe it", d.Name)
			}
			st.Alarms.set(d.Key, aws.ToString(created[d.Name].AlarmArn))
		default:
			st.Alarms.set(d.Key, aws.ToString(a.AlarmArn))
			if len(d.diff(a)) > 0 {
				// PutMetricAlarm replaces the whole configuration; its tags
				// apply only to a new alarm.
				if _, err := c.CloudWatch.PutMetricAlarm(ctx, d.input(nil)); err != nil {
					return fmt.Errorf("updating alarm (%s): %w", d.Name, err)
				}
			}
			if err := c.syncAlarmTags(ctx, aws.ToString(a.AlarmArn), tags); err != nil {
				return fmt.Errorf("tagging alarm (%s): %w", d.Name, err)
			}
		}
	}
	return nil
}

func cloudWatchTag(k, v *string) types.Tag { return types.Tag{Key: k, Value: v} }

func (c *Provisioner) syncAlarmTags(ctx context.Context, arn string, want map[string]string) error {
	out, err := c.CloudWatch.ListTagsForResource(ctx, &cloudwatch.ListTagsForResourceInput{ResourceARN: aws.String(arn)})
	if err != nil {
		return err
	}
	have := awsops.TagMap(out.Tags, func(t types.Tag) (*string, *string) { return t.Key, t.Value })
	return awsops.SyncTags(ctx, have, want, func(ctx context.Context, keys []string) error {
		_, err := c.CloudWatch.UntagResource(ctx, &cloudwatch.UntagResourceInput{ResourceARN: aws.String(arn), TagKeys: keys})
		return err
	}, func(ctx context.Context, set map[string]string) error {
		_, err := c.CloudWatch.TagResource(ctx, &cloudwatch.TagResourceInput{ResourceARN: aws.String(arn), Tags: awsops.TagList(set, cloudWatchTag)})
		return err
	})
}

// deleteAlarms deletes the recorded alarms of keys (every alarm when none
// is given); alarms already gone are skipped.
func (c *Provisioner) deleteAlarms(ctx context.Context, st *State, keys ...string) error {
	if len(keys) == 0 {
		keys = AlarmKeys
	}
	names := st.Alarms.recorded(NamesFor(st.Name), keys)
	if len(names) == 0 {
		return nil
	}
	// DeleteAlarms fails as a whole when one of the names does not exist.
	have, err := c.describeAlarms(ctx, names)
	if err != nil {
		return fmt.Errorf("deleting alarms (%s): %w", strings.Join(names, ", "), err)
	}
	var existing []string
	for _, name := range names {
		if _, ok := have[name]; ok {
			existing = append(existing, name)
		}
	}
	if len(existing) > 0 {
		_, err := c.CloudWatch.DeleteAlarms(ctx, &cloudwatch.DeleteAlarmsInput{AlarmNames: existing})
		if err := awsops.IgnoreNotFound(err); err != nil {
			return fmt.Errorf("deleting alarms (%s): %w", strings.Join(existing, ", "), err)
		}
	}
	for _, k := range keys {
		st.Alarms.set(k, "")
	}
	return nil
}

// readAlarms records the drift of the alarms: missing, changed, not
// recorded although s asks for them, or recorded although it does not.
func (c *Provisioner) readAlarms(ctx context.Context, s Spec, st *State, d *Drift) error {
	n := NamesFor(st.Name)
	names := st.Alarms.recorded(n, AlarmKeys)
	have, err := c.describeAlarms(ctx, names)
	if err != nil {
		return fmt.Errorf("reading alarms (%s): %w", strings.Join(names, ", "), err)
	}
	defs := map[string]AlarmDefinition{}
	for _, def := range AlarmDefinitions(s) {
		defs[def.Key] = def
	}
	for _, k := range AlarmKeys {
		def, wanted := defs[k]
		if st.Alarms.get(k) == "" {
			if wanted {
				d.AddMissing(AlarmComponent(k))
			}
			continue
		}
		a, ok := have[n.Alarm(k)]
		switch {
		case !ok:
			st.Alarms.set(k, "")
			if wanted {
				d.AddMissing(AlarmComponent(k))
			}
		case !wanted:
			st.Alarms.set(k, aws.ToString(a.AlarmArn))
			d.AddChanged(AlarmComponent(k), "disabled")
		default:
			st.Alarms.set(k, aws.ToString(a.AlarmArn))
			d.AddChanged(AlarmComponent(k), def.diff(a)...)
		}
	}
	return nil
}

// lookupAlarms records the pipeline's existing alarms in st and their
// settings in s, for import.
func (c *Provisioner) lookupAlarms(ctx context.Context, s *Spec, st *State) error {
	n := NamesFor(s.Name)
	var names []string
	for _, k := range AlarmKeys {
		names = append(names, n.Alarm(k))
	}
	have, err := c.describeAlarms(ctx, names)
	if err != nil {
		return fmt.Errorf("reading alarms (%s): %w", strings.Join(names, ", "), err)
	}
	a := AlarmsSpec{}
	for _, k := range AlarmKeys {
		m, ok := have[n.Alarm(k)]
		if !ok {
			continue
		}
		a.Enabled = true
		st.Alarms.set(k, aws.ToString(m.AlarmArn))
		if len(m.AlarmActions) > 0 {
			a.SNSTopicARN = m.AlarmActions[0]
		}
		a.TreatMissingData = aws.ToString(m.TreatMissingData)
		threshold := aws.ToFloat64(m.Threshold)
		switch k {
		case AlarmRelayErrors:
			a.RelayErrorsThreshold = int32(threshold)
			a.EvaluationPeriods = aws.ToInt32(m.EvaluationPeriods)
		case AlarmIteratorAge:
			a.IteratorAgeThresholdSeconds = int32(threshold / 1000)
		case AlarmOldestPendingAge:
			a.OldestPendingAgeThresholdSeconds = int32(threshold)
		}
	}
	s.Alarms = a
	return nil
}
