// Package metrics records the relay's metrics for one invocation and writes
// them to stdout in CloudWatch embedded metric format (EMF), which Lambda's
// log pipeline turns into CloudWatch metrics without any API call.
package metrics

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"
)

// Namespace of every relay metric.
const Namespace = "Outbox"

// DimensionFunctionName is a dimension of every metric.
const DimensionFunctionName = "FunctionName"

// DimensionErrorClass is the second dimension of PublishErrors: environment,
// throttling, poison or transient (package retry's classes).
const DimensionErrorClass = "ErrorClass"

// Names of the relay's metrics.
const (
	// EventsPublished counts events the target accepted.
	EventsPublished = "EventsPublished"
	// EventsFailed counts poison events: malformed, too large or rejected by
	// the target, marked FAILED.
	EventsFailed = "EventsFailed"
	// EventsRetried counts entries sent again after a retryable failure.
	EventsRetried = "EventsRetried"
	// EventsLeftPending counts events whose publishing or marking failed, or
	// (ordered mode) that were not tried before the invocation's deadline,
	// and that are left for a later attempt (stream retry or reconciler).
	EventsLeftPending = "EventsLeftPending"
	// PublishLatency is, per event, the time from occurredAt to publishing.
	PublishLatency = "PublishLatency"
	// PendingFound counts pending events found by the reconciler.
	PendingFound = "PendingFound"
	// OldestPendingAge is the age of the oldest pending event the
	// reconciler found.
	OldestPendingAge = "OldestPendingAge"
	// EventsWaiting counts, at the end of an ordered reconciler run, the
	// events it left pending because an earlier event of their ordering key
	// is not published: the events held behind their key (a FAILED event,
	// or one not found yet). Neither published, failed nor poison, they are
	// counted here so that a run's counts add up to what it found.
	EventsWaiting = "EventsWaiting"
	// OrderingConflicts counts, in a multi-Region pipeline, ordered events
	// written in another Region than an event of the same ordering key and
	// sequence, or at or below their key's cursor: their key was written in
	// two Regions at once, whose sequence conditions are each checked in one
	// Region only. They are published out of their key's order rather than
	// dropped.
	OrderingConflicts = "OrderingConflicts"
	// TakeoverUnavailable counts, in a multi-Region pipeline, the
	// scheduled reconciler runs that could not read or write the Regions'
	// heartbeats and takeover claims and swept only their own Region's
	// events: 0 or 1 a run. While it lasts the Region writes no
	// heartbeat (its peers take it over after takeover_after) and takes
	// over no silent peer.
	TakeoverUnavailable = "TakeoverUnavailable"
	// Backlog is, at the end of a reconciler run, the pending events older
	// than the minimum age that the run found: the whole backlog when the
	// run swept every shard, a lower bound otherwise.
	Backlog = "Backlog"
	// PublishRate is the events a reconciler run published per second of
	// the run.
	PublishRate = "PublishRate"
	// PublishErrors counts events not published, by ErrorClass: each
	// environment error is a fact a person must fix (a permission, a bus, a
	// topic, a key).
	PublishErrors = "PublishErrors"
)

// Unit is a CloudWatch unit.
type Unit string

// Units used by the relay.
const (
	Count        Unit = "Count"
	Milliseconds Unit = "Milliseconds"
	Seconds      Unit = "Seconds"
	// CountPerSecond is CloudWatch's "Count/Second".
	CountPerSecond Unit = "Count/Second"
)

// maxValues is the number of values EMF accepts for one metric in one document.
const maxValues = 100

// Recorder collects metrics. It is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	units  map[string]Unit
	values map[string][]float64
	counts map[string]float64
	// dimensioned holds counts with a second dimension.
	dimensioned map[Series]float64
}

// Series is a count with a second dimension besides FunctionName.
type Series struct {
	Name, Dimension, Value string
}

// New returns an empty Recorder.
func New() *Recorder {
	return &Recorder{units: map[string]Unit{}, values: map[string][]float64{}, counts: map[string]float64{}, dimensioned: map[Series]float64{}}
}

// AddSeries adds n to a count with a second dimension, recording it even
// when n is 0.
func (r *Recorder) AddSeries(s Series, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dimensioned[s] += float64(n)
}

// SeriesCount returns the current value of a count with a second dimension.
func (r *Recorder) SeriesCount(s Series) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dimensioned[s]
}

