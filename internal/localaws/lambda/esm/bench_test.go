package esm_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambda/esm"
)

// BenchmarkWriteToInvocation measures the latency from a record's commit
// on the stream to the function's invocation with Lambda's cadence of 4
// polls a second per shard (expected: about 0 to 250 ms, p50 near 125 ms).
func BenchmarkWriteToInvocation(b *testing.B) {
	f := newFixture(b)
	f.svc.SetPollInterval(esm.DefaultPollInterval)
	got := make(chan time.Time, 1)
	f.fns.setHandler(func(events.DynamoDBEvent) ([]byte, string, error) {
		got <- time.Now()
		return nil, "", nil
	})
	f.create(b, &lambda.CreateEventSourceMappingInput{})
	var lat []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Spread writes over the poll period, as real writes are.
		time.Sleep(time.Duration(i%7) * 37 * time.Millisecond)
		start := time.Now()
		f.stream.put("P", fmt.Sprint(i), start)
		lat = append(lat, (<-got).Sub(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "ms-p99")
	}
}
