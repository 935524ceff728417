package dynamodb_test

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	localddb "github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
)

// BenchmarkTransactWriteItems measures outbox-shaped transactions through
// the SDK: a business item and its outbox record, with a stream on.
func BenchmarkTransactWriteItems(b *testing.B) {
	e := newEnv(b, localddb.Options{})
	e.createTable(b, "outbox", "NEW_AND_OLD_IMAGES")
	i := 0
	start := time.Now()
	for b.Loop() {
		i++
		id := strconv.Itoa(i)
		_, err := e.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: aws.String("outbox"), Item: map[string]types.AttributeValue{"PK": s("ORDER#" + id), "SK": s("ORDER"), "total": n("42")},
				ConditionExpression: aws.String("attribute_not_exists(PK)")}},
			{Put: &types.Put{TableName: aws.String("outbox"), Item: map[string]types.AttributeValue{"PK": s("ORDER#" + id), "SK": s("OUTBOX#" + id),
				"GSI1PK": s("PENDING#" + strconv.Itoa(i%4)), "GSI1SK": s(id), "payload": s(`{"type":"OrderPlaced"}`)}}},
		}})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(i)/time.Since(start).Seconds(), "tx/s")
}

// BenchmarkSweepTTLLiveItems measures one TTL sweep of a table holding
// 20,000 items that carry the TTL attribute and none of which has expired:
// a sweep should cost nothing like a pass over the table.
func BenchmarkSweepTTLLiveItems(b *testing.B) {
	const live = 20000
	e := newEnv(b, localddb.Options{TTLSweepInterval: -1})
	e.createTable(b, "sessions", "NEW_AND_OLD_IMAGES")
	if _, err := e.ddb.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String("sessions"),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("expiresAt"), Enabled: aws.Bool(true)}}); err != nil {
		b.Fatal(err)
	}
	later := strconv.FormatInt(time.Now().Add(24*time.Hour).Unix(), 10)
	for i := 0; i < live; i += 25 {
		var reqs []types.WriteRequest
		for j := i; j < i+25; j++ {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
				"PK": s("SESSION#" + strconv.Itoa(j)), "SK": s("x"), "expiresAt": n(later), "payload": s(`{"user":"u"}`)}}})
		}
		if _, err := e.ddb.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"sessions": reqs}}); err != nil {
			b.Fatal(err)
		}
	}
	sweeps := 0
	start := time.Now()
	for b.Loop() {
		e.svc.SweepTTL()
		sweeps++
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(sweeps), "us/sweep")
	b.ReportMetric(live, "live-items")
}

// BenchmarkWriteRateBySize writes 100,000 items as 50,000 outbox-shaped
// TransactWriteItems (a business item and its outbox record, with a stream
// and a sparse GSI) from 8 writers, and reports the write rate over the
// first and the last 5,000 items: the rate must not fall as the table
// grows. Partition keys are spread as order ids are, so new keys land
// anywhere in the key order. Run with -benchtime=1x.
func BenchmarkWriteRateBySize(b *testing.B) {
	const (
		items   = 100000
		window  = 5000
		writers = 8
	)
	for b.Loop() {
		first, last := writeRateRun(b, items, window, writers)
		b.ReportMetric(first, "first5k_items/s")
		b.ReportMetric(last, "last5k_items/s")
		b.ReportMetric(last/first, "ratio")
	}
}

// writeRateRun writes items on a new service and returns the item rates
// over the first and the last window items.
func writeRateRun(b *testing.B, items, window, writers int) (first, last float64) {
	b.Helper()
	e := newEnv(b, localddb.Options{})
	e.createTable(b, "outbox", "NEW_AND_OLD_IMAGES")
	var (
		next    atomic.Int64 // transactions handed out
		written atomic.Int64 // items committed
		marks   [3]atomic.Int64
	)
	txs := int64(items / 2)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > txs {
					return
				}
				if err := writeOrder(e, i); err != nil {
					errs <- err
					return
				}
				switch n := written.Add(2); {
				case n == int64(window):
					marks[0].Store(time.Since(start).Nanoseconds())
				case n == int64(items-window):
					marks[1].Store(time.Since(start).Nanoseconds())
				case n == int64(items):
					marks[2].Store(time.Since(start).Nanoseconds())
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	firstDur := time.Duration(marks[0].Load())
	lastDur := time.Duration(marks[2].Load() - marks[1].Load())
	return float64(window) / firstDur.Seconds(), float64(window) / lastDur.Seconds()
}

// writeOrder writes order i and its outbox record in one transaction.
func writeOrder(e *env, i int64) error {
	h := fnv.New64a()
	_, _ = h.Write([]byte(strconv.FormatInt(i, 10)))
	order := "ORDER#" + strconv.FormatUint(h.Sum64(), 36)
	id := fmt.Sprintf("%012d", i)
	_, err := e.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String("outbox"), Item: map[string]types.AttributeValue{"PK": s(order), "SK": s("ORDER"), "total": n("42")},
			ConditionExpression: aws.String("attribute_not_exists(PK)")}},
		{Put: &types.Put{TableName: aws.String("outbox"), Item: map[string]types.AttributeValue{"PK": s(order), "SK": s("OUTBOX#" + id),
			"GSI1PK": s("PENDING#" + strconv.FormatInt(i%16, 10)), "GSI1SK": s(id), "payload": s(`{"type":"OrderPlaced"}`)}}},
	}})
	return err
}
