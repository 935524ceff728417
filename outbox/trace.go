package outbox

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Trace context. An event carries the W3C trace context
// (https://www.w3.org/TR/trace-context/) of the code that wrote it, in the
// item's AttrTraceParent and AttrTraceState, so that the relay, the
// reconciler and the consumers continue the writer's trace: the stream
// carries no trace context of its own. The writer reads it from the
// caller's context through the OpenTelemetry API; an application that uses
// no tracing has no span in its contexts, and its events carry none.

// Attribute names of the trace context on the outbox item.
const (
	AttrTraceParent = "traceParent"
	AttrTraceState  = "traceState"
)

// traceContext is the W3C propagator: the header names are the
// specification's, traceparent and tracestate.
var traceContext = propagation.TraceContext{}

// TraceContext returns the W3C traceparent and tracestate of the span in
// ctx; both are empty when ctx has no valid span context.
func TraceContext(ctx context.Context) (traceparent, tracestate string) {
	c := propagation.MapCarrier{}
	traceContext.Inject(ctx, c)
	return c.Get("traceparent"), c.Get("tracestate")
}

// ContextWithTrace returns ctx with the remote span context of traceparent
// and tracestate, for a span that continues the trace; ctx as it is when
// traceparent is empty or malformed.
func ContextWithTrace(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return traceContext.Extract(ctx, propagation.MapCarrier{"traceparent": traceparent, "tracestate": tracestate})
}

// validTraceParent reports whether traceparent is a W3C traceparent of a
// valid span context.
func validTraceParent(traceparent string) bool {
	return trace.SpanContextFromContext(ContextWithTrace(context.Background(), traceparent, "")).IsValid()
}

// WithTraceContext returns e carrying the trace context of the span in ctx,
// unless e already carries one. Write does this for every event; call it
// before Put, Actions or ActionsAfter, which take no context.
func (e Event) WithTraceContext(ctx context.Context) Event {
	if e.TraceParent == "" {
		e.TraceParent, e.TraceState = TraceContext(ctx)
	}
	return e
}

// TraceContext returns r's trace context as a context for the spans that
// continue it.
func (r Record) TraceContext(ctx context.Context) context.Context {
	return ContextWithTrace(ctx, r.TraceParent, r.TraceState)
}
