package writertest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// The aggregates of the concurrent writers: all of them write events of
// hotKey; some transactions also write one of otherKey.
const (
	hotKey   = "ACCOUNT#1"
	otherKey = "ACCOUNT#2"
)

// concurrentWrites is what the writers of TestConcurrentWritersOfOneAggregate
// committed.
type concurrentWrites struct {
	mu        sync.Mutex
	sequences map[string]map[string]int64 // ordering key -> event id -> sequence
	unordered map[string]bool             // event ids
	committed int64
	conflicts int64
}

func (c *concurrentWrites) record(records []outbox.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.committed++
	for _, r := range records {
		if r.OrderingKey == "" {
			c.unordered[r.EventID] = true
			continue
		}
		if c.sequences[r.OrderingKey] == nil {
			c.sequences[r.OrderingKey] = map[string]int64{}
		}
		c.sequences[r.OrderingKey][r.EventID] = r.Sequence
	}
}

// balanceKey is the key of the account's balance, the data each
// transaction writes with its events.
func balanceKey(table outbox.Table) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		table.PartitionKey: &types.AttributeValueMemberS{Value: hotKey},
		table.SortKey:      &types.AttributeValueMemberS{Value: "BALANCE"},
	}
}

// transaction returns the caller's item and the events of the attempt-th
// transaction: the account's balance grows by one, with three events of
// hotKey, or one of hotKey and an unordered one, or one of hotKey and one of
// otherKey.
func transaction(table outbox.Table, attempt int64) ([]types.TransactWriteItem, []outbox.Event) {
	balance := types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(table.Name),
		Key:                       balanceKey(table),
		UpdateExpression:          aws.String("ADD #balance :one"),
		ExpressionAttributeNames:  map[string]string{"#balance": "balance"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
	}}
	event := func(key string) outbox.Event {
		e := orderPlaced()
		e.PartitionKey, e.OrderingKey = hotKey, key
		return e
	}
	switch attempt % 3 {
	case 0:
		return []types.TransactWriteItem{balance}, []outbox.Event{event(hotKey), event(hotKey), event(hotKey)}
	case 1:
		return []types.TransactWriteItem{balance}, []outbox.Event{event(hotKey), event("")}
	default:
		return []types.TransactWriteItem{balance}, []outbox.Event{event(otherKey), event(hotKey)}
	}
}

// TestConcurrentWritersOfOneAggregate: writers of one aggregate send 10,000
// transactions in all, each retried on a sequence conflict. Every committed
// event of a key holds the number its write returned, and the numbers of a
// key are exactly 1..N (N its events in committed transactions): none is
// used twice, none is skipped, and no event of a cancelled transaction is
// stored. The data written with the events (a balance) counts exactly the
// committed transactions.
func TestConcurrentWritersOfOneAggregate(t *testing.T) {
	t.Parallel()
	const writers, transactions = 8, 10_000
	_, client := startDynamoDB(t, func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} })
	table := outbox.Table{Name: "accounts", Layout: outbox.LayoutShared, PendingShards: 4}.WithDefaults()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	createTable(ctx, t, client, table.CreateTableInput())
	w, err := outbox.NewWriter(client, table)
	if err != nil {
		t.Fatal(err)
	}

	started := time.Now()
	writes := &concurrentWrites{sequences: map[string]map[string]int64{}, unordered: map[string]bool{}}
	var sent atomic.Int64
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for attempt := sent.Add(1) - 1; attempt < transactions; attempt = sent.Add(1) - 1 {
				items, events := transaction(table, attempt)
				records, err := w.Write(ctx, items, events...)
				switch {
				case errors.Is(err, outbox.ErrSequenceConflict):
					atomic.AddInt64(&writes.conflicts, 1)
				case err != nil:
					errs <- err
					return
				default:
					writes.record(records)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d writers sent %d transactions in %v: %d committed, %d cancelled by a sequence conflict",
		writers, transactions, time.Since(started).Round(time.Millisecond), writes.committed, writes.conflicts)
	if writes.committed+writes.conflicts != transactions {
		t.Errorf("%d committed and %d conflicts, want %d transactions", writes.committed, writes.conflicts, transactions)
	}
	if writes.conflicts == 0 || writes.committed == 0 {
		t.Errorf("%d conflicts and %d commits: the writers did not compete", writes.conflicts, writes.committed)
	}
	stored := storedEvents(ctx, t, client, table)
	checkSequences(ctx, t, w, writes, stored)
	if got := balance(ctx, t, client, table); got != strconv.FormatInt(writes.committed, 10) {
		t.Errorf("balance %s, want %d: the data and the events were not written together", got, writes.committed)
	}
}

