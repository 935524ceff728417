// Package store is the relay's access to the outbox table. It reads the
// current items of a batch (one consistent BatchGetItem per 100 keys), holds
// items before publishing them (and releases them when publishing fails),
// records what became of published events (it
// marks items PUBLISHED or FAILED with the conditional updates of package
// outbox, or deletes them with BatchWriteItem) and gives the pending index
// keys to items that lack them. Every request of a batch runs in parallel,
// and throttled requests are retried within the deadline.
package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

const (
	// MaxBatchWrite is the number of requests one BatchWriteItem accepts.
	MaxBatchWrite = 25
	// DefaultConcurrency is the number of writes in flight at once: enough
	// for a batch of 100 records to be marked in one round trip.
	DefaultConcurrency = 128
	// maxReasonBytes bounds the lastError stored on a FAILED item.
	maxReasonBytes = 1024
)

// Defaults of a HoldPolicy.
const (
	DefaultHoldBase = time.Minute
	DefaultHoldMax  = 15 * time.Minute
)

// HoldPolicy says how long a relay holds an item it takes to publish
// (outbox.Table.Hold): long enough to publish and mark it, and, as the item
// keeps failing, longer: the hold is the item's backoff. A first hold ends
// with the holder's invocation (UntilWithin). The zero value means the
// defaults.
type HoldPolicy struct {
	// Base is the hold of an item's first attempt; it doubles with every
	// attempt recorded on the item.
	Base time.Duration
	// Max caps a hold.
	Max time.Duration
}

// Until returns the end of the hold of an item with attempts recorded
// attempts, taken at now: Base doubled per attempt, at most Max.
func (p HoldPolicy) Until(now time.Time, attempts int) time.Time {
	base, ceiling := p.Base, p.Max
	if base <= 0 {
		base = DefaultHoldBase
	}
	if ceiling <= 0 {
		ceiling = DefaultHoldMax
	}
	d := ceiling
	if attempts < 32 {
		if b := base << max(attempts, 0); b > 0 && b < ceiling {
			d = b
		}
	}
	return now.Add(d)
}

// UntilWithin is Until for a hold of r taken by an invocation that ends at
// ctx's deadline. A first hold (no attempt recorded) ends then at the
// latest, as after it the holder can publish nothing, so that the hold of a
// holder that died does not keep the event's next try waiting past it. So
// does every hold of an ordered event (one with a sequence): its backoff
// would be its whole key's, every later event of the key waiting behind it
// for up to Max, while retrying it at once costs at most one more publish:
// an event its key's cursor has passed is settled unpublished, and one
// published again is deduplicated by a FIFO target within five minutes and
// dropped by the consumer kit by its id. Later holds of an unordered event,
// the backoff of an event published but not marked, are Until's.
func (p HoldPolicy) UntilWithin(ctx context.Context, now time.Time, r outbox.Record) time.Time {
	until := p.Until(now, r.Attempts)
	if r.Attempts <= 0 || r.Sequence > 0 {
		return retry.ByDeadline(ctx, until)
	}
	return until
}

// Within returns UntilWithin for the holds an invocation takes at now.
func (p HoldPolicy) Within(ctx context.Context, now time.Time) func(outbox.Record) time.Time {
	return func(r outbox.Record) time.Time { return p.UntilWithin(ctx, now, r) }
}

