package relaytest

import (
	"context"
	"fmt"
	"hash/fnv"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddb "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	localddb "github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// setupTimeout bounds the start of the engine and the creation of the table.
const setupTimeout = 30 * time.Second

// New returns a fake serving table (defaults applied). Its DynamoDB is a
// local AWS stack of its own, with only the DynamoDB service, in which the
// table and its pending index are created; the stack stops when tb's test
// ends. opts apply to the fake's client of that engine, after its own (a
// benchmark's perfreport.CapacityCounter counts the write units of every
// call through the fake, the fake's own writes of PutRecords included).
func New(tb testing.TB, table outbox.Table, opts ...func(*dynamodb.Options)) *AWS {
	tb.Helper()
	table = table.WithDefaults()
	stack := localawstest.Start(tb, func(o *localaws.Options) { o.NoServices = true })
	// TTL is not enabled on the table; no sweeping is needed.
	if err := stack.Register(localddb.New(stack.Env(), localddb.Options{TTLSweepInterval: -1})); err != nil {
		tb.Fatalf("relaytest: registering DynamoDB: %v", err)
	}
	// A batch is written with ~100 calls in parallel: keep their
	// connections, and close them before the stack stops (cleanups run last
	// in, first out), which otherwise waits for connections never used.
	transport := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}
	tb.Cleanup(transport.CloseIdleConnections)
	db := dynamodb.NewFromConfig(localawstest.Config(stack), func(o *dynamodb.Options) {
		o.HTTPClient = &http.Client{Transport: transport}
		// Every call reaches the engine once: the code under test retries.
		o.Retryer = aws.NopRetryer{}
	}, func(o *dynamodb.Options) {
		for _, opt := range opts {
			opt(o)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if err := createTable(ctx, db, table); err != nil {
		tb.Fatalf("relaytest: %v", err)
	}
	return &AWS{Table: table, tb: tb, db: db}
}

// createTable creates the outbox table with its pending index and waits
// until it is active.
func createTable(ctx context.Context, db *dynamodb.Client, t outbox.Table) error {
	_, err := db.CreateTable(ctx, t.CreateTableInput())
	if err != nil {
		return fmt.Errorf("creating table %s: %w", t.Name, err)
	}
	w := dynamodb.NewTableExistsWaiter(db, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 10*time.Millisecond, 100*time.Millisecond
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(t.Name)}, setupTimeout); err != nil {
		return fmt.Errorf("waiting for table %s: %w", t.Name, err)
	}
	return nil
}

// UpdateItem is the engine's, after WriteError.
func (f *AWS) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return serveWrite(ctx, f, OpUpdateItem, in.Key, func() (*dynamodb.UpdateItemOutput, error) { return f.db.UpdateItem(ctx, in, opts...) })
}

// DeleteItem is the engine's, after WriteError (used by the naive relay).
func (f *AWS) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return serveWrite(ctx, f, OpDeleteItem, in.Key, func() (*dynamodb.DeleteItemOutput, error) { return f.db.DeleteItem(ctx, in, opts...) })
}

// GetItem is the engine's (the reconciler's heartbeat and takeover items).
func (f *AWS) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return serve(ctx, f, OpGetItem, func() (*dynamodb.GetItemOutput, error) { return f.db.GetItem(ctx, in, opts...) })
}

// PutItem is the engine's, after WriteError (the reconciler's heartbeat and
// takeover items).
func (f *AWS) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return serveWrite(ctx, f, OpPutItem, in.Item, func() (*dynamodb.PutItemOutput, error) { return f.db.PutItem(ctx, in, opts...) })
}

// serve runs do as the call op: counted, timed, delayed and failed as
// begin says before do runs.
func serve[O any](ctx context.Context, f *AWS, op string, do func() (*O, error)) (*O, error) {
	done, err := f.begin(ctx, op)
	defer done()
	if err != nil {
		return nil, err
	}
	return do()
}

