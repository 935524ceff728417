package reconcile

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
)

// Sizing of the parallel Scan of a table without the pending index.
const (
	// ScanItemsPerSegment and ScanBytesPerSegment size the segments: one
	// per started 1,000 items or 64 MiB, whichever gives more, by the
	// table's DescribeTable figures (which DynamoDB refreshes about every six
	// hours).
	ScanItemsPerSegment = 1000
	ScanBytesPerSegment = 64 << 20
	// MaxScanSegments bounds the segments of one run.
	MaxScanSegments = 64
)

// neverHeld is a time after every hold's end: the queries' "not held at"
// for a sweep that reads held events too.
var neverHeld = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// page is one page of pending items.
type page struct {
	items     []map[string]types.AttributeValue
	last      map[string]types.AttributeValue
	readUnits float64
}

// source is where the reconciler finds pending items: one shard of the
// pending index, or one segment of a Scan.
type source struct {
	name string
	page func(ctx context.Context, limit int32, start map[string]types.AttributeValue) (page, error)
}

// sources returns the shards of the pending index to query, 0 to Shards-1,
// or, for a table without the index, the segments of a parallel Scan.
func (r *Reconciler) sources(ctx context.Context, cutoff, now time.Time) []source {
	if r.Ordered != nil {
		// Held events too: a held event is present, and a key's cursor is
		// never started past it (startCursors). No hold ends after this.
		now = neverHeld
	}
	if r.Table.NoPendingIndex {
		n := r.scanSegments(ctx)
		out := make([]source, n)
		for seg := range n {
			out[seg] = source{name: fmt.Sprintf("segment %d of %d", seg, n), page: func(ctx context.Context, limit int32, start map[string]types.AttributeValue) (page, error) {
				in := r.Table.PendingScan(seg, n, cutoff, now)
				in.Limit, in.ExclusiveStartKey = aws.Int32(limit), maps.Clone(start)
				in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
				out, err := retried(ctx, r, func() (*dynamodb.ScanOutput, error) { return r.Client.Scan(ctx, in) })
				if err != nil {
					return page{}, err
				}
				return page{items: out.Items, last: out.LastEvaluatedKey, readUnits: units(out.ConsumedCapacity)}, nil
			}}
		}
		return out
	}
	shards := max(r.Shards, r.Table.PendingShards)
	out := make([]source, shards)
	for shard := range shards {
		out[shard] = source{name: fmt.Sprintf("shard %d", shard), page: func(ctx context.Context, limit int32, start map[string]types.AttributeValue) (page, error) {
			in := r.Table.DuePendingQuery(shard, cutoff, now)
			in.Limit, in.ExclusiveStartKey = aws.Int32(limit), maps.Clone(start)
			in.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
			out, err := retried(ctx, r, func() (*dynamodb.QueryOutput, error) { return r.Client.Query(ctx, in) })
			if err != nil {
				return page{}, err
			}
			return page{items: out.Items, last: out.LastEvaluatedKey, readUnits: units(out.ConsumedCapacity)}, nil
		}}
	}
	return out
}

// scanSegments sizes the Scan to the table: ScanSegments of its item count
// and size, or 1 when DescribeTable fails.
func (r *Reconciler) scanSegments(ctx context.Context) int {
	out, err := retried(ctx, r, func() (*dynamodb.DescribeTableOutput, error) {
		return r.Client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(r.Table.Name)})
	})
	if err != nil || out.Table == nil {
		r.log().WarnContext(ctx, "describing the table failed; scanning it in one segment", "table", r.Table.Name, "error", err)
		return 1
	}
	return ScanSegments(aws.ToInt64(out.Table.ItemCount), aws.ToInt64(out.Table.TableSizeBytes))
}

// ScanSegments is the number of Scan segments for a table of the given item
// count and size: one per started ScanItemsPerSegment items or
// ScanBytesPerSegment bytes, whichever is more, from 1 to MaxScanSegments.
func ScanSegments(items, bytes int64) int {
	n := max(ceilDiv(items, ScanItemsPerSegment), ceilDiv(bytes, ScanBytesPerSegment), 1)
	return int(min(n, MaxScanSegments))
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

func units(c *types.ConsumedCapacity) float64 {
	if c == nil {
		return 0
	}
	return aws.ToFloat64(c.CapacityUnits)
}

// retried makes a read, retrying transient errors within r's policy.
func retried[T any](ctx context.Context, r *Reconciler, call func() (T, error)) (T, error) {
	for attempt := 1; ; attempt++ {
		out, err := call()
		if err == nil || !retry.IsTransient(err) || !r.Retry.Backoff(ctx, attempt) {
			return out, err
		}
	}
}
