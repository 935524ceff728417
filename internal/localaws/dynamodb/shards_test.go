package dynamodb_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	localddb "github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// shardEnv is a service with several shards per stream that roll over
// every hour of a clock the test moves.
type shardEnv struct {
	*env
	clock *localawstest.Clock
}

func newShardEnv(t *testing.T, shards int) *shardEnv {
	t.Helper()
	e, clock := newStoppedEnv(t, localddb.Options{StreamShards: shards, StreamShardLifetime: time.Hour, TTLSweepInterval: -1}, time.Now())
	return &shardEnv{env: e, clock: clock}
}

// putVersion writes version v of item key: a MODIFY after the first.
func (se *shardEnv) putVersion(t *testing.T, key string, v int) {
	t.Helper()
	if _, err := se.ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("orders"),
		Item: map[string]types.AttributeValue{"PK": s(key), "SK": s("x"), "v": n(fmt.Sprint(v))}}); err != nil {
		t.Fatal(err)
	}
}

func (se *shardEnv) shards(t *testing.T, arn string) []stypes.Shard {
	t.Helper()
	var out []stypes.Shard
	in := &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn), Limit: aws.Int32(3)}
	for {
		d, err := se.streams.DescribeStream(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d.StreamDescription.Shards...)
		if d.StreamDescription.LastEvaluatedShardId == nil {
			return out
		}
		in.ExclusiveStartShardId = d.StreamDescription.LastEvaluatedShardId
	}
}

// shardRecords reads a shard from TRIM_HORIZON until GetRecords returns no
// NextShardIterator or nothing more.
func (se *shardEnv) shardRecords(t *testing.T, arn, shardID string) (recs []stypes.Record, ended bool) {
	t.Helper()
	it, err := se.streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: aws.String(shardID),
		ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatal(err)
	}
	next := it.ShardIterator
	for range 100 {
		out, err := se.streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: next, Limit: aws.Int32(7)})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, out.Records...)
		if out.NextShardIterator == nil {
			return recs, true
		}
		if len(out.Records) == 0 {
			return recs, false
		}
		next = out.NextShardIterator
	}
	t.Fatal("shard never ended")
	return nil, false
}

// TestStreamShardsAndRollover: records go to one of several shards by
// partition key; after the shard lifetime each shard closes (with an
// EndingSequenceNumber; GetRecords reads the rest, then gives no
// NextShardIterator) and a child continues it, so one key's records are in
// order along its parent-child chain.
func TestStreamShardsAndRollover(t *testing.T) {
	t.Parallel()
	const (
		shardCount = 3
		keys       = 30
		rollovers  = 2
	)
	se := newShardEnv(t, shardCount)
	se.createTable(t, "orders", "NEW_AND_OLD_IMAGES")
	arn := se.streamArn(t, "orders")
	first := se.shards(t, arn)
	if len(first) != shardCount {
		t.Fatalf("a new stream has %d shards, want %d", len(first), shardCount)
	}
	for _, sh := range first {
		if sh.ParentShardId != nil || sh.SequenceNumberRange.EndingSequenceNumber != nil {
			t.Fatalf("a first shard has a parent or is closed: %+v", sh)
		}
	}

	for v := 0; v <= rollovers; v++ {
		if v > 0 {
			se.clock.Advance(time.Hour + time.Second)
		}
		for k := range keys {
			se.putVersion(t, fmt.Sprintf("K%02d", k), v)
		}
	}

	all := se.shards(t, arn)
	if len(all) != shardCount*(rollovers+1) {
		t.Fatalf("after %d rollovers: %d shards, want %d", rollovers, len(all), shardCount*(rollovers+1))
	}
	parentOf := map[string]string{}
	closed := 0
	for i, sh := range all {
		id := aws.ToString(sh.ShardId)
		parentOf[id] = aws.ToString(sh.ParentShardId)
		if i >= shardCount {
			if _, ok := parentOf[parentOf[id]]; !ok {
				t.Fatalf("shard %s: parent %q not listed before it", id, parentOf[id])
			}
		}
		if end := sh.SequenceNumberRange.EndingSequenceNumber; end != nil {
			closed++
			if localddb.CompareSequenceNumbers(*end, aws.ToString(sh.SequenceNumberRange.StartingSequenceNumber)) < 0 {
				t.Fatalf("shard %s ends before it starts: %+v", id, sh.SequenceNumberRange)
			}
		}
	}
	if closed != shardCount*rollovers {
		t.Fatalf("%d closed shards, want %d", closed, shardCount*rollovers)
	}

	// Read every shard; a key is in one shard per generation, and its
	// shards form a parent-child chain.
	shardOfKey := map[string][]string{}
	total := 0
	for _, sh := range all {
		id := aws.ToString(sh.ShardId)
		recs, ended := se.shardRecords(t, arn, id)
		isClosed := sh.SequenceNumberRange.EndingSequenceNumber != nil
		if ended != isClosed {
			t.Fatalf("shard %s closed=%v but GetRecords ended=%v", id, isClosed, ended)
		}
		for _, r := range recs {
			key := r.Dynamodb.Keys["PK"].(*stypes.AttributeValueMemberS).Value
			if chain := shardOfKey[key]; len(chain) == 0 || chain[len(chain)-1] != id {
				shardOfKey[key] = append(chain, id)
			}
			total++
		}
	}
	if total != keys*(rollovers+1) {
		t.Fatalf("read %d records, want %d", total, keys*(rollovers+1))
	}
	used := map[string]bool{}
	for key, chain := range shardOfKey {
		if len(chain) != rollovers+1 {
			t.Fatalf("key %s in shards %v; want one per generation", key, chain)
		}
		for i := 1; i < len(chain); i++ {
			if parentOf[chain[i]] != chain[i-1] {
				t.Fatalf("key %s moved from %s to %s, which is not its child", key, chain[i-1], chain[i])
			}
		}
		used[chain[0]] = true
	}
	if len(used) < 2 {
		t.Fatalf("%d keys all went to one shard of %d", keys, shardCount)
	}
}