// serveWrite is serve for a write of the item with key, which WriteError
// may fail first.
func serveWrite[O any](ctx context.Context, f *AWS, op string, key map[string]ddb.AttributeValue, do func() (*O, error)) (*O, error) {
	return serve(ctx, f, op, func() (*O, error) {
		if err := f.writeError(key); err != nil {
			return nil, err
		}
		return do()
	})
}

// writeError consults WriteError for the item with the given key.
func (f *AWS) writeError(key map[string]ddb.AttributeValue) error {
	if f.WriteError == nil {
		return nil
	}
	sk := str(key[f.Table.SortKey])
	f.mu.Lock()
	n := f.attempt("write:" + sk)
	f.mu.Unlock()
	return f.WriteError(sk, n)
}

// BatchWriteItem is the engine's, except that the requests Unprocessed
// selects are set aside and returned as unprocessed.
func (f *AWS) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	done, err := f.begin(ctx, OpBatchWriteItem)
	defer done()
	if err != nil {
		return nil, err
	}
	if f.Unprocessed == nil {
		return f.db.BatchWriteItem(ctx, in, opts...)
	}
	n := 0
	kept := map[string][]ddb.WriteRequest{}
	aside := map[string][]ddb.WriteRequest{}
	f.mu.Lock()
	for table, reqs := range in.RequestItems {
		for _, wr := range reqs {
			n++
			sk := f.sortKey(wr)
			if f.Unprocessed(sk, f.attempt("batch:"+sk)) {
				aside[table] = append(aside[table], wr)
			} else {
				kept[table] = append(kept[table], wr)
			}
		}
	}
	f.mu.Unlock()
	if len(aside) == 0 {
		return f.db.BatchWriteItem(ctx, in, opts...)
	}
	// The engine sees only the kept requests; the limit is on the call.
	if n > 25 {
		return nil, apiError("ValidationException", fmt.Sprintf("%d write requests; 1 to 25 allowed", n))
	}
	out := &dynamodb.BatchWriteItemOutput{}
	if len(kept) > 0 {
		req := *in
		req.RequestItems = kept
		if out, err = f.db.BatchWriteItem(ctx, &req, opts...); err != nil {
			return nil, err
		}
	}
	if out.UnprocessedItems == nil {
		out.UnprocessedItems = map[string][]ddb.WriteRequest{}
	}
	for table, reqs := range aside {
		out.UnprocessedItems[table] = append(out.UnprocessedItems[table], reqs...)
	}
	return out, nil
}

func (f *AWS) sortKey(wr ddb.WriteRequest) string {
	switch {
	case wr.DeleteRequest != nil:
		return str(wr.DeleteRequest.Key[f.Table.SortKey])
	case wr.PutRequest != nil:
		return str(wr.PutRequest.Item[f.Table.SortKey])
	}
	return ""
}

// Query is the engine's. Its consumed read units are counted.
func (f *AWS) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return serve(ctx, f, OpQuery, func() (*dynamodb.QueryOutput, error) {
		req := *in
		req.ReturnConsumedCapacity = ddb.ReturnConsumedCapacityTotal
		out, err := f.db.Query(ctx, &req, opts...)
		if err == nil {
			f.addReadUnits(out.ConsumedCapacity)
		}
		return out, err
	})
}

// Scan is the engine's, with parallel scans served here: the local stack
// ignores Segment and TotalSegments and returns every item to every
// segment, so the fake keeps, of each page, the items whose partition key
// hashes to the segment. Its consumed read units are counted once per page
// of the engine, as DynamoDB counts them.
func (f *AWS) Scan(ctx context.Context, in *dynamodb.ScanInput, opts ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	done, err := f.begin(ctx, OpScan)
	defer done()
	if err != nil {
		return nil, err
	}
	req := *in
	req.Segment, req.TotalSegments = nil, nil
	req.ReturnConsumedCapacity = ddb.ReturnConsumedCapacityTotal
	out, err := f.db.Scan(ctx, &req, opts...)
	if err != nil {
		return nil, err
	}
	f.addReadUnits(out.ConsumedCapacity)
	if total := aws.ToInt32(in.TotalSegments); total > 1 {
		seg := aws.ToInt32(in.Segment)
		kept := out.Items[:0]
		for _, item := range out.Items {
			if int32(segmentOf(str(item[f.Table.PartitionKey]), total)) == seg {
				kept = append(kept, item)
			}
		}
		out.Items, out.Count = kept, int32(len(kept))
	}
	return out, nil
}

