package consumer

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// TracerName names the consumer spans.
const TracerName = "github.com/outboxkit/terraform-provider-outbox/consumer"

// startSpan starts the consumer span of an event: the child of the span
// that published it when the event carries a W3C trace context, linked to
// the span of ctx (the Lambda invocation's, when instrumented). The handler
// runs in the returned context, so that its own spans and calls join the
// event's trace.
func (c *Consumer[T]) startSpan(ctx context.Context, id, detailType, traceparent, tracestate string) (context.Context, trace.Span) {
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
		attribute.String("messaging.operation.type", "process"), attribute.String("messaging.message.id", id))}
	parent := ctx
	if traceparent != "" {
		if link := trace.LinkFromContext(ctx); link.SpanContext.IsValid() {
			opts = append(opts, trace.WithLinks(link))
		}
		parent = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent, "tracestate": tracestate})
	}
	return c.tracer.Start(parent, "process "+detailType, opts...)
}

// endSpan ends the span with the outcome of the event.
func endSpan(span trace.Span, outcome Outcome, err error) {
	span.SetAttributes(attribute.String("outbox.inbox.outcome", outcome.String()))
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
