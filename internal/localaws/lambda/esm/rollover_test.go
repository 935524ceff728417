package esm_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	ltypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	localddb "github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambda/esm"
)

// ddbFixture is a fixture whose mapping reads a real DynamoDB stream with
// several shards that roll over every hour of a clock the test moves.
type ddbFixture struct {
	*fixture
	ddb    *localddb.Service
	db     *dynamodb.Client
	offset atomic.Int64
}

func newDDBFixture(t *testing.T, shards int) *ddbFixture {
	t.Helper()
	f := &ddbFixture{fixture: &fixture{fns: &fakeFunctions{exists: true}, queues: &fakeQueues{}, auth: &denyAuthorizer{deny: map[string]bool{}}}}
	f.env = awsapi.NewEnv("", "", nil)
	f.env.Now = func() time.Time { return time.Now().Add(time.Duration(f.offset.Load())) }
	f.env.SetAuthorizer(f.auth)
	f.ddb = localddb.New(f.env, localddb.Options{StreamShards: shards, StreamShardLifetime: time.Hour, TTLSweepInterval: -1})
	// Closed after the mapping service, which reads its streams.
	t.Cleanup(func() { _ = f.ddb.Close() })
	cfg := f.serve(t, func() (esm.Streams, error) { return localaws.MappingStreams(f.ddb.Streams()), nil }, f.ddb, f.ddb.StreamsAPI())
	f.client = lambda.NewFromConfig(cfg)
	f.db = dynamodb.NewFromConfig(cfg)
	return f
}

// batchLog records each invocation's records and when it started and
// ended, on one counter.
type batchLog struct {
	mu      sync.Mutex
	tick    int
	batches []loggedBatch
}

type loggedBatch struct {
	start, end int
	recs       []events.DynamoDBEventRecord
}

func (l *batchLog) handler(ev events.DynamoDBEvent) ([]byte, string, error) {
	l.mu.Lock()
	l.tick++
	b := loggedBatch{start: l.tick, recs: ev.Records}
	l.mu.Unlock()
	time.Sleep(time.Duration(len(ev.Records)%3) * time.Millisecond)
	l.mu.Lock()
	l.tick++
	b.end = l.tick
	l.batches = append(l.batches, b)
	l.mu.Unlock()
	return []byte(`{"batchItemFailures":[]}`), "", nil
}

func (l *batchLog) snapshot() []loggedBatch {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]loggedBatch(nil), l.batches...)
}

func (l *batchLog) delivered() int {
	n := 0
	for _, b := range l.snapshot() {
		n += len(b.recs)
	}
	return n
}

// TestPollerAcrossShardRollovers runs a mapping with ParallelizationFactor
// 2 over a stream of 3 shards that has rolled over once when it starts and
// rolls over again while it reads. Every
// record is delivered once; each partition key's records (of two items per
// key) arrive in sequence order; and no batch of a child shard starts
// before every batch of its parent has ended.
func TestPollerAcrossShardRollovers(t *testing.T) {
	const (
		shards      = 3
		keys        = 12
		rounds      = 3 // writes of each item per generation
		generations = 3
	)
	f := newDDBFixture(t, shards)
	ctx := context.Background()
	out, err := f.db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String("orders"),
		BillingMode: ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{
			{AttributeName: aws.String("PK"), AttributeType: ddbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String("SK"), AttributeType: ddbtypes.ScalarAttributeTypeS},
		},
		KeySchema: []ddbtypes.KeySchemaElement{
			{AttributeName: aws.String("PK"), KeyType: ddbtypes.KeyTypeHash},
			{AttributeName: aws.String("SK"), KeyType: ddbtypes.KeyTypeRange},
		},
		StreamSpecification: &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewTypeNewAndOldImages},
	})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(out.TableDescription.LatestStreamArn)
	log := &batchLog{}
	f.fns.setHandler(log.handler)

	// Two generations are written before the mapping starts (it finds a
	// backlog across parents and children), the last while it reads.
	written := 0
	for g := range generations {
		if g == generations-1 {
			f.create(t, &lambda.CreateEventSourceMappingInput{EventSourceArn: aws.String(arn), ParallelizationFactor: aws.Int32(2), BatchSize: aws.Int32(4),
				FunctionResponseTypes: []ltypes.FunctionResponseType{ltypes.FunctionResponseTypeReportBatchItemFailures}})
		}
		if g > 0 {
			f.offset.Add(int64(time.Hour + time.Second)) // the next write rolls the shards over
		}
		for r := range rounds {
			for k := range keys {
				for _, sk := range []string{"order", "outbox"} {
					v := strconv.Itoa((g*rounds+r)*2 + len(sk)%2)
					if _, err := f.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("orders"), Item: map[string]ddbtypes.AttributeValue{
						"PK": &ddbtypes.AttributeValueMemberS{Value: fmt.Sprintf("K%02d", k)}, "SK": &ddbtypes.AttributeValueMemberS{Value: sk},
						"v": &ddbtypes.AttributeValueMemberN{Value: v}}}); err != nil {
						t.Fatal(err)
					}
					written++
				}
			}
		}
	}
	eventually(t, 30*time.Second, func() bool { return log.delivered() >= written },
		func() string { return fmt.Sprintf("%d of %d records delivered", log.delivered(), written) })

	shardOf, parentOf := shardsOfRecords(t, f.ddb.Streams(), arn)
	if len(parentOf) != shards*generations {
		t.Fatalf("%d shards, want %d after %d rollovers", len(parentOf), shards*generations, generations-1)
	}
	checkDeliveries(t, log.snapshot(), written, shardOf, parentOf)
}