// segmentOf is the parallel Scan segment of a partition key value.
func segmentOf(pk string, total int32) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(pk))
	return h.Sum32() % uint32(total)
}

// DescribeTable is the engine's.
func (f *AWS) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	return serve(ctx, f, OpDescribeTable, func() (*dynamodb.DescribeTableOutput, error) { return f.db.DescribeTable(ctx, in, opts...) })
}

// BatchGetItem is the engine's, after ReadError. Its read units are counted
// as DynamoDB counts them: each key as its own read, a strongly consistent
// one costing one unit per started 4 KB of the item, and one unit for an
// item that does not exist. (The local stack rounds the batch's total size
// instead.)
func (f *AWS) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	done, err := f.begin(ctx, OpBatchGetItem)
	defer done()
	if err != nil {
		return nil, err
	}
	if f.ReadError != nil {
		for _, ka := range in.RequestItems {
			for _, k := range ka.Keys {
				if err := f.ReadError(str(k[f.Table.SortKey])); err != nil {
					return nil, err
				}
			}
		}
	}
	in, aside := f.setAsideReads(in)
	out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]ddb.AttributeValue{}}
	if len(in.RequestItems) > 0 {
		if out, err = f.db.BatchGetItem(ctx, in, opts...); err != nil {
			return nil, err
		}
	}
	if len(aside) > 0 {
		out.UnprocessedKeys = aside
	}
	units := 0.0
	for table, ka := range in.RequestItems {
		sizes := map[string]int{}
		for _, item := range out.Responses[table] {
			sizes[str(item[f.Table.PartitionKey])+"\x00"+str(item[f.Table.SortKey])] = ItemSize(item)
		}
		per := 0.5
		if aws.ToBool(ka.ConsistentRead) {
			per = 1
		}
		for _, k := range ka.Keys {
			size := sizes[str(k[f.Table.PartitionKey])+"\x00"+str(k[f.Table.SortKey])]
			units += per * float64(max(1, (size+4095)/4096))
		}
	}
	f.mu.Lock()
	f.readUnits += units
	f.mu.Unlock()
	return out, nil
}

// setAsideReads removes from in the keys UnprocessedRead selects and
// returns them as unprocessed keys.
func (f *AWS) setAsideReads(in *dynamodb.BatchGetItemInput) (*dynamodb.BatchGetItemInput, map[string]ddb.KeysAndAttributes) {
	if f.UnprocessedRead == nil {
		return in, nil
	}
	kept := *in
	kept.RequestItems = map[string]ddb.KeysAndAttributes{}
	aside := map[string]ddb.KeysAndAttributes{}
	f.mu.Lock()
	defer f.mu.Unlock()
	for table, ka := range in.RequestItems {
		k, a := ka, ka
		k.Keys, a.Keys = nil, nil
		for _, key := range ka.Keys {
			sk := str(key[f.Table.SortKey])
			if f.UnprocessedRead(sk, f.attempt("read:"+sk)) {
				a.Keys = append(a.Keys, key)
			} else {
				k.Keys = append(k.Keys, key)
			}
		}
		if len(k.Keys) > 0 {
			kept.RequestItems[table] = k
		}
		if len(a.Keys) > 0 {
			aside[table] = a
		}
	}
	return &kept, aside
}

func (f *AWS) addReadUnits(c *ddb.ConsumedCapacity) {
	if c == nil {
		return
	}
	f.mu.Lock()
	f.readUnits += aws.ToFloat64(c.CapacityUnits)
	f.mu.Unlock()
}