// DynamoDBAPI is the part of the DynamoDB client the store uses.
type DynamoDBAPI interface {
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

// Store writes the outcome of publishing to the outbox table.
type Store struct {
	Client DynamoDBAPI
	Table  outbox.Table
	// TTL is how long marked items are kept; 0 sets no expiry.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Retry bounds the retries of throttled writes.
	Retry retry.Policy
	// Concurrency bounds the writes in flight; 0 means DefaultConcurrency.
	Concurrency int
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// MarkPublished marks each record PUBLISHED with one conditional UpdateItem,
// all in parallel. It returns one error per record, nil when the item is
// marked or no longer pending (already published by another invocation, or
// deleted).
func (s *Store) MarkPublished(ctx context.Context, records []outbox.Record) []error {
	now := s.now()
	return s.update(ctx, len(records), func(i int) *dynamodb.UpdateItemInput {
		return s.Table.MarkPublished(records[i], now, s.TTL)
	})
}

// MarkFailed marks each record FAILED with its reason, in parallel: any item
// not yet PUBLISHED or FAILED, including malformed ones with no or an
// invalid status. Like MarkPublished it treats an item already settled, or
// gone, as done.
func (s *Store) MarkFailed(ctx context.Context, records []outbox.Record, reasons []string) []error {
	now := s.now()
	return s.update(ctx, len(records), func(i int) *dynamodb.UpdateItemInput {
		return s.Table.MarkFailed(records[i], truncate(reasons[i], maxReasonBytes), now)
	})
}

// Release gives back each record's hold (outbox.Table.Release), taken by
// this invocation until the record's NextAttemptAt, when publishing the
// event failed: the hold ends and the attempt is not counted. An item no
// longer under that hold is left as it is. It returns one error per record.
func (s *Store) Release(ctx context.Context, records []outbox.Record) []error {
	return s.update(ctx, len(records), func(i int) *dynamodb.UpdateItemInput {
		return s.Table.Release(records[i], time.UnixMilli(records[i].NextAttemptAt))
	})
}

// AddPendingKeys gives each record's item the pending index keys, if it is
// still pending and lacks them, in parallel. It returns one error per record.
func (s *Store) AddPendingKeys(ctx context.Context, records []outbox.Record) []error {
	return s.update(ctx, len(records), func(i int) *dynamodb.UpdateItemInput {
		return s.Table.AddPendingKeys(records[i])
	})
}

func (s *Store) update(ctx context.Context, n int, build func(i int) *dynamodb.UpdateItemInput) []error {
	errs := make([]error, n)
	s.parallel(n, func(i int) {
		_, err := s.updateOne(ctx, build(i))
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			errs[i] = err
		}
	})
	return errs
}

// updateOne makes one UpdateItem, retrying transient errors. A failed
// condition is returned as is, unwrapped.
func (s *Store) updateOne(ctx context.Context, in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
	for attempt := 1; ; attempt++ {
		out, err := s.Client.UpdateItem(ctx, in)
		var ccf *types.ConditionalCheckFailedException
		if err == nil || errors.As(err, &ccf) {
			return out, err
		}
		err = fmt.Errorf("updating outbox item %s in %s: %w", s.describeKey(in.Key), s.Table.Name, err)
		if !retry.IsTransient(err) || !s.Retry.Backoff(ctx, attempt) {
			return nil, err
		}
	}
}

// Held is the result of holding one item.
type Held struct {
	// Item is the item as held, to publish from; nil when it was not held.
	Item map[string]types.AttributeValue
	// Current is, when the hold's condition failed, the item as it is (no
	// longer pending, or held by another invocation); nil when it is gone.
	Current map[string]types.AttributeValue
	// Err is what kept the item from being held, other than the condition.
	Err error
}

// Hold takes each record's item before publishing it (outbox.Table.Hold),
// in parallel, holding it until the time until returns for it. It returns
// one Held per record.
func (s *Store) Hold(ctx context.Context, records []outbox.Record, until func(outbox.Record) time.Time) []Held {
	now := s.now()
	out := make([]Held, len(records))
	s.parallel(len(records), func(i int) {
		res, err := s.updateOne(ctx, s.Table.Hold(records[i], now, until(records[i])))
		var ccf *types.ConditionalCheckFailedException
		switch {
		case errors.As(err, &ccf):
			out[i].Current = ccf.Item
		case err != nil:
			out[i].Err = err
		default:
			out[i].Item = res.Attributes
		}
	})
	return out
}

// Delete deletes the records' items with BatchWriteItem, 25 per call, calls
// in parallel, retrying unprocessed items. It returns one error per record.
func (s *Store) Delete(ctx context.Context, records []outbox.Record) []error {
	errs := make([]error, len(records))
	// Group records by key: one request per item, as BatchWriteItem rejects
	// duplicate keys in a call.
	byKey := make(map[string][]int, len(records))
	var keys []string
	for i, r := range records {
		k := itemKey(r.PartitionKey, r.SortKey)
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], i)
	}
	var chunks [][]string
	for start := 0; start < len(keys); start += MaxBatchWrite {
		chunks = append(chunks, keys[start:min(start+MaxBatchWrite, len(keys))])
	}
	var mu sync.Mutex
	s.parallel(len(chunks), func(c int) {
		failed := s.deleteChunk(ctx, chunks[c], records, byKey)
		mu.Lock()
		defer mu.Unlock()
		for k, err := range failed {
			for _, i := range byKey[k] {
				errs[i] = err
			}
		}
	})
	return errs
}

// deleteChunk deletes the items with the given keys and returns the error of
// each key that could not be deleted.
func (s *Store) deleteChunk(ctx context.Context, keys []string, records []outbox.Record, byKey map[string][]int) map[string]error {
	pending := make([]types.WriteRequest, len(keys))
	for k, key := range keys {
		pending[k] = s.Table.Delete(records[byKey[key][0]])
	}
	for attempt := 1; ; attempt++ {
		out, err := s.Client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
			RequestItems: map[string][]types.WriteRequest{s.Table.Name: pending},
		})
		var cause error
		switch {
		case err != nil:
			cause = fmt.Errorf("deleting %d outbox items from %s: %w", len(pending), s.Table.Name, err)
			if !retry.IsTransient(err) {
				return failAll(pending, s.Table, cause)
			}
		case len(out.UnprocessedItems[s.Table.Name]) == 0:
			return nil
		default:
			pending = out.UnprocessedItems[s.Table.Name]
			cause = fmt.Errorf("deleting outbox items from %s: still unprocessed after %d attempts", s.Table.Name, attempt)
		}
		if !s.Retry.Backoff(ctx, attempt) {
			return failAll(pending, s.Table, cause)
		}
	}
}

