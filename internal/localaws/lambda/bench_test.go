package lambda_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
)

// BenchmarkColdStart measures an invocation that starts a new process
// (through the SDK client, stopping the function's processes between
// iterations).
func BenchmarkColdStart(b *testing.B) {
	h := newHarness(b)
	h.create(b, "cold", nil)
	ctx := context.Background()
	in := &awslambda.InvokeInput{FunctionName: aws.String("cold"), Payload: []byte(`{"action":"echo"}`)}
	var total time.Duration
	for b.Loop() {
		b.StopTimer()
		if _, err := h.ctl.StopLambda(ctx, "cold"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		out, err := h.client.Invoke(ctx, in)
		total += time.Since(start)
		if err != nil || out.FunctionError != nil {
			b.Fatalf("Invoke: %v", err)
		}
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/cold-invoke")
}

// BenchmarkWarmInvoke measures an invocation served by a running process.
func BenchmarkWarmInvoke(b *testing.B) {
	h := newHarness(b)
	h.create(b, "warm", nil)
	ctx := context.Background()
	in := &awslambda.InvokeInput{FunctionName: aws.String("warm"), Payload: []byte(`{"action":"echo"}`)}
	if _, err := h.client.Invoke(ctx, in); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	for b.Loop() {
		out, err := h.client.Invoke(ctx, in)
		if err != nil || out.FunctionError != nil {
			b.Fatalf("Invoke: %v", err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/warm-invoke")
	if n, _ := h.ctl.LambdaInstances(ctx, "warm"); n.Started != 1 {
		b.Fatalf("warm invocations started %d processes", n.Started)
	}
}