// shardsOfRecords maps each record's sequence number to its shard, and each
// shard to its parent.
func shardsOfRecords(t *testing.T, streams *localddb.Streams, arn string) (shardOf, parentOf map[string]string) {
	t.Helper()
	list, err := streams.Shards(arn)
	if err != nil {
		t.Fatal(err)
	}
	shardOf, parentOf = map[string]string{}, map[string]string{}
	for _, sh := range list {
		parentOf[sh.ShardID] = sh.ParentShardID
		recs, err := streams.ShardRecords(arn, sh.ShardID, "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			shardOf[r.Dynamodb.SequenceNumber] = sh.ShardID
		}
	}
	return shardOf, parentOf
}

// checkDeliveries checks once-only delivery, per-partition-key order, and
// that every child shard's first batch started after its parent's last
// batch ended.
func checkDeliveries(t *testing.T, batches []loggedBatch, written int, shardOf, parentOf map[string]string) {
	t.Helper()
	seen := map[string]bool{}
	lastOfKey := map[string]string{}
	firstStart, lastEnd := map[string]int{}, map[string]int{}
	// Batches of one key run one after another (one lane per key), so
	// ordering them by start orders each key's records.
	slices.SortFunc(batches, func(a, b loggedBatch) int { return a.start - b.start })
	for _, b := range batches {
		for _, r := range b.recs {
			seq := r.Change.SequenceNumber
			if seen[seq] {
				t.Fatalf("record %s delivered twice", seq)
			}
			seen[seq] = true
			pk := r.Change.Keys["PK"].String()
			if prev := lastOfKey[pk]; prev != "" && localddb.CompareSequenceNumbers(seq, prev) <= 0 {
				t.Fatalf("key %s: record %s delivered after %s", pk, seq, prev)
			}
			lastOfKey[pk] = seq
			sh := shardOf[seq]
			if s, ok := firstStart[sh]; !ok || b.start < s {
				firstStart[sh] = b.start
			}
			lastEnd[sh] = max(lastEnd[sh], b.end)
		}
	}
	if len(seen) != written {
		t.Fatalf("%d distinct records delivered, want %d", len(seen), written)
	}
	children := 0
	for child, parent := range parentOf {
		if parent == "" {
			continue
		}
		if _, ok := firstStart[child]; !ok {
			continue
		}
		children++
		if firstStart[child] < lastEnd[parent] {
			t.Fatalf("shard %s: a batch started (tick %d) before its parent %s ended (tick %d)", child, firstStart[child], parent, lastEnd[parent])
		}
	}
	if children == 0 {
		t.Fatal("no child shard delivered anything: no rollover was crossed")
	}
}
