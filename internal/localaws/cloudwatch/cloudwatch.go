// Package cloudwatch is the local stack's CloudWatch metric alarms (service
// monitoring, GraniteServiceVersion20100801): PutMetricAlarm,
// DescribeAlarms, DeleteAlarms and tagging, and metrics (metrics.go:
// PutMetricData, GetMetricStatistics, ListMetrics and the in-process
// PutMetric other services publish with), in the three protocols AWS
// serves: smithy rpcv2Cbor (current SDKs), awsJson1_0 (X-Amz-Target
// GraniteServiceVersion20100801.*) and awsQuery (older SDKs and CLIs). The
// handlers read and write the JSON form; the router transcodes the others
// through the SDK's schemas of the operations (operations.go). Alarms are
// stored and described; they are not evaluated against metrics and stay
// in INSUFFICIENT_DATA.
package cloudwatch

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// Service is CloudWatch (alarms).
type Service struct {
	*awsapi.Lifecycle
	env    *awsapi.Env
	ops    awsapi.Operations
	shapes awsapi.Shapes

	mu      sync.RWMutex
	alarms  map[string]*alarm
	metrics map[metricKey]*metric
}

type alarm struct {
	name, arn      string
	config         doc // the PutMetricAlarm input, minus Tags
	tags           []kv
	updated, state time.Time
}

type kv = awsapi.Tag

// doc is a JSON object of the API's JSON form, numbers as json.Number.
type doc = map[string]any

// New returns an empty CloudWatch.
func New(env *awsapi.Env) *Service {
	s := &Service{Lifecycle: awsapi.NewLifecycle(), env: env, alarms: map[string]*alarm{}}
	s.ops = s.operations()
	s.Lists(s.mu.RLocker(), s.inventory)
	s.shapes = s.ops.Shapes()
	return s
}

// Spec implements awsapi.Service.
func (s *Service) Spec() awsapi.Spec {
	return awsapi.Spec{Name: "cloudwatch", Protocol: awsapi.JSON10, TargetPrefix: "GraniteServiceVersion20100801",
		SigningName: "monitoring", ErrorNamespace: "com.amazonaws.cloudwatch", XMLNamespace: xmlNamespace,
		Protocols: []awsapi.Protocol{awsapi.RPCv2CBOR, awsapi.Query}, Shapes: s.shapes}
}

// inventory lists the alarm ARNs.
func (s *Service) inventory(add func(string)) {
	for _, a := range s.alarms {
		add(a.arn)
	}
}

// Errors as CloudWatch returns them (awsQuery-compatible codes).
func queryError(shape, query string, status int, format string, args ...any) *awsapi.Error {
	e := awsapi.NewError(shape, format, args...)
	e.QueryCode = query
	e.HTTPStatus = status
	return e
}

func invalidValue(format string, args ...any) *awsapi.Error {
	return queryError("InvalidParameterValueException", "InvalidParameterValue", http.StatusBadRequest, format, args...)
}

func invalidCombination(format string, args ...any) *awsapi.Error {
	return queryError("InvalidParameterCombinationException", "InvalidParameterCombination", http.StatusBadRequest, format, args...)
}

func missing(name string) *awsapi.Error {
	return queryError("MissingRequiredParameterException", "MissingParameter", http.StatusBadRequest,
		"The parameter %s is required.", name)
}

func validation(format string, args ...any) *awsapi.Error {
	return queryError("ValidationException", "ValidationError", http.StatusBadRequest, format, args...)
}

// JSON accessors.

func str(m doc, k string) string {
	v, _ := m[k].(string)
	return v
}

func num(m doc, k string) (float64, bool) {
	switch v := m[k].(type) {
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	case float64:
		return v, true
	}
	return 0, false
}

func list(m doc, k string) []any {
	l, _ := m[k].([]any)
	return l
}

