package provision

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/validation"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// envelopeFormats are the formats the relay publishes in.
func envelopeFormats() []string {
	var out []string
	for _, f := range outbox.Formats {
		out = append(out, string(f))
	}
	return out
}

// LogRetentionDaysAllowed returns the retentions, in days, that CloudWatch
// Logs accepts.
func LogRetentionDaysAllowed() []int32 { return slices.Clone(logRetentionDays) }

// fieldLimit is the limit of a field of Spec; a duration is checked as a
// whole number of unit.
type fieldLimit struct {
	limit validation.Limit
	unit  time.Duration
}

var (
	memorySizes   = validation.Range{Min: 128, Max: 10240, Unit: "MB"}
	timeouts      = validation.Range{Min: 1, Max: 900, Unit: "seconds"}
	logRetentions = validation.Values(int64s(logRetentionDays))
	concurrencies = validation.Range{Min: 1, Max: validation.NoMax,
		Hint: ", or leave it unset for unreserved concurrency: with 0 the function never runs and no event is published"}
	scheduleExpressed = validation.Rule{Text: "an EventBridge Scheduler expression: `rate(...)`, `cron(...)` with six fields, or `at(...)`", Func: CheckScheduleExpression}
)

// limits are the values that the fields of Spec allow, each written once:
// Validate checks them (Limit gives them to a caller that checks a value
// before it is a Spec, as Terraform's validators do, and documents them).
// Reconciler.* fields are checked only with the reconciler, Alarms.* only
// with the alarms, ClaimCheck.* only with the claim check.
var limits = map[string]fieldLimit{
	"Mapping.BatchSize":                    {limit: validation.Range{Min: 1, Max: 10000}},
	"Mapping.MaximumBatchingWindowSeconds": {limit: validation.Range{Min: 0, Max: 300, Unit: "seconds"}},
	"Mapping.ParallelizationFactor":        {limit: validation.Range{Min: 1, Max: 10}},
	"Mapping.MaximumRetryAttempts":         {limit: validation.Range{Min: -1, Max: 10000, MinMeans: "retry until the record expires"}},
	"Mapping.MaximumRecordAgeSeconds": {limit: validation.Range{Min: 60, Max: 604800, Unit: "seconds",
		Or: &validation.Special{Value: -1, Means: "no limit"}}},
	"Relay.MemorySize":                        {limit: memorySizes},
	"Relay.Timeout":                           {limit: timeouts},
	"Relay.LogRetentionDays":                  {limit: logRetentions},
	"Relay.ReservedConcurrency":               {limit: concurrencies},
	"Reconciler.Function.MemorySize":          {limit: memorySizes},
	"Reconciler.Function.Timeout":             {limit: timeouts},
	"Reconciler.Function.LogRetentionDays":    {limit: logRetentions},
	"Reconciler.Function.ReservedConcurrency": {limit: concurrencies},
	"Reconciler.ScheduleExpression":           {limit: scheduleExpressed},
	"Reconciler.FlexibleTimeWindowMinutes":    {limit: validation.Range{Min: 0, Max: 1440, Unit: "minutes", MinMeans: "run exactly on schedule"}},
	"Reconciler.MaxWorkers": {limit: validation.Range{Min: 1, Max: 100, Unit: "runs",
		MinMeans: "one run at a time, no workers"}},
	"Reconciler.MaxEventsPerSecond": {limit: validation.Range{Min: 0, Max: 1_000_000, Unit: "events a second",
		MinMeans: "the target kind's default"}},
	"Reconciler.MinAge": {unit: time.Second, limit: validation.Range{Min: 1, Max: validation.NoMax, Unit: "seconds",
		Hint: ", longer than the stream's usual delivery delay, such as 300"}},
	"MultiRegion.TakeoverAfter": {unit: time.Second, limit: validation.Range{Min: 1, Max: maxTakeoverSeconds, Unit: "seconds",
		Hint: ", a few reconciler intervals, such as 900"}},
	"MultiRegion.TakeoverSettle": {unit: time.Second, limit: validation.Range{Min: 1, Max: maxTakeoverSeconds, Unit: "seconds",
		Hint: ", longer than replication between the Regions takes, such as 30"}},
	"DeadLetterQueue.MessageRetentionSeconds": {limit: awsops.QueueRetentions},
	"Table.PendingShards":                     {limit: validation.Range{Min: 1, Max: outbox.MaxPendingShards}},
	"PublishedAction":                         {limit: validation.Choice{"mark", "delete"}},
	"Target.Envelope":                         {limit: validation.Choice(envelopeFormats())},
	"PublishedTTL": {unit: 24 * time.Hour, limit: validation.Range{Min: 0, Max: validation.NoMax, Unit: "days",
		MinMeans: "keep published items forever"}},
	"Architecture":                            {limit: validation.Choice{string(ArchARM64), string(ArchX86_64)}},
	"Controls.TracingMode":                    {limit: validation.Choice(TracingModes)},
	"Controls.LogFormat":                      {limit: validation.Choice(LogFormats)},
	"Controls.ApplicationLogLevel":            {limit: validation.Choice(ApplicationLogLevels)},
	"Controls.SystemLogLevel":                 {limit: validation.Choice(SystemLogLevels)},
	"Alarms.RelayErrorsThreshold":             {limit: validation.Range{Min: 1, Max: validation.NoMax, Unit: "errors per minute"}},
	"Alarms.IteratorAgeThresholdSeconds":      {limit: validation.Range{Min: 1, Max: maxIteratorAgeSeconds, Unit: "seconds", Hint: ": a stream keeps records 24 hours"}},
	"Alarms.OldestPendingAgeThresholdSeconds": {limit: validation.Range{Min: 1, Max: validation.NoMax, Unit: "seconds", Hint: ", such as 900"}},
	"Alarms.EvaluationPeriods": {limit: validation.Range{Min: 1, Max: maxEvaluationSeconds / alarmPeriod, Unit: "one-minute periods",
		Hint: " (CloudWatch evaluates at most one day)"}},
	"Alarms.TreatMissingData": {limit: validation.Choice(TreatMissingDataValues)},
	"ClaimCheck.BucketName":   {limit: bucketNamed},
}

