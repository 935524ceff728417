package targetkind

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

const testTraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestXRayTraceHeader(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		testTraceParent: "Root=1-4bf92f35-77b34da6a3ce929d0e0e4736;Parent=00f067aa0ba902b7;Sampled=1",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00": "Root=1-4bf92f35-77b34da6a3ce929d0e0e4736;Parent=00f067aa0ba902b7;Sampled=0",
		"": "", "00-nope": "",
	} {
		if got := xrayTraceHeader(in); got != want {
			t.Errorf("xrayTraceHeader(%q) = %q, want %q", in, got, want)
		}
	}
	r := outbox.Record{TraceHeader: "Root=1-5759e988-bd862e3fe1be46a994272793", TraceParent: testTraceParent}
	if got := aws.ToString(traceHeader(r)); got != r.TraceHeader {
		t.Errorf("an X-Ray header the writer gave is replaced by %q", got)
	}
}

// TestMessagesCarryThePublishingSpan: SNS and SQS messages carry the trace
// context of the publishing span, a child of the writer's, in their
// attributes and envelope; an event written without one carries none.
func TestMessagesCarryThePublishingSpan(t *testing.T) {
	t.Parallel()
	for _, kind := range []Type{SNS, SQS} {
		spans := tracetest.NewSpanRecorder()
		f := &fakeBatchTarget{}
		p, err := NewPublisher(aws.Config{}, samples[kind], PublisherOptions{Retry: noWait, Client: f,
			TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))})
		if err != nil {
			t.Fatal(err)
		}
		rs := records(2)
		rs[0].TraceParent = testTraceParent
		p.Publish(context.Background(), rs)
		ended := spans.Ended()
		if len(ended) != 1 || ended[0].Parent().SpanID().String() != "00f067aa0ba902b7" {
			t.Fatalf("%s: spans %v, want one child of the writer's", kind, ended)
		}
		sent := f.accepted[0].attrs[outbox.MessageAttrTraceParent]
		if traceSpanID(outbox.ContextWithTrace(context.Background(), sent, "")) != ended[0].SpanContext().SpanID().String() {
			t.Errorf("%s: the message's traceparent %q is not the publishing span's", kind, sent)
		}
		if _, ok := f.accepted[1].attrs[outbox.MessageAttrTraceParent]; ok {
			t.Errorf("%s: an untraced event carries %v", kind, f.accepted[1].attrs)
		}
	}
}

// BenchmarkTracedPublish reports what recording a publishing span per
// event adds to the relay, per event.
func BenchmarkTracedPublish(b *testing.B) {
	rs := records(10)
	for i := range rs {
		rs[i].TraceParent = testTraceParent
	}
	run := func(o PublisherOptions) float64 {
		o.Client, o.Retry = &fakeBatchTarget{}, noWait
		p, err := NewPublisher(aws.Config{}, samples[SQS], o)
		if err != nil {
			b.Fatal(err)
		}
		start := b.Elapsed()
		for range b.N {
			p.Publish(context.Background(), rs)
		}
		return float64(b.Elapsed()-start) / float64(b.N*len(rs))
	}
	plain := run(PublisherOptions{TracerProvider: nil})
	traced := run(PublisherOptions{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))})
	b.ReportMetric((traced-plain)/1e6, "trace_overhead_ms/event")
}

func traceSpanID(ctx context.Context) string {
	return trace.SpanContextFromContext(ctx).SpanID().String()
}
