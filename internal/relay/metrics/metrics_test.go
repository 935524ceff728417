package metrics

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestFlushEMF(t *testing.T) {
	t.Parallel()
	r := New()
	r.Add(EventsPublished, 3)
	r.Add(EventsFailed, 0)
	r.Observe(PublishLatency, Milliseconds, 120)
	r.Observe(PublishLatency, Milliseconds, 80)
	var buf bytes.Buffer
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	if err := r.Flush(&buf, "outbox-relay", at); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d documents, want 1:\n%s", len(lines), buf.String())
	}
	var doc struct {
		AWS struct {
			Timestamp         int64
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name, Unit string }
			}
		} `json:"_aws"`
		FunctionName    string
		EventsPublished float64
		EventsFailed    *float64
		PublishLatency  []float64
	}
	if err := json.Unmarshal([]byte(lines[0]), &doc); err != nil {
		t.Fatal(err)
	}
	d := doc.AWS.CloudWatchMetrics[0]
	if doc.AWS.Timestamp != at.UnixMilli() || d.Namespace != "Outbox" || len(d.Dimensions) != 1 || d.Dimensions[0][0] != "FunctionName" {
		t.Errorf("metadata %+v", doc.AWS)
	}
	if doc.FunctionName != "outbox-relay" || doc.EventsPublished != 3 || doc.EventsFailed == nil || *doc.EventsFailed != 0 {
		t.Errorf("values %+v", doc)
	}
	if len(doc.PublishLatency) != 2 {
		t.Errorf("PublishLatency %v", doc.PublishLatency)
	}
	units := map[string]string{}
	for _, m := range d.Metrics {
		units[m.Name] = m.Unit
	}
	if units[EventsPublished] != "Count" || units[PublishLatency] != "Milliseconds" || len(units) != 3 {
		t.Errorf("metric definitions %v", units)
	}
	// Flushing empties the recorder.
	buf.Reset()
	if err := r.Flush(&buf, "outbox-relay", at); err != nil || buf.Len() != 0 {
		t.Errorf("second flush wrote %q, %v", buf.String(), err)
	}
}

func TestFlushSplitsValues(t *testing.T) {
	t.Parallel()
	r := New()
	r.Add(EventsPublished, 250)
	for i := range 250 {
		r.Observe(PublishLatency, Milliseconds, float64(i))
	}
	var buf bytes.Buffer
	if err := r.Flush(&buf, "f", time.Now()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d documents, want 3", len(lines))
	}
	total, published := 0, 0.0
	for _, l := range lines {
		var doc map[string]any
		if err := json.Unmarshal([]byte(l), &doc); err != nil {
			t.Fatal(err)
		}
		vs, _ := doc[PublishLatency].([]any)
		if len(vs) > 100 {
			t.Errorf("%d values in one document", len(vs))
		}
		total += len(vs)
		if p, ok := doc[EventsPublished].(float64); ok {
			published += p
		}
	}
	if total != 250 || published != 250 {
		t.Errorf("%d latency values, %v published; want 250 and 250 (counted once)", total, published)
	}
}

// TestFlushSeries: a count with a second dimension gets a document per
// value, with the dimension set [FunctionName, ErrorClass].
func TestFlushSeries(t *testing.T) {
	t.Parallel()
	r := New()
	r.Add(EventsPublished, 1)
	r.AddSeries(Series{Name: PublishErrors, Dimension: DimensionErrorClass, Value: "environment"}, 2)
	r.AddSeries(Series{Name: PublishErrors, Dimension: DimensionErrorClass, Value: "poison"}, 1)
	var buf bytes.Buffer
	if err := r.Flush(&buf, "outbox-relay", time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d documents, want 3:\n%s", len(lines), buf.String())
	}
	got := map[string]float64{}
	for _, line := range lines {
		var doc struct {
			AWS struct {
				CloudWatchMetrics []struct{ Dimensions [][]string }
			} `json:"_aws"`
			FunctionName  string
			ErrorClass    string
			PublishErrors *float64
		}
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.PublishErrors == nil {
			continue
		}
		dims := doc.AWS.CloudWatchMetrics[0].Dimensions
		if doc.FunctionName != "outbox-relay" || len(dims) != 1 || strings.Join(dims[0], ",") != "FunctionName,ErrorClass" {
			t.Errorf("document %s", line)
		}
		got[doc.ErrorClass] = *doc.PublishErrors
	}
	if got["environment"] != 2 || got["poison"] != 1 || len(got) != 2 {
		t.Errorf("PublishErrors by class %v", got)
	}
}
