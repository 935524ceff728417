package consumertest_test

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/perfreport"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/claimsweep"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// BenchmarkClaimCheck writes events of 1 MiB with the claim check, publishes
// them to an SQS queue and applies them with the consumer kit, under the
// AWS latency model: events and MiB per second end to end (one writer, one
// relay batch, one consumer batch of 10), S3 requests per event on the way
// (the writer's put, the relay's tag, the consumer's get) and in the sweep,
// and the write units of the writer's transaction per event.
func BenchmarkClaimCheck(b *testing.B) {
	const batch, size = 10, 1 << 20
	ctx := context.Background()
	stack := localawstest.Start(b)
	cfg := localawstest.Config(stack)
	d := newDeliveries(b)
	e := d.engine(ctx)
	// The S3 requests of the claim check.
	var calls atomic.Int64
	objects := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, countRequests(&calls, "PutObject", "GetObject", "PutObjectTagging", "HeadObject"))
	})
	units := perfreport.NewCapacityCounter()
	ddb := dynamodb.NewFromConfig(cfg, units.Option)
	table := outbox.Table{Name: "files"}.WithDefaults()
	relaytest.CreateBucketAndTable(ctx, b, objects, ddb, "claims", table)
	remove, err := perfreport.ApplyLatencyModel(ctx, localawstest.Control(stack), perfreport.AWSLatencyModel)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = remove() })
	w, err := outbox.NewWriter(ddb, table, outbox.WithClaimCheck(objects, "claims"))
	if err != nil {
		b.Fatal(err)
	}
	q := d.targetQueue("claims", "", targetkind.PublisherOptions{Objects: objects})
	c, err := consumer.New(e.inbox(), func(context.Context, consumer.Event[map[string]any], *consumer.Tx) error { return nil },
		consumer.WithObjectStore(objects), consumer.WithMetricsWriter(io.Discard))
	if err != nil {
		b.Fatal(err)
	}
	units.Reset()
	b.ResetTimer()
	for range b.N {
		var written []outbox.Record
		for range batch {
			rs, err := w.Write(ctx, nil, outbox.Event{Source: "com.example.files", DetailType: "FileStored", Detail: blob(size)})
			if err != nil {
				b.Fatal(err)
			}
			written = append(written, rs...)
		}
		q.publish(ctx, written)
		if resp, err := c.HandleSQS(ctx, q.receive(batch)); err != nil || len(resp.BatchItemFailures) != 0 {
			b.Fatalf("HandleSQS: %+v, %v", resp, err)
		}
	}
	b.StopTimer()
	events := float64(b.N * batch)
	b.ReportMetric(events/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(events*size/(1<<20)/b.Elapsed().Seconds(), "MiB/s")
	b.ReportMetric(float64(calls.Load())/events, "s3requests/event")
	b.ReportMetric(units.Units(table.Name).Total()/events, "wru/event")
	calls.Store(0)
	sweep := claimsweep.Sweeper{S3: objects, Items: ddb, Table: table, Bucket: "claims",
		Now: func() time.Time { return time.Now().Add(claimsweep.DefaultGrace + time.Minute) }}
	if _, err := sweep.Sweep(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(calls.Load())/events, "sweeps3requests/event")
}
