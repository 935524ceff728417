package dynamodb_test

import (
	"fmt"
	"hash/fnv"
	"runtime"
	"runtime/debug"
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
//
// The rates are items per second of wall time (first5k_items/s,
// last5k_items/s, ratio) and, because a shared machine's load changes
// the wall rate from one second to the next, also items per second of
// this process's CPU time (first5k_items/cpu-s, last5k_items/cpu-s,
// cpu_ratio), which depends much less on other processes (though still on
// the caches they share), and the live heap at the end (live_heap_MB).
//
// It runs with the Go runtime's default garbage collector target (GOGC
// 100) and with cmd/localaws's (400): every table lives in memory, and
// the more it holds, the more each collection has to mark.
func BenchmarkWriteRateBySize(b *testing.B) {
	for _, gc := range []int{100, localawsGCPercent} {
		b.Run(fmt.Sprintf("gogc=%d", gc), func(b *testing.B) {
			defer debug.SetGCPercent(debug.SetGCPercent(gc))
			benchmarkWriteRate(b)
		})
	}
}

// localawsGCPercent is cmd/localaws's default --gc-percent.
const localawsGCPercent = 400

func benchmarkWriteRate(b *testing.B) {
	const (
		items   = 100000
		window  = 5000
		writers = 8
	)
	for b.Loop() {
		first, last, live := writeRateRun(b, items, window, writers)
		b.ReportMetric(float64(live)/(1<<20), "live_heap_MB")
		b.ReportMetric(first.perWall(window), "first5k_items/s")
		b.ReportMetric(last.perWall(window), "last5k_items/s")
		b.ReportMetric(last.perWall(window)/first.perWall(window), "ratio")
		if first.cpu > 0 && last.cpu > 0 {
			b.ReportMetric(first.perCPU(window), "first5k_items/cpu-s")
			b.ReportMetric(last.perCPU(window), "last5k_items/cpu-s")
			b.ReportMetric(last.perCPU(window)/first.perCPU(window), "cpu_ratio")
		}
	}
}

// span is the wall and CPU time a window of items took.
type span struct{ wall, cpu time.Duration }

func (s span) perWall(n int) float64 { return float64(n) / s.wall.Seconds() }
func (s span) perCPU(n int) float64  { return float64(n) / s.cpu.Seconds() }

// mark is a point in wall and process CPU time.
type mark struct{ wall, cpu time.Duration }

func markNow(start time.Time) mark { return mark{wall: time.Since(start), cpu: processCPU()} }

func spanOf(from, to mark) span { return span{wall: to.wall - from.wall, cpu: to.cpu - from.cpu} }

// writeRateRun writes items on a new service and returns the time the
// first and the last window items took.
// It also returns the live heap once the items are written.
func writeRateRun(b *testing.B, items, window, writers int) (first, last span, live uint64) {
	b.Helper()
	e := newEnv(b, localddb.Options{})
	e.createTable(b, "outbox", "NEW_AND_OLD_IMAGES")
	var (
		next    atomic.Int64 // transactions handed out
		written atomic.Int64 // items committed
		marks   [3]atomic.Pointer[mark]
	)
	txs := int64(items / 2)
	start := time.Now()
	begin := markNow(start)
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
				var slot int
				switch n := written.Add(2); n {
				case int64(window):
					slot = 0
				case int64(items - window):
					slot = 1
				case int64(items):
					slot = 2
				default:
					continue
				}
				m := markNow(start)
				marks[slot].Store(&m)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return spanOf(begin, *marks[0].Load()), spanOf(*marks[1].Load(), *marks[2].Load()), ms.HeapAlloc
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

// BenchmarkQueryOneShard measures a Query of one partition of a sparse
// GSI that holds 20,000 items in 16 partitions (PENDING#0..15, as a
// sharded pending index), beside 20,000 items not in the index: a Query
// reads its partition, so its cost follows the partition's size, not the
// index's or the table's.
func BenchmarkQueryOneShard(b *testing.B) {
	const items, shards = 20000, 16
	e := shardedIndex(b, items, shards)
	queries, read := 0, 0
	start := time.Now()
	for b.Loop() {
		out, err := e.ddb.Query(ctx, shardQuery(queries%shards, nil))
		if err != nil {
			b.Fatal(err)
		}
		queries++
		read += len(out.Items)
	}
	if read != queries*100 {
		b.Fatalf("read %d items in %d queries, want 100 a query", read, queries)
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(queries), "us/query")
	b.ReportMetric(items, "indexed-items")
}

// BenchmarkQueryPagesOfOneShard reads one partition of the same index page
// by page, each page from the last one's LastEvaluatedKey, as a sweep of a
// pending index does: a page costs its own items, not the partition's, so
// the time a page takes stays that of the first page however deep into the
// partition it is.
func BenchmarkQueryPagesOfOneShard(b *testing.B) {
	const items, shards = 20000, 16
	e := shardedIndex(b, items, shards)
	sweeps, pages, read := 0, 0, 0
	start := time.Now()
	for b.Loop() {
		var from map[string]types.AttributeValue
		sweeps++
		for {
			out, err := e.ddb.Query(ctx, shardQuery(sweeps%shards, from))
			if err != nil {
				b.Fatal(err)
			}
			pages++
			read += len(out.Items)
			if from = out.LastEvaluatedKey; from == nil {
				break
			}
		}
	}
	if want := sweeps * items / shards; read != want {
		b.Fatalf("read %d items, want %d", read, want)
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(pages), "us/page")
	b.ReportMetric(items/shards, "partition-items")
}

// shardedIndex is a table of 2×items items, every other one in the sparse
// GSI1, spread over shards partitions.
func shardedIndex(b *testing.B, items, shards int) *env {
	e := newEnv(b, localddb.Options{})
	e.createTable(b, "outbox", "")
	for i := 0; i < 2*items; i += 25 {
		var reqs []types.WriteRequest
		for j := i; j < i+25; j++ {
			item := map[string]types.AttributeValue{"PK": s("ORDER#" + strconv.Itoa(j)), "SK": s("ORDER"), "payload": s(`{"type":"OrderPlaced"}`)}
			if j%2 == 1 {
				item["SK"] = s("OUTBOX#" + strconv.Itoa(j))
				item["GSI1PK"], item["GSI1SK"] = s("PENDING#"+strconv.Itoa(j/2%shards)), s(fmt.Sprintf("%010d", j))
			}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		}
		if _, err := e.ddb.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"outbox": reqs}}); err != nil {
			b.Fatal(err)
		}
	}
	return e
}

