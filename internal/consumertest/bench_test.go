package consumertest_test

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/oklog/ulid/v2"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	localddb "github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
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

// BenchmarkConsumerOverhead measures what the kit adds to each message
// under the AWS latency model (perfreport.AWSLatencyModel, which the local
// stack adds to every DynamoDB call), for a handler without side effects
// (plain) and for one whose effect is a counter update (effect). Each
// message is applied twice, one after the other under the same load:
// without the kit (the effect written with an UpdateItem of the handler's
// own, at least once) and with it (Inbox.Process: the lease's PutItem, then
// the completion, alone or with the effect in one TransactWriteItems). It
// reports the write request units per message the kit adds, from the
// ConsumedCapacity DynamoDB returns (perfreport.CapacityCounter), and the
// per-message latency it adds at the median and the 99th percentile.
func BenchmarkConsumerOverhead(b *testing.B) {
	for _, effect := range []bool{false, true} {
		name := "plain"
		if effect {
			name = "effect"
		}
		b.Run(name, func(b *testing.B) {
			ob := newOverheadBench(b, effect)
			var without, with []time.Duration
			for b.Loop() {
				w, k := ob.apply(b)
				without, with = append(without, w...), append(with, k...)
			}
			n := float64(len(with))
			kit := ob.kitUnits.Units(inboxTable).Total() + ob.kitUnits.Units(ledgerTable).Total()
			b.ReportMetric((kit-ob.ownUnits.Units(ledgerTable).Total())/n, perfreport.UnitConsumerWRU)
			b.ReportMetric(addedMs(without, with, 50), perfreport.UnitConsumerP50)
			b.ReportMetric(addedMs(without, with, 99), perfreport.UnitConsumerP99)
		})
	}
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
	effect             bool
	own                *dynamodb.Client
	inbox              *consumer.Inbox
	ownUnits, kitUnits *perfreport.CapacityCounter
}

func newOverheadBench(b *testing.B, effect bool) *overheadBench {
	b.Helper()
	stack := localawstest.Start(b, func(o *localaws.Options) { o.NoServices = true })
	if err := stack.Register(localddb.New(stack.Env(), localddb.Options{TTLSweepInterval: -1})); err != nil {
		b.Fatal(err)
	}
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
	ob := &overheadBench{effect: effect, ownUnits: perfreport.NewCapacityCounter(), kitUnits: perfreport.NewCapacityCounter()}
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
	if ob.effect {
		u := countEffect("OWN#" + id).Update
		if _, err := ob.own.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: u.TableName, Key: u.Key,
			UpdateExpression: u.UpdateExpression, ExpressionAttributeValues: u.ExpressionAttributeValues}); err != nil {
			return 0, 0, fmt.Errorf("the handler's own effect: %w", err)
		}
	}
	without = time.Since(start)
	start = time.Now()
	out, err := ob.inbox.Process(ctx, id, hash, func(_ context.Context, tx *consumer.Tx) error {
		if ob.effect {
			tx.Add(countEffect(id))
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("Process: %w", err)
	}
	if out != consumer.Applied {
		return 0, 0, fmt.Errorf("Process = %s, want applied", out)
	}
	return without, time.Since(start), nil
}