func strList(m doc, k string) []string {
	var out []string
	for _, v := range list(m, k) {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func (s *Service) alarmArn(name string) string {
	return s.env.ARN("cloudwatch", "alarm:"+name)
}

// Handle implements awsapi.Service.
func (s *Service) Handle(req *awsapi.Request) (any, error) { return s.ops.Handle(req) }

var (
	comparisons = []string{"GreaterThanOrEqualToThreshold", "GreaterThanThreshold", "LessThanThreshold", "LessThanOrEqualToThreshold",
		"LessThanLowerOrGreaterThanUpperThreshold", "LessThanLowerThreshold", "GreaterThanUpperThreshold"}
	statistics  = []string{"SampleCount", "Average", "Sum", "Minimum", "Maximum"}
	missingData = []string{"breaching", "notBreaching", "ignore", "missing"}
)

func validPeriod(p float64) bool {
	return p == 10 || p == 20 || p == 30 || (p >= 60 && math.Mod(p, 60) == 0)
}

func (s *Service) putMetricAlarm(req *awsapi.Request, in doc) (any, error) {
	if err := validateAlarm(in); err != nil {
		return nil, err
	}
	name := str(in, "AlarmName")
	tags, terr := tagsOf(in)
	if terr != nil {
		return nil, terr
	}
	arn := s.alarmArn(name)
	if err := req.Authorize("cloudwatch:PutMetricAlarm", arn); err != nil {
		return nil, err
	}
	config := doc{}
	for k, v := range in {
		if k != "Tags" {
			config[k] = v
		}
	}
	now := s.env.Time()
	s.mu.Lock()
	defer s.mu.Unlock()
	if a := s.alarms[name]; a != nil {
		// Tags are ignored when an existing alarm is updated.
		a.config, a.updated = config, now
		return nil, nil
	}
	s.alarms[name] = &alarm{name: name, arn: arn, config: config, tags: tags, updated: now, state: now}
	return nil, nil
}

// validateAlarm checks a PutMetricAlarm input as CloudWatch does, in its
// order: name, evaluation, comparison and threshold, then the metric.
func validateAlarm(in doc) error {
	name := str(in, "AlarmName")
	if name == "" {
		return missing("AlarmName")
	}
	if len(name) > 255 {
		return validation("1 validation error detected: Value '%s' at 'alarmName' failed to satisfy constraint: Member must have length less than or equal to 255", name)
	}
	evals, ok := num(in, "EvaluationPeriods")
	if !ok {
		return missing("EvaluationPeriods")
	}
	if evals < 1 {
		return validation("1 validation error detected: Value '%v' at 'evaluationPeriods' failed to satisfy constraint: Member must have value greater than or equal to 1", evals)
	}
	cmp := str(in, "ComparisonOperator")
	if cmp == "" {
		return missing("ComparisonOperator")
	}
	if !slices.Contains(comparisons, cmp) {
		return validation("1 validation error detected: Value '%s' at 'comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: [%s]", cmp, strings.Join(comparisons, ", "))
	}
	if d, ok := num(in, "DatapointsToAlarm"); ok && (d < 1 || d > evals) {
		return invalidValue("DatapointsToAlarm must be between 1 and EvaluationPeriods.")
	}
	if t := str(in, "TreatMissingData"); t != "" && !slices.Contains(missingData, t) {
		return invalidValue("Invalid value for TreatMissingData: %s. Valid values are: breaching, notBreaching, ignore, missing", t)
	}
	_, hasThreshold := num(in, "Threshold")
	thresholdMetric := str(in, "ThresholdMetricId")
	if !hasThreshold && thresholdMetric == "" {
		return invalidCombination("Exactly one element of Threshold or ThresholdMetricId must be specified.")
	}
	if metrics := list(in, "Metrics"); len(metrics) > 0 {
		return validateMetricMath(in, metrics, thresholdMetric)
	}
	return validateSingleMetric(in)
}

// validateMetricMath checks an alarm on metric math: Metrics and none of
// the single metric's fields, each metric with an Id and either MetricStat
// or Expression, and one returning data unless a ThresholdMetricId is set.
func validateMetricMath(in doc, metrics []any, thresholdMetric string) error {
	for _, f := range []string{"MetricName", "Namespace", "Statistic", "ExtendedStatistic"} {
		if str(in, f) != "" {
			return invalidCombination("The parameters MetricName, Namespace, Statistic, ExtendedStatistic, Dimensions, Period and Unit cannot be specified together with Metrics.")
		}
	}
	returning := 0
	for _, m := range metrics {
		mm, _ := m.(doc)
		if id := str(mm, "Id"); id == "" {
			return missing("Metrics.member.N.Id")
		}
		_, hasStat := mm["MetricStat"]
		expr := str(mm, "Expression")
		if hasStat == (expr != "") {
			return invalidCombination("Exactly one element of the metrics list should have either MetricStat or Expression.")
		}
		if rd, ok := mm["ReturnData"].(bool); !ok || rd {
			returning++
		}
	}
	if returning != 1 && thresholdMetric == "" {
		return invalidValue("Exactly one element of the metrics list should return data.")
	}
	return nil
}

// validateSingleMetric checks an alarm on one metric: its name, namespace,
// one statistic, a period and at most 30 dimensions.
func validateSingleMetric(in doc) error {
	metricName := str(in, "MetricName")
	namespace := str(in, "Namespace")
	stat := str(in, "Statistic")
	ext := str(in, "ExtendedStatistic")
	if metricName == "" {
		return missing("MetricName")
	}
	if namespace == "" {
		return missing("Namespace")
	}
	if (stat == "") == (ext == "") {
		return invalidCombination("Exactly one of Statistic or ExtendedStatistic must be specified.")
	}
	if stat != "" && !slices.Contains(statistics, stat) {
		return validation("1 validation error detected: Value '%s' at 'statistic' failed to satisfy constraint: Member must satisfy enum value set: [%s]", stat, strings.Join(statistics, ", "))
	}
	p, ok := num(in, "Period")
	if !ok {
		return missing("Period")
	}
	if !validPeriod(p) {
		return invalidValue("Period must be 10, 20, 30 or a multiple of 60.")
	}
	if len(list(in, "Dimensions")) > 30 {
		return invalidValue("The collection Dimensions must not have a size greater than 30.")
	}
	return nil
}

func tagsOf(in doc) ([]kv, *awsapi.Error) {
	var out []kv
	for _, t := range list(in, "Tags") {
		m, _ := t.(doc)
		k := str(m, "Key")
		v := str(m, "Value")
		if !awsapi.TagWithinLimits(k, v) {
			return nil, invalidValue("Tag keys must be between 1 and 128 characters and values at most 256.")
		}
		out = awsapi.MergeTags(out, []kv{{Key: k, Value: v}})
	}
	if len(out) > 50 {
		return nil, invalidValue("The number of tags exceeds the limit of 50.")
	}
	return out, nil
}

// metricAlarm renders an alarm as a MetricAlarm.
func (a *alarm) metricAlarm() doc {
	m := doc{
		"AlarmName":                          a.name,
		"AlarmArn":                           a.arn,
		"AlarmConfigurationUpdatedTimestamp": awsapi.EpochNumber(a.updated),
		"ActionsEnabled":                     true,
		"OKActions":                          []any{},
		"AlarmActions":                       []any{},
		"InsufficientDataActions":            []any{},
		"Dimensions":                         []any{},
		"StateValue":                         "INSUFFICIENT_DATA",
		"StateReason":                        "Unchecked: Initial alarm creation",
		"StateUpdatedTimestamp":              awsapi.EpochNumber(a.state),
		"StateTransitionedTimestamp":         awsapi.EpochNumber(a.state),
	}
	for _, k := range []string{"AlarmDescription", "ActionsEnabled", "OKActions", "AlarmActions", "InsufficientDataActions",
		"MetricName", "Namespace", "Statistic", "ExtendedStatistic", "Dimensions", "Unit", "DatapointsToAlarm",
		"ComparisonOperator", "TreatMissingData", "EvaluateLowSampleCountPercentile", "Metrics", "ThresholdMetricId",
		"EvaluationPeriods", "Period"} {
		if v, ok := a.config[k]; ok {
			m[k] = v
		}
	}
	if t, ok := num(a.config, "Threshold"); ok {
		m["Threshold"] = t
	}
	return m
}

func (s *Service) describeAlarms(req *awsapi.Request, in doc) (any, error) {
	names := strList(in, "AlarmNames")
	prefix := str(in, "AlarmNamePrefix")
	if len(names) > 0 && prefix != "" {
		return nil, invalidCombination("AlarmNamePrefix and AlarmNames cannot be specified together.")
	}
	if len(names) > 100 {
		return nil, validation("1 validation error detected: Value at 'alarmNames' failed to satisfy constraint: Member must have length less than or equal to 100")
	}
	state := str(in, "StateValue")
	actionPrefix := str(in, "ActionPrefix")
	maxRecords := 50
	if v, ok := num(in, "MaxRecords"); ok {
		if v < 1 || v > 100 {
			return nil, validation("1 validation error detected: Value '%v' at 'maxRecords' failed to satisfy constraint: Member must have value less than or equal to 100", v)
		}
		maxRecords = int(v)
	}
	start := 0
	if t := str(in, "NextToken"); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil || n < 0 {
			return nil, queryError("InvalidNextToken", "InvalidNextToken", http.StatusBadRequest, "The service returned an error with Error Code InvalidNextToken.")
		}
		start = n
	}
	types := strList(in, "AlarmTypes")
	if err := req.Authorize("cloudwatch:DescribeAlarms", s.env.ARN("cloudwatch", "alarm:*")); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var sel []*alarm
	for _, a := range s.alarms {
		if len(names) > 0 && !slices.Contains(names, a.name) {
			continue
		}
		if !strings.HasPrefix(a.name, prefix) || (state != "" && state != "INSUFFICIENT_DATA") {
			continue
		}
		if actionPrefix != "" && !hasActionPrefix(a.config, actionPrefix) {
			continue
		}
		sel = append(sel, a)
	}
	if len(types) > 0 && !slices.Contains(types, "MetricAlarm") {
		sel = nil
	}
	sort.Slice(sel, func(i, j int) bool { return sel[i].name < sel[j].name })
	start = min(start, len(sel))
	end := min(start+maxRecords, len(sel))
	out := doc{"MetricAlarms": []any{}, "CompositeAlarms": []any{}}
	l := []any{}
	for _, a := range sel[start:end] {
		l = append(l, a.metricAlarm())
	}
	out["MetricAlarms"] = l
	if end < len(sel) {
		out["NextToken"] = strconv.Itoa(end)
	}
	return out, nil
}

func hasActionPrefix(config doc, prefix string) bool {
	for _, k := range []string{"AlarmActions", "OKActions", "InsufficientDataActions"} {
		for _, a := range strList(config, k) {
			if strings.HasPrefix(a, prefix) {
				return true
			}
		}
	}
	return false
}

func (s *Service) deleteAlarms(req *awsapi.Request, in doc) (any, error) {
	names := strList(in, "AlarmNames")
	if len(names) > 100 {
		return nil, validation("1 validation error detected: Value at 'alarmNames' failed to satisfy constraint: Member must have length less than or equal to 100")
	}
	for _, n := range names {
		if err := req.Authorize("cloudwatch:DeleteAlarms", s.alarmArn(n)); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var missingNames []string
	for _, n := range names {
		if s.alarms[n] == nil {
			missingNames = append(missingNames, n)
		}
	}
	if len(missingNames) > 0 {
		return nil, queryError("ResourceNotFound", "ResourceNotFound", http.StatusNotFound, "%d/%d alarms not found: [%s]", len(missingNames), len(names), strings.Join(missingNames, ", "))
	}
	for _, n := range names {
		delete(s.alarms, n)
	}
	return nil, nil
}

func (s *Service) tagging(req *awsapi.Request, in doc) (any, error) {
	arn := str(in, "ResourceARN")
	if arn == "" {
		return nil, missing("ResourceARN")
	}
	if err := req.Authorize("cloudwatch:"+req.Operation, arn); err != nil {
		return nil, err
	}
	name, _ := strings.CutPrefix(arn, s.env.ARN("cloudwatch", "alarm:"))
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.alarms[name]
	if a == nil || a.arn != arn {
		return nil, queryError("ResourceNotFoundException", "ResourceNotFoundException", http.StatusNotFound, "%s not found", arn).
			With("ResourceType", "Alarm").With("ResourceId", name)
	}
	switch req.Operation {
	case "TagResource":
		tags, err := tagsOf(in)
		if err != nil {
			return nil, err
		}
		merged := awsapi.MergeTags(a.tags, tags)
		if len(merged) > 50 {
			return nil, invalidValue("The number of tags exceeds the limit of 50.")
		}
		a.tags = merged
		return nil, nil
	case "UntagResource":
		keys := strList(in, "TagKeys")
		a.tags = slices.DeleteFunc(slices.Clone(a.tags), func(t awsapi.Tag) bool { return slices.Contains(keys, t.Key) })
		return nil, nil
	}
	l := []any{}
	for _, t := range a.tags {
		l = append(l, doc{"Key": t.Key, "Value": t.Value})
	}
	return doc{"Tags": l}, nil
}