// shardQuery is a 100-item page of shard's partition of GSI1, from start.
func shardQuery(shard int, start map[string]types.AttributeValue) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		TableName: aws.String("outbox"), IndexName: aws.String("GSI1"), Limit: aws.Int32(100), ExclusiveStartKey: start,
		KeyConditionExpression:    aws.String("GSI1PK = :shard AND GSI1SK < :before"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":shard": s("PENDING#" + strconv.Itoa(shard)), ":before": s("9")},
	}
}

// BenchmarkUpdateItemOnStream measures a conditional UpdateItem that
// returns the new item, as a relay's hold and mark are, on a table with a
// NEW_IMAGE stream: every write of such a table compares the item's old
// and new images to decide whether it records a MODIFY. It reports the
// stack's CPU time per update (the process's, client included).
func BenchmarkUpdateItemOnStream(b *testing.B) {
	const items = 1000
	e := newEnv(b, localddb.Options{})
	e.createTable(b, "outbox", "NEW_IMAGE")
	for i := range items {
		if _, err := e.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("outbox"), Item: map[string]types.AttributeValue{
			"PK": s("ORDER#" + strconv.Itoa(i)), "SK": s("OUTBOX#" + strconv.Itoa(i)), "status": s("PENDING"), "attempts": n("0"),
			"payload": s(`{"type":"OrderPlaced","total":42}`), "GSI1PK": s("PENDING#" + strconv.Itoa(i%16)), "GSI1SK": s(fmt.Sprintf("%010d", i)),
		}}); err != nil {
			b.Fatal(err)
		}
	}
	updates := 0
	start := markNow(time.Now())
	for b.Loop() {
		i := updates % items
		out, err := e.ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String("outbox"), Key: map[string]types.AttributeValue{"PK": s("ORDER#" + strconv.Itoa(i)), "SK": s("OUTBOX#" + strconv.Itoa(i))},
			UpdateExpression:          aws.String("SET nextAttemptAt = :until ADD attempts :one"),
			ConditionExpression:       aws.String("#status = :pending"),
			ExpressionAttributeNames:  map[string]string{"#status": "status"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":pending": s("PENDING"), ":until": n(strconv.Itoa(updates)), ":one": n("1")},
			ReturnValues:              types.ReturnValueAllNew,
		})
		if err != nil {
			b.Fatal(err)
		}
		if got := out.Attributes["nextAttemptAt"]; got == nil || got.(*types.AttributeValueMemberN).Value != strconv.Itoa(updates) {
			b.Fatalf("update %d returned nextAttemptAt %v", updates, got)
		}
		updates++
	}
	used := spanOf(start, markNow(time.Now()))
	b.ReportMetric(float64(used.cpu.Microseconds())/float64(updates), "cpu-us/update")
}