func failAll(requests []types.WriteRequest, t outbox.Table, err error) map[string]error {
	failed := make(map[string]error, len(requests))
	for _, wr := range requests {
		if wr.DeleteRequest == nil {
			continue
		}
		pk, _ := wr.DeleteRequest.Key[t.PartitionKey].(*types.AttributeValueMemberS)
		sk, _ := wr.DeleteRequest.Key[t.SortKey].(*types.AttributeValueMemberS)
		if pk == nil || sk == nil {
			continue
		}
		failed[itemKey(pk.Value, sk.Value)] = err
	}
	return failed
}

// parallel calls f(0..n-1), at most Concurrency at a time, and waits.
func (s *Store) parallel(n int, f func(i int)) {
	limit := s.Concurrency
	if limit <= 0 {
		limit = DefaultConcurrency
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}

func itemKey(pk, sk string) string { return pk + "\x00" + sk }

// describeKey formats an item key for errors: "(PK=..., SK=...)".
func (s *Store) describeKey(key map[string]types.AttributeValue) string {
	str := func(name string) string {
		if v, ok := key[name].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return "?"
	}
	return fmt.Sprintf("(%s=%s, %s=%s)", s.Table.PartitionKey, str(s.Table.PartitionKey), s.Table.SortKey, str(s.Table.SortKey))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// Current reads the current items of records with strongly consistent
// BatchGetItem calls of up to 100 keys, all in parallel, retrying
// unprocessed keys. It returns, per record, the item, or nil when it is
// gone; or the error that kept it from being read.
func (s *Store) Current(ctx context.Context, records []outbox.Record) ([]map[string]types.AttributeValue, []error) {
	items := make([]map[string]types.AttributeValue, len(records))
	errs := make([]error, len(records))
	byKey := make(map[string][]int, len(records))
	var unique []outbox.Record
	for i, r := range records {
		k := itemKey(r.PartitionKey, r.SortKey)
		if _, ok := byKey[k]; !ok {
			unique = append(unique, r)
		}
		byKey[k] = append(byKey[k], i)
	}
	var chunks [][]outbox.Record
	for start := 0; start < len(unique); start += outbox.MaxBatchGet {
		chunks = append(chunks, unique[start:min(start+outbox.MaxBatchGet, len(unique))])
	}
	var mu sync.Mutex
	s.parallel(len(chunks), func(c int) {
		found, err := s.readChunk(ctx, chunks[c])
		mu.Lock()
		defer mu.Unlock()
		for _, r := range chunks[c] {
			k := itemKey(r.PartitionKey, r.SortKey)
			for _, i := range byKey[k] {
				if err != nil && !found.done[k] {
					errs[i] = err
					continue
				}
				items[i] = found.items[k]
			}
		}
	})
	return items, errs
}

type readResult struct {
	items map[string]map[string]types.AttributeValue
	done  map[string]bool // keys whose read completed, found or not
}

// readChunk reads up to 100 items. On error, the keys read so far are done.
func (s *Store) readChunk(ctx context.Context, records []outbox.Record) (readResult, error) {
	res := readResult{items: map[string]map[string]types.AttributeValue{}, done: map[string]bool{}}
	in := s.Table.CurrentItems(records)
	pending := in.RequestItems[s.Table.Name].Keys
	for attempt := 1; ; attempt++ {
		out, err := s.Client.BatchGetItem(ctx, in)
		var cause error
		if err != nil {
			cause = fmt.Errorf("reading %d outbox items from %s: %w", len(pending), s.Table.Name, err)
			if !retry.IsTransient(err) {
				return res, cause
			}
		} else {
			for _, item := range out.Responses[s.Table.Name] {
				res.items[s.keyOf(item)] = item
			}
			left := out.UnprocessedKeys[s.Table.Name].Keys
			unprocessed := map[string]bool{}
			for _, k := range left {
				unprocessed[s.keyOf(k)] = true
			}
			for _, k := range pending {
				if key := s.keyOf(k); !unprocessed[key] {
					res.done[key] = true
				}
			}
			if len(left) == 0 {
				return res, nil
			}
			pending = left
			in = s.Table.CurrentItems(nil)
			in.RequestItems[s.Table.Name] = types.KeysAndAttributes{Keys: left, ConsistentRead: in.RequestItems[s.Table.Name].ConsistentRead}
			cause = fmt.Errorf("reading outbox items from %s: %d keys still unprocessed after %d attempts", s.Table.Name, len(left), attempt)
		}
		if !s.Retry.Backoff(ctx, attempt) {
			return res, cause
		}
	}
}

func (s *Store) keyOf(item map[string]types.AttributeValue) string {
	pk, _ := item[s.Table.PartitionKey].(*types.AttributeValueMemberS)
	sk, _ := item[s.Table.SortKey].(*types.AttributeValueMemberS)
	if pk == nil || sk == nil {
		return ""
	}
	return itemKey(pk.Value, sk.Value)
}
