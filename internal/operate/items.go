package operate

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Filter selects events.
type Filter struct {
	// Since and Until bound the time the filter applies to (when the event
	// failed for failed events, when it occurred for published ones); zero
	// means unbounded. Until is exclusive.
	Since, Until time.Time
	// Reason is a substring of the failure reason.
	Reason string
	// Source and DetailType match exactly.
	Source, DetailType string
	// IDs are event ids.
	IDs []string
	// Origins selects, on a multi-Region pipeline, the Regions whose
	// events are taken; by default, the Region the command runs against.
	Origins Origins
}

// condition is a DynamoDB filter expression under construction.
type condition struct {
	terms  []string
	names  map[string]string
	values map[string]types.AttributeValue
}

func newCondition() *condition {
	return &condition{names: map[string]string{}, values: map[string]types.AttributeValue{}}
}

// add appends "#name op :value" for a string value.
func (c *condition) add(attr, op, value string) {
	name, val := "#a"+strconv.Itoa(len(c.names)), ":v"+strconv.Itoa(len(c.values))
	c.names[name] = attr
	c.values[val] = &types.AttributeValueMemberS{Value: value}
	if op == "begins_with" {
		c.terms = append(c.terms, op+"("+name+", "+val+")")
		return
	}
	c.terms = append(c.terms, name+" "+op+" "+val)
}

// in appends "#name IN (:v...)".
func (c *condition) in(attr string, values []string) {
	name := "#a" + strconv.Itoa(len(c.names))
	c.names[name] = attr
	vals := make([]string, len(values))
	for i, v := range values {
		vals[i] = ":v" + strconv.Itoa(len(c.values))
		c.values[vals[i]] = &types.AttributeValueMemberS{Value: v}
	}
	c.terms = append(c.terms, name+" IN ("+strings.Join(vals, ", ")+")")
}

// statusCondition is the condition of events with the given status that f
// selects; timeAttr is the attribute Since and Until apply to.
func statusCondition(status outbox.Status, timeAttr string, f Filter) *condition {
	c := newCondition()
	// Items of a shared table that are not outbox items are told apart by
	// their sort key (isOutboxItem), which covers former prefixes too.
	c.add(outbox.AttrStatus, "=", string(status))
	if !f.Since.IsZero() {
		c.add(timeAttr, ">=", f.Since.UTC().Format(outbox.TimeFormat))
	}
	if !f.Until.IsZero() {
		c.add(timeAttr, "<", f.Until.UTC().Format(outbox.TimeFormat))
	}
	if f.Source != "" {
		c.add(outbox.AttrSource, "=", f.Source)
	}
	if f.DetailType != "" {
		c.add(outbox.AttrDetailType, "=", f.DetailType)
	}
	if len(f.IDs) > 0 {
		c.in(outbox.AttrEventID, f.IDs)
	}
	return c
}

// scan calls fn with every item of the table that matches c, page by page.
func (c *Clients) scan(ctx context.Context, t outbox.Table, cond *condition, fn func(map[string]types.AttributeValue)) error {
	in := &dynamodb.ScanInput{
		TableName:                 aws.String(t.Name),
		FilterExpression:          aws.String(strings.Join(cond.terms, " AND ")),
		ExpressionAttributeNames:  cond.names,
		ExpressionAttributeValues: cond.values,
	}
	return c.scanAll(ctx, t, in, fn)
}

// scanAll calls fn with every item that the scan in of t returns, page by
// page.
func (c *Clients) scanAll(ctx context.Context, t outbox.Table, in *dynamodb.ScanInput, fn func(map[string]types.AttributeValue)) error {
	p := dynamodb.NewScanPaginator(c.DynamoDB, in)
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return call("dynamodb:Scan", "table "+t.Name, err)
		}
		for _, item := range out.Items {
			fn(item)
		}
	}
	return nil
}

// pendingSet is where the pending events of a pipeline are found: every
// shard of its pending index that may hold items (the relay's
// OUTBOX_RECONCILE_SHARDS, which covers shards left after lowering the
// count), or, without a pending index, its table.
type pendingSet struct {
	table  outbox.Table
	shards int
}

// pendingOf is the pending set of a table queried with its own shard count.
func pendingOf(t outbox.Table) pendingSet { return pendingSet{table: t, shards: t.PendingShards} }