// ReadUnits returns the read capacity units consumed since the last
// ResetCounters.
func (f *AWS) ReadUnits() float64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.readUnits
}

// ItemSize is DynamoDB's size of an item: the lengths of its attribute names
// and values (strings, binaries and string sets by length, numbers about
// one byte per two digits plus one; others a byte or the sum of their
// elements, plus 3 per list or map).
func ItemSize(item map[string]ddb.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v ddb.AttributeValue) int {
	switch v := v.(type) {
	case *ddb.AttributeValueMemberS:
		return len(v.Value)
	case *ddb.AttributeValueMemberN:
		return (len(v.Value)+1)/2 + 1
	case *ddb.AttributeValueMemberB:
		return len(v.Value)
	case *ddb.AttributeValueMemberM:
		return 3 + ItemSize(v.Value)
	case *ddb.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *ddb.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	}
	return 1
}

// The helpers below read and write the engine directly: they are not
// counted, delayed or failed by the hooks. They fail the test on error, so
// call them from the test's goroutine. Unlike the calls under test, they
// retry as any SDK client does: a connection reset on a loaded machine is
// not what a test checks.

// Put stores an item.
func (f *AWS) Put(item map[string]ddb.AttributeValue) {
	f.tb.Helper()
	if _, err := f.db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(f.Table.Name), Item: item}, withRetries); err != nil {
		f.tb.Fatalf("relaytest: storing an item: %v", err)
	}
}

// PutRecord stores the item of a pending record.
func (f *AWS) PutRecord(r outbox.Record) {
	f.tb.Helper()
	f.Put(f.Table.Item(r))
}

// PutRecords stores the items of pending records, 25 per call.
func (f *AWS) PutRecords(records []outbox.Record) {
	f.tb.Helper()
	for start := 0; start < len(records); start += 25 {
		reqs := make([]ddb.WriteRequest, 0, 25)
		for _, r := range records[start:min(start+25, len(records))] {
			reqs = append(reqs, ddb.WriteRequest{PutRequest: &ddb.PutRequest{Item: f.Table.Item(r)}})
		}
		out, err := f.db.BatchWriteItem(context.Background(), &dynamodb.BatchWriteItemInput{
			RequestItems: map[string][]ddb.WriteRequest{f.Table.Name: reqs},
		}, withRetries)
		if err != nil {
			f.tb.Fatalf("relaytest: storing %d items: %v", len(reqs), err)
		}
		if n := len(out.UnprocessedItems[f.Table.Name]); n > 0 {
			f.tb.Fatalf("relaytest: storing %d items: %d unprocessed", len(reqs), n)
		}
	}
}

// Item returns the stored item with the given keys, or nil.
func (f *AWS) Item(pk, sk string) map[string]ddb.AttributeValue {
	f.tb.Helper()
	out, err := f.db.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(f.Table.Name),
		Key: map[string]ddb.AttributeValue{
			f.Table.PartitionKey: &ddb.AttributeValueMemberS{Value: pk},
			f.Table.SortKey:      &ddb.AttributeValueMemberS{Value: sk},
		},
		ConsistentRead: aws.Bool(true),
	}, withRetries)
	if err != nil {
		f.tb.Fatalf("relaytest: reading item (%s, %s): %v", pk, sk, err)
	}
	if len(out.Item) == 0 {
		return nil
	}
	return out.Item
}

// Status returns the status attribute of a record's item, or "" if the item
// is gone or has no string status.
func (f *AWS) Status(r outbox.Record) string {
	f.tb.Helper()
	return str(f.Item(r.PartitionKey, r.SortKey)[outbox.AttrStatus])
}

func str(v ddb.AttributeValue) string {
	if s, ok := v.(*ddb.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// withRetries gives a helper call the SDK's standard retries.
func withRetries(o *dynamodb.Options) { o.Retryer = retry.NewStandard() }
