package outbox_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// spanContext is a context with a sampled remote span and a tracestate.
func spanContext(t *testing.T) context.Context {
	t.Helper()
	state, err := trace.ParseTraceState("vendor=blue")
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:  trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}, TraceFlags: trace.FlagsSampled, TraceState: state, Remote: true,
	})
	return trace.ContextWithRemoteSpanContext(context.Background(), sc)
}

const wantTraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// TestWriteRecordsTheTraceContext: Write stores the caller's traceparent
// and tracestate on the item; they parse back and continue the trace; a
// context without a span stores none.
func TestWriteRecordsTheTraceContext(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "orders", Layout: outbox.LayoutShared}.WithDefaults()
	c := &recordingClient{}
	w := newWriter(t, c, table)
	if _, err := w.Write(spanContext(t), nil, orderPlaced()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(context.Background(), nil, orderPlaced()); err != nil {
		t.Fatal(err)
	}
	traced, untraced := c.calls[0].TransactItems[0].Put.Item, c.calls[1].TransactItems[0].Put.Item
	if str(traced[outbox.AttrTraceParent]) != wantTraceParent || str(traced[outbox.AttrTraceState]) != "vendor=blue" {
		t.Errorf("traced item has %v, %v", traced[outbox.AttrTraceParent], traced[outbox.AttrTraceState])
	}
	if _, ok := untraced[outbox.AttrTraceParent]; ok {
		t.Errorf("an event written without a span has a traceparent: %v", untraced[outbox.AttrTraceParent])
	}
	r, err := table.ParseItem(traced)
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.SpanContextFromContext(r.TraceContext(context.Background()))
	if sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || sc.SpanID().String() != "00f067aa0ba902b7" || sc.TraceState().Get("vendor") != "blue" {
		t.Errorf("the parsed record continues %v", sc)
	}
}

// TestWriterRefusesABadTraceParent names the field and the fix.
func TestWriterRefusesABadTraceParent(t *testing.T) {
	t.Parallel()
	w := newWriter(t, nil, outbox.Table{Name: "orders", Layout: outbox.LayoutShared})
	e := orderPlaced()
	e.TraceParent = "00-nope"
	_, _, err := w.Put(e)
	var ee *outbox.EventError
	if !errors.As(err, &ee) || ee.Field != "TraceParent" || !errors.Is(err, outbox.ErrInvalidTraceParent) {
		t.Errorf("Put with traceparent %q = %v", e.TraceParent, err)
	}
	e = orderPlaced().WithTraceContext(spanContext(t))
	if _, rec, err := w.Put(e); err != nil || rec.TraceParent != wantTraceParent {
		t.Errorf("Put with the context's trace = %+v, %v", rec, err)
	}
}