// storedEvents reads every outbox item of the aggregate's partition.
func storedEvents(ctx context.Context, t *testing.T, client *dynamodb.Client, table outbox.Table) []outbox.Record {
	t.Helper()
	p := dynamodb.NewQueryPaginator(client, &dynamodb.QueryInput{
		TableName:              aws.String(table.Name),
		ConsistentRead:         aws.Bool(true),
		KeyConditionExpression: aws.String("#pk = :pk AND begins_with(#sk, :prefix)"),
		ExpressionAttributeNames: map[string]string{
			"#pk": table.PartitionKey, "#sk": table.SortKey,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk":     &types.AttributeValueMemberS{Value: hotKey},
			":prefix": &types.AttributeValueMemberS{Value: table.SortKeyPrefix},
		},
	})
	var records []outbox.Record
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range page.Items {
			r, err := table.ParseItem(item)
			if err != nil {
				t.Fatalf("stored item breaks the contract: %v", err)
			}
			records = append(records, r)
		}
	}
	return records
}

// checkSequences checks the stored events against the committed writes:
// the same events with the same numbers, 1..N per key, and each key's
// sequence item at N.
func checkSequences(ctx context.Context, t *testing.T, w *outbox.Writer, writes *concurrentWrites, stored []outbox.Record) {
	t.Helper()
	perKey := map[string][]int64{}
	unordered := 0
	for _, r := range stored {
		if r.OrderingKey == "" {
			if !writes.unordered[r.EventID] {
				t.Errorf("unordered event %s was not committed", r.EventID)
			}
			unordered++
			continue
		}
		want, ok := writes.sequences[r.OrderingKey][r.EventID]
		if !ok || want != r.Sequence {
			t.Errorf("event %s of %s holds sequence %d; its write returned %d (committed: %v)", r.EventID, r.OrderingKey, r.Sequence, want, ok)
		}
		perKey[r.OrderingKey] = append(perKey[r.OrderingKey], r.Sequence)
	}
	if unordered != len(writes.unordered) {
		t.Errorf("%d unordered events stored, %d committed", unordered, len(writes.unordered))
	}
	for _, key := range []string{hotKey, otherKey} {
		n := int64(len(writes.sequences[key]))
		got := perKey[key]
		slices.Sort(got)
		for i, seq := range got {
			if seq != int64(i+1) {
				t.Fatalf("%s: the %d-th smallest sequence is %d: numbers reused or skipped (%d events, %d committed)", key, i+1, seq, len(got), n)
			}
		}
		if int64(len(got)) != n {
			t.Errorf("%s: %d events stored, %d committed", key, len(got), n)
		}
		last, err := w.LastSequences(ctx, key)
		if err != nil || last[key] != n {
			t.Errorf("%s: the sequence item holds %d (%v), want %d", key, last[key], err, n)
		}
		t.Logf("%s: sequences 1..%d", key, n)
	}
}

func balance(ctx context.Context, t *testing.T, client *dynamodb.Client, table outbox.Table) string {
	t.Helper()
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(table.Name), ConsistentRead: aws.Bool(true),
		Key: balanceKey(table),
	})
	if err != nil {
		t.Fatal(err)
	}
	n, ok := out.Item["balance"].(*types.AttributeValueMemberN)
	if !ok {
		return fmt.Sprintf("%v", out.Item["balance"])
	}
	return n.Value
}

// TestSequenceItemIsNoOutboxItem: the sequence item an ordered write leaves
// is found neither in the pending index nor by the scan of a table without
// it, so no relay or reconciler takes it for an event.
func TestSequenceItemIsNoOutboxItem(t *testing.T) {
	t.Parallel()
	_, client := startDynamoDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, table := range []outbox.Table{
		{Name: "indexed", PendingShards: 1},
		{Name: "scanned", NoPendingIndex: true},
	} {
		table = table.WithDefaults()
		createTable(ctx, t, client, table.CreateTableInput())
		e := orderPlaced()
		e.OrderingKey = hotKey
		records, err := newWriter(t, client, table).Write(ctx, nil, e)
		if err != nil {
			t.Fatal(err)
		}
		var found []map[string]types.AttributeValue
		if table.NoPendingIndex {
			out, err := client.Scan(ctx, table.PendingScan(0, 1, fixedNow.Add(time.Hour), fixedNow.Add(time.Hour)))
			if err != nil {
				t.Fatal(err)
			}
			found = out.Items
		} else {
			out, err := client.Query(ctx, table.PendingQuery(0, fixedNow.Add(time.Hour)))
			if err != nil {
				t.Fatal(err)
			}
			found = out.Items
		}
		if len(found) != 1 {
			t.Fatalf("%s: the pending items are %v, want the event only", table.Name, found)
		}
		if r, err := table.ParseItem(found[0]); err != nil || r.EventID != records[0].EventID || r.Sequence != 1 {
			t.Errorf("%s: pending item %+v (%v), want event %s with sequence 1", table.Name, r, err, records[0].EventID)
		}
		seq, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table.Name), Key: table.SequenceKey(hotKey), ConsistentRead: aws.Bool(true)})
		if err != nil || seq.Item == nil || table.IsOutboxSortKey(table.SequenceKey(hotKey)[table.SortKey].(*types.AttributeValueMemberS).Value) {
			t.Errorf("%s: sequence item %v (%v)", table.Name, seq, err)
		}
	}
}