// farFuture is the cutoff that covers every pending event, including those
// whose writers' clocks run ahead.
func farFuture(now time.Time) time.Time { return now.Add(24 * time.Hour) }

// eachPendingSince calls fn with the pending-since time (Unix ms) and the
// origin (outbox.AttrOrigin, "" when absent) of every pending event since
// before cutoff: from every shard of the pending index, or from a scan of
// a table without one (where an event is pending since it occurred).
func (c *Clients) eachPendingSince(ctx context.Context, ps pendingSet, cutoff time.Time, fn func(since int64, origin string)) error {
	t := ps.table
	if t.NoPendingIndex {
		return c.eachPendingScanned(ctx, t, cutoff, func(r outbox.Record) { fn(r.OccurredAt.UnixMilli(), r.Origin) })
	}
	for shard := range ps.shards {
		in := t.PendingQuery(shard, cutoff)
		in.ProjectionExpression = aws.String("#since, #origin")
		in.ExpressionAttributeNames["#origin"] = outbox.AttrOrigin
		if err := c.query(ctx, t, in, func(item map[string]types.AttributeValue) {
			if n, ok := item[outbox.AttrPendingSince].(*types.AttributeValueMemberN); ok {
				if v, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
					fn(v, originOf(item))
				}
			}
		}); err != nil {
			return err
		}
	}
	return nil
}

// eachPendingScanned calls fn with every pending item of a table without
// pending index that occurred at or before cutoff, held or not.
func (c *Clients) eachPendingScanned(ctx context.Context, t outbox.Table, cutoff time.Time, fn func(outbox.Record)) error {
	in := t.PendingScan(0, 1, cutoff, farFuture(cutoff))
	in.Segment, in.TotalSegments = nil, nil
	return c.scanAll(ctx, t, in, func(item map[string]types.AttributeValue) {
		if r, err := t.ParsePendingItem(item); err == nil {
			fn(r)
		}
	})
}

// pendingCount counts the events pending since before cutoff.
func (c *Clients) pendingCount(ctx context.Context, ps pendingSet, cutoff time.Time) (int, error) {
	t := ps.table
	if t.NoPendingIndex {
		total := 0
		err := c.eachPendingScanned(ctx, t, cutoff, func(outbox.Record) { total++ })
		return total, err
	}
	total := 0
	for shard := range ps.shards {
		in := t.PendingQuery(shard, cutoff)
		in.Select = types.SelectCount
		for {
			out, err := c.DynamoDB.Query(ctx, in)
			if err != nil {
				return 0, queryError(t, err)
			}
			total += int(out.Count)
			if len(out.LastEvaluatedKey) == 0 {
				break
			}
			in.ExclusiveStartKey = maps.Clone(out.LastEvaluatedKey)
		}
	}
	return total, nil
}

// pendingIn counts the events pending since before cutoff that are in
// scope, and by Region those left out. A single-Region pipeline's are
// counted without being read.
func (c *Clients) pendingIn(ctx context.Context, ps pendingSet, scope originScope, cutoff time.Time) (int, *OriginsOutput, error) {
	if !scope.multi() {
		n, err := c.pendingCount(ctx, ps, cutoff)
		return n, nil, err
	}
	n, tl := 0, newTally(scope)
	err := c.eachPendingSince(ctx, ps, cutoff, func(_ int64, origin string) {
		if tl.keep(origin) {
			n++
		}
	})
	return n, tl.output(), err
}

func (c *Clients) query(ctx context.Context, t outbox.Table, in *dynamodb.QueryInput, fn func(map[string]types.AttributeValue)) error {
	p := dynamodb.NewQueryPaginator(c.DynamoDB, in)
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return queryError(t, err)
		}
		for _, item := range out.Items {
			fn(item)
		}
	}
	return nil
}

func queryError(t outbox.Table, err error) error {
	return call("dynamodb:Query", "index "+t.PendingIndexName+" of table "+t.Name, err)
}

// originOf is the origin of an outbox item (outbox.AttrOrigin); "" when
// it has none.
func originOf(item map[string]types.AttributeValue) string {
	if s, ok := item[outbox.AttrOrigin].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// isOutboxItem reports whether item is an outbox item: its sort key begins
// with the current or a former sort key prefix.
func isOutboxItem(t outbox.Table, item map[string]types.AttributeValue) bool {
	sk, ok := item[t.SortKey].(*types.AttributeValueMemberS)
	return ok && t.IsOutboxSortKey(sk.Value)
}