// Add adds n to a count, recording it even when n is 0.
func (r *Recorder) Add(name string, n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.units[name] = Count
	r.counts[name] += float64(n)
}

// Observe records one value of a distribution, such as a latency.
func (r *Recorder) Observe(name string, unit Unit, v float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.units[name] = unit
	r.values[name] = append(r.values[name], v)
}

// Count returns the current value of a count; for tests and reports.
func (r *Recorder) Count(name string) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[name]
}

// Values returns the recorded values of a distribution.
func (r *Recorder) Values(name string) []float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]float64(nil), r.values[name]...)
}

type metricDef struct {
	Name string `json:"Name"`
	Unit Unit   `json:"Unit"`
}

type directive struct {
	Namespace  string      `json:"Namespace"`
	Dimensions [][]string  `json:"Dimensions"`
	Metrics    []metricDef `json:"Metrics"`
}

type awsMeta struct {
	Timestamp         int64       `json:"Timestamp"`
	CloudWatchMetrics []directive `json:"CloudWatchMetrics"`
}

// Flush writes the recorded metrics as EMF documents, one JSON object a line,
// and empties the recorder. A distribution with more than 100 values is
// spread over several documents, as EMF allows at most 100 values per metric.
func (r *Recorder) Flush(w io.Writer, functionName string, now time.Time) error {
	r.mu.Lock()
	counts, values, units, dimensioned := r.counts, r.values, r.units, r.dimensioned
	r.counts, r.values, r.units, r.dimensioned = map[string]float64{}, map[string][]float64{}, map[string]Unit{}, map[Series]float64{}
	r.mu.Unlock()

	if err := flushSeries(w, dimensioned, functionName, now); err != nil {
		return err
	}

	for first := true; first || len(values) > 0; first = false {
		doc := map[string]any{DimensionFunctionName: functionName}
		var defs []metricDef
		if first {
			for name, n := range counts {
				doc[name] = n
				defs = append(defs, metricDef{Name: name, Unit: units[name]})
			}
		}
		for name, vs := range values {
			take := vs[:min(len(vs), maxValues)]
			if len(take) == 1 {
				doc[name] = take[0]
			} else {
				doc[name] = take
			}
			defs = append(defs, metricDef{Name: name, Unit: units[name]})
			if len(vs) > maxValues {
				values[name] = vs[maxValues:]
			} else {
				delete(values, name)
			}
		}
		if len(defs) == 0 {
			return nil
		}
		sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
		doc["_aws"] = awsMeta{
			Timestamp: now.UnixMilli(),
			CloudWatchMetrics: []directive{{
				Namespace:  Namespace,
				Dimensions: [][]string{{DimensionFunctionName}},
				Metrics:    defs,
			}},
		}
		if err := writeDoc(w, doc); err != nil {
			return err
		}
	}
	return nil
}

// flushSeries writes one EMF document per second dimension value, each with
// the dimension set [FunctionName, <dimension>].
func flushSeries(w io.Writer, series map[Series]float64, functionName string, now time.Time) error {
	keys := make([]Series, 0, len(series))
	for s := range series {
		keys = append(keys, s)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.Dimension != b.Dimension {
			return a.Dimension < b.Dimension
		}
		if a.Value != b.Value {
			return a.Value < b.Value
		}
		return a.Name < b.Name
	})
	for start := 0; start < len(keys); {
		dim, value := keys[start].Dimension, keys[start].Value
		doc := map[string]any{DimensionFunctionName: functionName, dim: value}
		var defs []metricDef
		for ; start < len(keys) && keys[start].Dimension == dim && keys[start].Value == value; start++ {
			doc[keys[start].Name] = series[keys[start]]
			defs = append(defs, metricDef{Name: keys[start].Name, Unit: Count})
		}
		doc["_aws"] = awsMeta{
			Timestamp: now.UnixMilli(),
			CloudWatchMetrics: []directive{{
				Namespace:  Namespace,
				Dimensions: [][]string{{DimensionFunctionName, dim}},
				Metrics:    defs,
			}},
		}
		if err := writeDoc(w, doc); err != nil {
			return err
		}
	}
	return nil
}

func writeDoc(w io.Writer, doc map[string]any) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encoding metrics: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing metrics: %w", err)
	}
	return nil
}
