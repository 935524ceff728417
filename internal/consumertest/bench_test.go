package consumertest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/oklog/ulid/v2"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/perfreport"
	"github.com/outboxkit/terraform-provider-outbox/internal/stats"
)

// The overhead benchmark's load: each iteration applies benchMessages
// messages, benchConcurrency at a time, as concurrent batches of a
// function would.
const (
	benchMessages    = 25
	benchConcurrency = 4
)

// The handlers of BenchmarkConsumerOverhead: how each applies a message.
const (
	// handlerPlain has no side effect: Inbox.Process, the lease's PutItem,
	// then the completion's UpdateItem.
	handlerPlain = "plain"
	// handlerEffect's effect is a counter update: Inbox.Process, the
	// lease's PutItem, then the completion with the effect in one
	// TransactWriteItems.
	handlerEffect = "effect"
	// handlerEffectsOnly's effect is the same update, without a lease:
	// Inbox.ProcessEffectsOnly, the COMPLETED entry's put with the effect in
	// one TransactWriteItems.
	handlerEffectsOnly = "effects-only"
)

// BenchmarkConsumerOverhead measures what the kit adds to each message
// under the AWS latency model (perfreport.AWSLatencyModel, which the local
// stack adds to every DynamoDB call), for each handler above. Each message
// is applied twice, one after the other under the same load: without the
// kit (the effect written with an UpdateItem of the handler's own, at least
// once) and with it. It reports the write request units per message the kit
// adds (its writes to the inbox and the ledger minus the handler's own,
// from the ConsumedCapacity DynamoDB returns: perfreport.CapacityCounter),
// the part of them that is the inbox entry's, and the per-message latency
// it adds at the median and the 99th percentile.
func BenchmarkConsumerOverhead(b *testing.B) {
	for _, handler := range []string{handlerPlain, handlerEffect, handlerEffectsOnly} {
		b.Run(handler, func(b *testing.B) {
			ob := newOverheadBench(b, handler)
			var without, with []time.Duration
			for b.Loop() {
				w, k := ob.apply(b)
				without, with = append(without, w...), append(with, k...)
			}
			n := float64(len(with))
			inbox := ob.kitUnits.Units(inboxTable).Total()
			kit := inbox + ob.kitUnits.Units(ledgerTable).Total()
			b.ReportMetric((kit-ob.ownUnits.Units(ledgerTable).Total())/n, perfreport.UnitConsumerWRU)
			b.ReportMetric(inbox/n, perfreport.UnitConsumerInboxWRU)
			b.ReportMetric(addedMs(without, with, 50), perfreport.UnitConsumerP50)
			b.ReportMetric(addedMs(without, with, 99), perfreport.UnitConsumerP99)
		})
	}
}

// BenchmarkConsumerBatch measures the invocation time per message of
// HandleSQS for a batch of batchSize new messages on a standard queue,
// under the AWS latency model, with the effects-only handler, applied one
// at a time (concurrency-1) and all at once (concurrency-10). It is the
// function's duration divided among the batch, not a message's latency:
// each message still waits for its own round trip.
func BenchmarkConsumerBatch(b *testing.B) {
	for _, concurrency := range []int{1, consumer.DefaultConcurrency} {
		b.Run(fmt.Sprintf("concurrency-%d", concurrency), func(b *testing.B) {
			ob := newOverheadBench(b, handlerEffectsOnly)
			c, err := consumer.New(ob.inbox, func(_ context.Context, e consumer.Event[json.RawMessage], tx *consumer.Tx) error {
				tx.Add(countEffect(e.ID))
				return nil
			}, consumer.EffectsOnly(), consumer.WithConcurrency(concurrency), consumer.WithMetricsWriter(io.Discard))
			if err != nil {
				b.Fatal(err)
			}
			var invocations, own []time.Duration
			for b.Loop() {
				batch := sqsBatch(benchBatchSize)
				start := time.Now()
				resp, err := c.HandleSQS(context.Background(), batch)
				invocations = append(invocations, time.Since(start))
				if err != nil || len(resp.BatchItemFailures) != 0 {
					b.Fatalf("HandleSQS: %+v, %v", resp, err)
				}
				own = append(own, ob.ownBatch(b, concurrency))
			}
			perMessage := func(d []time.Duration, p float64) float64 {
				return float64(stats.Percentile(d, p)) / float64(time.Millisecond) / benchBatchSize
			}
			b.ReportMetric(perMessage(invocations, 50), perfreport.UnitConsumerInvocationMs)
			b.ReportMetric(perMessage(invocations, 99)-perMessage(own, 99), perfreport.UnitConsumerInvocationP99Added)
		})
	}
}

