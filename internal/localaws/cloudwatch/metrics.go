package cloudwatch

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// Metrics: the datapoints services of the stack emit (Lambda event source
// mappings' event counts) and PutMetricData sends, read back with
// GetMetricStatistics and ListMetrics. They are kept in memory for
// metricRetention, CloudWatch's shortest retention of one-minute data
// being 15 days; alarms are not evaluated against them.

// metricRetention is how long datapoints are kept.
const metricRetention = 15 * 24 * time.Hour

// metricKey names a metric: namespace, name and dimensions.
type metricKey struct {
	namespace, name string
	dims            string // sorted "name=value" joined by "\x00"
}

type datapoint struct {
	at    time.Time
	value float64
	unit  string
}

type metric struct {
	key    metricKey
	dims   map[string]string
	points []datapoint
}

func keyOf(namespace, name string, dims map[string]string) metricKey {
	parts := make([]string, 0, len(dims))
	for k, v := range dims {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return metricKey{namespace: namespace, name: name, dims: strings.Join(parts, "\x00")}
}

// PutMetric records a datapoint at the stack's current time, as an AWS
// service publishes its metrics (for example AWS/Lambda's event source
// mapping counts).
func (s *Service) PutMetric(namespace, name string, dims map[string]string, value float64, unit string) {
	s.put(namespace, name, dims, datapoint{at: s.env.Time(), value: value, unit: unit})
}

func (s *Service) put(namespace, name string, dims map[string]string, p datapoint) {
	k := keyOf(namespace, name, dims)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.metrics == nil {
		s.metrics = map[metricKey]*metric{}
	}
	m := s.metrics[k]
	if m == nil {
		m = &metric{key: k, dims: maps.Clone(dims)}
		s.metrics[k] = m
	}
	cutoff := p.at.Add(-metricRetention)
	i := 0
	for i < len(m.points) && m.points[i].at.Before(cutoff) {
		i++
	}
	m.points = append(m.points[i:], p)
}

func dimensionsOf(in doc) map[string]string {
	out := map[string]string{}
	for _, d := range list(in, "Dimensions") {
		if dm, ok := d.(map[string]any); ok {
			out[str(dm, "Name")] = str(dm, "Value")
		}
	}
	return out
}

// timeOf reads a timestamp of the JSON form: epoch seconds, or an
// ISO 8601 string.
func timeOf(m doc, k string) (time.Time, bool) {
	if f, ok := num(m, k); ok {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(frac*1e9)), true
	}
	if v := str(m, k); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		return t, err == nil
	}
	return time.Time{}, false
}

func (s *Service) putMetricData(_ *awsapi.Request, in doc) (any, error) {
	ns := str(in, "Namespace")
	if ns == "" {
		return nil, missing("Namespace")
	}
	if strings.HasPrefix(ns, "AWS/") {
		return nil, invalidValue("The value AWS/ for parameter Namespace is invalid.")
	}
	for _, v := range list(in, "MetricData") {
		d, _ := v.(map[string]any)
		name := str(d, "MetricName")
		if name == "" {
			return nil, missing("MetricData.member.N.MetricName")
		}
		value, ok := num(d, "Value")
		if !ok {
			value = 0
		}
		at, ok := timeOf(d, "Timestamp")
		if !ok {
			at = s.env.Time()
		}
		s.put(ns, name, dimensionsOf(d), datapoint{at: at, value: value, unit: str(d, "Unit")})
	}
	return doc{}, nil
}

// matching lists the metrics of namespace and name ("" for any) that have
// every dimension of want.
func (s *Service) matching(namespace, name string, want map[string]string) []*metric {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*metric
	for _, m := range s.metrics {
		if namespace != "" && m.key.namespace != namespace || name != "" && m.key.name != name {
			continue
		}
		ok := true
		for k, v := range want {
			if have, found := m.dims[k]; !found || v != "" && have != v {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b *metric) int {
		return strings.Compare(a.key.namespace+a.key.name+a.key.dims, b.key.namespace+b.key.name+b.key.dims)
	})
	return out
}

func (s *Service) listMetrics(_ *awsapi.Request, in doc) (any, error) {
	metrics := []any{}
	for _, m := range s.matching(str(in, "Namespace"), str(in, "MetricName"), dimensionsOf(in)) {
		dims := []any{}
		for _, k := range slices.Sorted(maps.Keys(m.dims)) {
			dims = append(dims, doc{"Name": k, "Value": m.dims[k]})
		}
		metrics = append(metrics, doc{"Namespace": m.key.namespace, "MetricName": m.key.name, "Dimensions": dims})
	}
	return doc{"Metrics": metrics}, nil
}

// stats are the statistics of the datapoints of one period.
type stats struct {
	n, sum, lo, hi float64
	unit           string
}

func (s *Service) getMetricStatistics(_ *awsapi.Request, in doc) (any, error) {
	ns, name := str(in, "Namespace"), str(in, "MetricName")
	start, okStart := timeOf(in, "StartTime")
	end, okEnd := timeOf(in, "EndTime")
	period, okPeriod := num(in, "Period")
	switch {
	case ns == "":
		return nil, missing("Namespace")
	case name == "":
		return nil, missing("MetricName")
	case !okStart || !okEnd:
		return nil, missing("StartTime and EndTime")
	case !okPeriod || period < 1 || !validPeriod(period):
		return nil, invalidValue("The parameter Period must be 1, 5, 10, 20, 30 or a multiple of 60.")
	case !end.After(start):
		return nil, invalidValue("The parameter StartTime must be less than the parameter EndTime.")
	}
	want := strList(in, "Statistics")
	if len(want) == 0 {
		return nil, missing("Statistics")
	}
	step := time.Duration(period) * time.Second
	dims := dimensionsOf(in)
	buckets := map[int64]*stats{}
	for _, m := range s.matching(ns, name, dims) {
		if len(m.dims) != len(dims) {
			continue // GetMetricStatistics matches the exact dimensions
		}
		s.mu.RLock()
		for _, p := range m.points {
			if p.at.Before(start) || !p.at.Before(end) {
				continue
			}
			slot := int64(p.at.Sub(start) / step)
			b := buckets[slot]
			if b == nil {
				b = &stats{lo: p.value, hi: p.value, unit: p.unit}
				buckets[slot] = b
			}
			b.n++
			b.sum += p.value
			b.lo, b.hi = min(b.lo, p.value), max(b.hi, p.value)
		}
		s.mu.RUnlock()
	}
	points := []any{}
	for _, slot := range slices.Sorted(maps.Keys(buckets)) {
		b := buckets[slot]
		unit := b.unit
		if unit == "" {
			unit = "None"
		}
		p := doc{"Timestamp": awsapi.EpochNumber(start.Add(time.Duration(slot) * step)), "Unit": unit}
		for _, st := range want {
			p[st] = map[string]float64{"SampleCount": b.n, "Sum": b.sum, "Average": b.sum / b.n, "Minimum": b.lo, "Maximum": b.hi}[st]
		}
		points = append(points, p)
	}
	return doc{"Label": name, "Datapoints": points}, nil
}