// Limit returns the values that a field of Spec allows ("Mapping.BatchSize"),
// and whether it has a limit. A duration is limited as a whole number of
// the unit its attribute uses (PublishedTTL in days).
func Limit(field string) (validation.Limit, bool) {
	l, ok := limits[field]
	return l.limit, ok
}

// validateLimits checks every field of s that has a limit, in the order of
// the fields' names; an unset optional field (nil, or "") has nothing to
// check.
func (s Spec) validateLimits() []error {
	var errs []error
	v := reflect.ValueOf(s)
	for _, field := range slices.Sorted(maps.Keys(limits)) {
		if (strings.HasPrefix(field, "Reconciler.") && s.Reconciler.Disabled) || (strings.HasPrefix(field, "Alarms.") && !s.Alarms.Enabled) ||
			(strings.HasPrefix(field, "ClaimCheck.") && !s.ClaimCheck.Enabled) {
			continue
		}
		l := limits[field]
		if val, ok := limitValue(specField(v, field), l.unit); ok {
			if err := pipelineSettings.Check(field, l.limit, val); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// specField is the field of a Spec value at a dotted path; invalid when
// there is none.
func specField(v reflect.Value, field string) reflect.Value {
	for _, name := range strings.Split(field, ".") {
		if v.Kind() != reflect.Struct {
			return reflect.Value{}
		}
		v = v.FieldByName(name)
	}
	return v
}

// limitValue is the value that a limit checks: an int64 (a duration in
// units) or a string; false for nil or "".
func limitValue(v reflect.Value, unit time.Duration) (any, bool) {
	if !v.IsValid() {
		return nil, false
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return nil, false
		}
		v = v.Elem()
	}
	switch {
	case v.Kind() == reflect.String:
		return v.String(), v.String() != ""
	case unit != 0:
		return v.Int() / int64(unit), true
	}
	return v.Int(), true
}

func int64s(v []int32) []int64 {
	out := make([]int64, len(v))
	for i, n := range v {
		out[i] = int64(n)
	}
	return out
}
