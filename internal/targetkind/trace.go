package targetkind

import (
	"context"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TracerName names the spans of the relay, the reconciler and the
// operations command's replay.
const TracerName = "github.com/outboxkit/terraform-provider-outbox/relay"

// tracedPublisher continues each event's trace: for an event written with
// a trace context it starts a producer span, child of the writer's span
// (and linked to the span of the caller's context, an invocation of the
// relay or the reconciler, when it has one), and publishes the event with
// that span's trace context, so that the consumer's span is the child of
// the publishing one. A reconciled, requeued or replayed event continues
// the trace it was written in. With no TracerProvider set (OpenTelemetry's
// default), the spans record nothing and the writer's trace context is
// published as it is.
type tracedPublisher struct {
	publish.Publisher
	tracer trace.Tracer
	attrs  []attribute.KeyValue
}

func newTracedPublisher(p publish.Publisher, tp trace.TracerProvider, s Settings) tracedPublisher {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tracedPublisher{Publisher: p, tracer: tp.Tracer(TracerName), attrs: []attribute.KeyValue{
		attribute.String("messaging.system", messagingSystem(s.Type)),
		attribute.String("messaging.destination.name", s.Address()),
		attribute.String("messaging.operation.type", "send"),
	}}
}

// messagingSystem is OpenTelemetry's messaging.system of a kind.
func messagingSystem(t Type) string {
	if t == EventBridge {
		return "aws.eventbridge"
	}
	return "aws_" + string(t)
}

// Publish implements publish.Publisher.
func (p tracedPublisher) Publish(ctx context.Context, records []outbox.Record) []publish.Result {
	spans := make([]trace.Span, len(records))
	traced := slices.Clone(records)
	caller := trace.LinkFromContext(ctx)
	for i, r := range records {
		if r.TraceParent == "" {
			continue
		}
		opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer),
			trace.WithAttributes(append(p.attrs, attribute.String("messaging.message.id", r.EventID))...)}
		if caller.SpanContext.IsValid() {
			opts = append(opts, trace.WithLinks(caller))
		}
		var sctx context.Context
		sctx, spans[i] = p.tracer.Start(r.TraceContext(ctx), "send "+r.DetailType, opts...)
		traced[i].TraceParent, traced[i].TraceState = outbox.TraceContext(sctx)
	}
	results := p.Publisher.Publish(ctx, traced)
	for i, span := range spans {
		if span == nil {
			continue
		}
		if results[i].Status != publish.Published {
			span.SetStatus(codes.Error, results[i].Reason)
		}
		span.End()
	}
	return results
}

// xrayTraceHeader is the X-Ray trace header of a W3C traceparent, for
// EventBridge's TraceHeader; "" when traceparent is not one.
func xrayTraceHeader(traceparent string) string {
	sc := trace.SpanContextFromContext(outbox.ContextWithTrace(context.Background(), traceparent, ""))
	if !sc.IsValid() {
		return ""
	}
	id := sc.TraceID().String()
	sampled := "0"
	if sc.IsSampled() {
		sampled = "1"
	}
	return "Root=1-" + id[:8] + "-" + id[8:] + ";Parent=" + sc.SpanID().String() + ";Sampled=" + sampled
}

// traceHeader is the EventBridge TraceHeader of r: its X-Ray header, else
// its W3C trace context's; nil when it has neither.
func traceHeader(r outbox.Record) *string {
	h := r.TraceHeader
	if h == "" {
		h = xrayTraceHeader(r.TraceParent)
	}
	if strings.TrimSpace(h) == "" {
		return nil
	}
	return aws.String(h)
}

// Unwrap returns the publisher that p wraps.
func (p tracedPublisher) Unwrap() publish.Publisher { return p.Publisher }