// ownBatch is the invocation a handler without the kit makes of a batch:
// each message's effect, the same counter update, written at least once by
// the handler itself, as many at once as the kit applies.
func (ob *overheadBench) ownBatch(b *testing.B, concurrency int) time.Duration {
	start := time.Now()
	slots := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for range benchBatchSize {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			u := countEffect(ulid.Make().String()).Update
			if _, err := ob.own.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: u.TableName, Key: u.Key,
				UpdateExpression: u.UpdateExpression, ExpressionAttributeValues: u.ExpressionAttributeValues}); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// benchBatchSize is a batch of BenchmarkConsumerBatch: the event source
// mapping's default batch size.
const benchBatchSize = 10

// sqsBatch is a standard queue's batch of n new events.
func sqsBatch(n int) events.SQSEvent {
	var batch events.SQSEvent
	for range n {
		r := record(ulid.Make().String(), `{"orderId":"1234","total":42.5}`)
		batch.Records = append(batch.Records, sqsMessage("m-"+r.EventID, string(r.EnvelopeJSON()),
			"arn:aws:sqs:us-east-1:123456789012:billing", ""))
	}
	return batch
}

// addedMs is the p-th percentile of with minus that of without, in
// milliseconds.
func addedMs(without, with []time.Duration, p float64) float64 {
	return float64(stats.Percentile(with, p)-stats.Percentile(without, p)) / float64(time.Millisecond)
}

// overheadBench is a local stack's DynamoDB under the latency model, with
// the inbox and ledger tables, and two clients whose writes are counted
// apart: the handler's own and the kit's.
type overheadBench struct {
	handler            string
	own                *dynamodb.Client
	inbox              *consumer.Inbox
	ownUnits, kitUnits *perfreport.CapacityCounter
}

func newOverheadBench(b *testing.B, handler string) *overheadBench {
	b.Helper()
	stack := localawstest.StartDynamoDB(b)
	ctx := context.Background()
	cfg := localawstest.Config(stack)
	createTables(ctx, b, dynamodb.NewFromConfig(cfg))
	remove, err := perfreport.ApplyLatencyModel(ctx, localawstest.Control(stack), perfreport.AWSLatencyModel)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := remove(); err != nil {
			b.Error(err)
		}
	})
	ob := &overheadBench{handler: handler, ownUnits: perfreport.NewCapacityCounter(), kitUnits: perfreport.NewCapacityCounter()}
	ob.own = dynamodb.NewFromConfig(cfg, ob.ownUnits.Option)
	ob.inbox, err = consumer.NewInbox(dynamodb.NewFromConfig(cfg, ob.kitUnits.Option), inboxTable,
		consumer.WithLogger(consumer.NewLogger(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	return ob
}

// apply applies benchMessages new messages without the kit and with it,
// and returns each one's latency of both.
func (ob *overheadBench) apply(b *testing.B) (without, with []time.Duration) {
	ids := make(chan string, benchMessages)
	for range benchMessages {
		ids <- ulid.Make().String()
	}
	close(ids)
	hash := hashOf(b, `{"orderId":"1234","total":42.5}`)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range benchConcurrency {
		wg.Go(func() {
			for id := range ids {
				w, k, err := ob.applyOne(id, hash)
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				without, with = append(without, w), append(with, k)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return without, with
}

// applyOne applies one message without the kit, then with it.
func (ob *overheadBench) applyOne(id, hash string) (without, with time.Duration, err error) {
	ctx := context.Background()
	start := time.Now()
	effect := ob.handler != handlerPlain
	if effect {
		u := countEffect("OWN#" + id).Update
		if _, err := ob.own.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: u.TableName, Key: u.Key,
			UpdateExpression: u.UpdateExpression, ExpressionAttributeValues: u.ExpressionAttributeValues}); err != nil {
			return 0, 0, fmt.Errorf("the handler's own effect: %w", err)
		}
	}
	without = time.Since(start)
	process := ob.inbox.Process
	if ob.handler == handlerEffectsOnly {
		process = ob.inbox.ProcessEffectsOnly
	}
	start = time.Now()
	out, err := process(ctx, id, hash, func(_ context.Context, tx *consumer.Tx) error {
		if effect {
			tx.Add(countEffect(id))
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("processing: %w", err)
	}
	if out != consumer.Applied {
		return 0, 0, fmt.Errorf("processing = %s, want applied", out)
	}
	return without, time.Since(start), nil
}
