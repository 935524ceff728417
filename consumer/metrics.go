package consumer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// Namespace is the CloudWatch namespace of the kit's metrics, the relay's.
const Namespace = "Outbox"

// DimensionFunctionName is the dimension of every metric, as the relay's.
const DimensionFunctionName = "FunctionName"

// The kit's metrics, all counts.
const (
	// EventsApplied counts events whose handler ran and completed.
	EventsApplied = "ConsumerEventsApplied"
	// DuplicatesSkipped counts deliveries of completed events.
	DuplicatesSkipped = "ConsumerDuplicatesSkipped"
	// EventsInProgress counts deliveries refused because another attempt
	// held the lease.
	EventsInProgress = "ConsumerEventsInProgress"
	// LeasesTakenOver counts attempts that took over an expired lease.
	LeasesTakenOver = "ConsumerLeasesTakenOver"
	// LeasesLost counts completions refused because the lease was taken over.
	LeasesLost = "ConsumerLeasesLost"
	// PayloadMismatches counts deliveries of an event id with another payload.
	PayloadMismatches = "ConsumerPayloadMismatches"
	// EventsFailed counts deliveries the adapters reported failed, for any
	// reason (the handler's error, malformed, in progress, mismatch).
	EventsFailed = "ConsumerEventsFailed"
)

var metricNames = []string{EventsApplied, DuplicatesSkipped, EventsInProgress, LeasesTakenOver, LeasesLost, PayloadMismatches, EventsFailed}

// Metrics counts what the kit did. It is safe for concurrent use; an
// adapter flushes it after each invocation.
type Metrics struct {
	mu     sync.Mutex
	counts map[string]float64
	total  map[string]float64
}

// NewMetrics returns an empty recorder.
func NewMetrics() *Metrics {
	return &Metrics{counts: map[string]float64{}, total: map[string]float64{}}
}

func (m *Metrics) add(name string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.counts[name] += float64(n)
	m.total[name] += float64(n)
}

// Total is a count since the recorder was made, flushes included; for tests
// and reports.
func (m *Metrics) Total(name string) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total[name]
}

// Flush writes the counts since the last flush as one CloudWatch embedded
// metric format document (a JSON line), every metric included, and resets
// them.
func (m *Metrics) Flush(w io.Writer, functionName string, now time.Time) error {
	m.mu.Lock()
	counts := m.counts
	m.counts = map[string]float64{}
	m.mu.Unlock()
	type metricDef struct {
		Name string `json:"Name"`
		Unit string `json:"Unit"`
	}
	doc := map[string]any{DimensionFunctionName: functionName}
	defs := make([]metricDef, 0, len(metricNames))
	for _, name := range metricNames {
		doc[name] = counts[name]
		defs = append(defs, metricDef{Name: name, Unit: "Count"})
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].Name < defs[j].Name })
	doc["_aws"] = map[string]any{
		"Timestamp": now.UnixMilli(),
		"CloudWatchMetrics": []map[string]any{{
			"Namespace": Namespace, "Dimensions": [][]string{{DimensionFunctionName}}, "Metrics": defs,
		}},
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("consumer: encoding metrics: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("consumer: writing metrics: %w", err)
	}
	return nil
}

// KeyRequestID is the log attribute of the Lambda request id, as the relay's.
const KeyRequestID = "requestId"

// NewLogger returns a log/slog JSON logger writing to w (stderr when nil)
// that adds the Lambda request id of the context, as the relay's does.
func NewLogger(w io.Writer, level slog.Leveler) *slog.Logger {
	if w == nil {
		w = os.Stderr
	}
	return slog.New(requestIDHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})})
}

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		r.AddAttrs(slog.String(KeyRequestID, lc.AwsRequestID))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
