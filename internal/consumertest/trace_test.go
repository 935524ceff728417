package consumertest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestOneTraceFromWriterToConsumer: every event written in a sampled span
// forms one connected trace: the writer's span, the relay's publishing
// span (its child) and the consumer's span (the publishing span's child),
// for a published event and for the same event published again from its
// stored item, as the reconciler, requeue and replay do. Both envelopes.
func TestOneTraceFromWriterToConsumer(t *testing.T) {
	t.Parallel()
	for _, f := range outbox.Formats {
		t.Run(string(f), func(t *testing.T) {
			t.Parallel()
			traceThrough(t, f)
		})
	}
}

func traceThrough(t *testing.T, f outbox.Format) {
	ctx := context.Background()
	d := newDeliveries(t)
	e := d.engine(ctx)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	q := d.targetQueue("traced-"+string(f), f, targetkind.PublisherOptions{TracerProvider: tp})
	table := outbox.Table{Name: "orders", Layout: outbox.LayoutShared}.WithDefaults()
	w, err := outbox.NewWriter(nil, table)
	if err != nil {
		t.Fatal(err)
	}
	const n = 10
	writers := map[string]trace.SpanContext{} // event id: the writer's span
	var stored []outbox.Record
	for i := range n {
		wctx, span := tp.Tracer("shop").Start(ctx, "place order")
		_, r, err := w.Put(outbox.Event{PartitionKey: fmt.Sprintf("ORDER#%d", i), Source: "com.example.orders", DetailType: "OrderPlaced",
			Detail: json.RawMessage(fmt.Sprintf(`{"orderId":"%d","total":1}`, i))}.WithTraceContext(wctx))
		span.End()
		if err != nil {
			t.Fatal(err)
		}
		if r, err = table.ParseItem(table.Item(r)); err != nil { // as the relay reads it
			t.Fatal(err)
		}
		writers[r.EventID] = span.SpanContext()
		stored = append(stored, r)
	}
	for range 2 { // published, then published again from the stored items
		q.publish(ctx, stored)
	}
	c, err := consumer.New(e.inbox(), func(context.Context, consumer.Event[orderPlaced], *consumer.Tx) error { return nil },
		consumer.WithTracerProvider(tp), consumer.WithMetricsWriter(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := c.HandleSQS(ctx, q.receive(2*n)); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("HandleSQS: %+v, %v", resp, err)
	}
	checkConnected(t, spans.Ended(), writers, 2*n)
}

// checkConnected checks that each consumer span's parent is a publishing
// span whose parent is the writer's span of the same event, in the
// writer's trace.
func checkConnected(t *testing.T, ended []sdktrace.ReadOnlySpan, writers map[string]trace.SpanContext, deliveries int) {
	t.Helper()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range ended {
		byID[s.SpanContext().SpanID()] = s
	}
	consumed := 0
	for _, s := range ended {
		if s.SpanKind() != trace.SpanKindConsumer {
			continue
		}
		consumed++
		id := messageID(s)
		relay, ok := byID[s.Parent().SpanID()]
		if !ok || relay.SpanKind() != trace.SpanKindProducer || messageID(relay) != id {
			t.Errorf("the consumer span of %s has the parent %v, not the span that published it", id, s.Parent())
			continue
		}
		writer := writers[id]
		if relay.Parent().SpanID() != writer.SpanID() || s.SpanContext().TraceID() != writer.TraceID() {
			t.Errorf("event %s: the publishing span's parent is %v, want the writer's span %v in trace %v", id, relay.Parent(), writer, writer.TraceID())
		}
	}
	if consumed != deliveries {
		t.Errorf("%d consumer spans, want one per delivery (%d)", consumed, deliveries)
	}
}

func messageID(s sdktrace.ReadOnlySpan) string {
	for _, a := range s.Attributes() {
		if a.Key == "messaging.message.id" {
			return a.Value.AsString()
		}
	}
	return ""
}
