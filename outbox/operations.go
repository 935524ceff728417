package outbox

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// This file holds every DynamoDB request the outbox makes on its items, so
// that the relay, the reconciler and the tests agree on them.

// MarkPublished returns the update that records r as published: status,
// publishedAt and, when ttl is positive, the expiry; the pending index keys
// are removed so the item leaves the sparse index. It is conditioned on the
// item still being pending, so a failed condition means another relay
// invocation (or the reconciler) got there first, or the item is gone.
func (t Table) MarkPublished(r Record, now time.Time, ttl time.Duration) *dynamodb.UpdateItemInput {
	names := map[string]string{
		"#status": AttrStatus, "#publishedAt": AttrPublishedAt,
		"#shard": AttrPendingShard, "#since": AttrPendingSince,
	}
	values := map[string]types.AttributeValue{
		":published": &types.AttributeValueMemberS{Value: string(StatusPublished)},
		":pending":   &types.AttributeValueMemberS{Value: string(StatusPending)},
		":now":       &types.AttributeValueMemberS{Value: now.UTC().Format(TimeFormat)},
	}
	set := "SET #status = :published, #publishedAt = :now"
	if ttl > 0 {
		names["#ttl"] = t.TTLAttribute
		values[":expires"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(ttl).Unix(), 10)}
		set += ", #ttl = :expires"
	}
	return &dynamodb.UpdateItemInput{
		TableName:                 aws.String(t.Name),
		Key:                       t.Key(r),
		UpdateExpression:          aws.String(set + " REMOVE #shard, #since"),
		ConditionExpression:       aws.String("#status = :pending"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}
}

// MarkFailed returns the update that records r as permanently unpublishable.
// The item leaves the pending index and keeps no TTL, so that it stays for
// inspection and replay. It applies to any item not yet published or failed,
// including malformed items with no valid status: those are exactly the ones
// that must leave the pending index.
func (t Table) MarkFailed(r Record, reason string, now time.Time) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{
		TableName:           aws.String(t.Name),
		Key:                 t.Key(r),
		UpdateExpression:    aws.String("SET #status = :failed, #lastError = :reason, #failedAt = :now ADD #attempts :one REMOVE #shard, #since"),
		ConditionExpression: aws.String("attribute_exists(#pk) AND NOT (#status IN (:published, :failed))"),
		ExpressionAttributeNames: map[string]string{
			"#pk":     t.PartitionKey,
			"#status": AttrStatus, "#lastError": AttrLastError, "#failedAt": AttrFailedAt,
			"#attempts": AttrAttempts, "#shard": AttrPendingShard, "#since": AttrPendingSince,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":failed":    &types.AttributeValueMemberS{Value: string(StatusFailed)},
			":published": &types.AttributeValueMemberS{Value: string(StatusPublished)},
			":reason":    &types.AttributeValueMemberS{Value: reason},
			":now":       &types.AttributeValueMemberS{Value: now.UTC().Format(TimeFormat)},
			":one":       &types.AttributeValueMemberN{Value: "1"},
		},
	}
}

// Delete returns the BatchWriteItem request that removes r's item.
func (t Table) Delete(r Record) types.WriteRequest {
	return types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: t.Key(r)}}
}

// PendingQuery returns the query of one pending-index shard for events
// pending since before cutoff, oldest first.
func (t Table) PendingQuery(shard int, cutoff time.Time) *dynamodb.QueryInput {
	return &dynamodb.QueryInput{
		TableName:              aws.String(t.Name),
		IndexName:              aws.String(t.PendingIndexName),
		KeyConditionExpression: aws.String("#shard = :shard AND #since <= :cutoff"),
		ExpressionAttributeNames: map[string]string{
			"#shard": AttrPendingShard, "#since": AttrPendingSince,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":shard":  &types.AttributeValueMemberS{Value: PendingShardKey(shard)},
			":cutoff": &types.AttributeValueMemberN{Value: strconv.FormatInt(cutoff.UnixMilli(), 10)},
		},
	}
}

// PendingIndex returns the definition of the sparse pending index and the
// attribute definitions it needs. Only pending items carry its key
// attributes, so only they are in it; it projects all attributes so that the
// reconciler can republish from the index alone.
func (t Table) PendingIndex() (types.GlobalSecondaryIndex, []types.AttributeDefinition) {
	index := types.GlobalSecondaryIndex{
		IndexName: aws.String(t.PendingIndexName),
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(AttrPendingShard), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(AttrPendingSince), KeyType: types.KeyTypeRange},
		},
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
	}
	attrs := []types.AttributeDefinition{
		{AttributeName: aws.String(AttrPendingShard), AttributeType: types.ScalarAttributeTypeS},
		{AttributeName: aws.String(AttrPendingSince), AttributeType: types.ScalarAttributeTypeN},
	}
	return index, attrs
}

// StreamFilterPattern returns the event source mapping filter that lets only
// outbox INSERT records reach the relay: those whose sort key begins with the
// current or a former sort key prefix.
func (t Table) StreamFilterPattern() string {
	prefixes := make([]any, 0, 1+len(t.FormerSortKeyPrefixes))
	for _, p := range t.SortKeyPrefixes() {
		prefixes = append(prefixes, map[string]string{"prefix": p})
	}
	pattern := map[string]any{
		"eventName": []string{"INSERT"},
		"dynamodb": map[string]any{
			"Keys": map[string]any{
				t.SortKey: map[string]any{"S": prefixes},
			},
		},
	}
	b, err := json.Marshal(pattern)
	if err != nil {
		panic("outbox: marshalling filter pattern: " + err.Error())
	}
	return string(b)
}

// Requeue returns the update that puts a FAILED event back in the pending
// index, for replay once its cause is fixed: status PENDING and the pending
// index keys of the contract (pending since it occurred, so the next
// reconciler run publishes it), and no hold left from an earlier attempt.
// attempts and lastError stay as history. It applies only to FAILED items.
// r needs only the key, EventID and OccurredAt.
func (t Table) Requeue(r Record) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{
		TableName:           aws.String(t.Name),
		Key:                 t.Key(r),
		UpdateExpression:    aws.String("SET #status = :pending, #shard = :shard, #since = :since REMOVE #next"),
		ConditionExpression: aws.String("#status = :failed"),
		ExpressionAttributeNames: map[string]string{
			"#status": AttrStatus, "#shard": AttrPendingShard, "#since": AttrPendingSince, "#next": AttrNextAttemptAt,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pending": &types.AttributeValueMemberS{Value: string(StatusPending)},
			":failed":  &types.AttributeValueMemberS{Value: string(StatusFailed)},
			":shard":   &types.AttributeValueMemberS{Value: PendingShardKey(t.ShardFor(r.EventID))},
			":since":   &types.AttributeValueMemberN{Value: strconv.FormatInt(r.OccurredAt.UnixMilli(), 10)},
		},
	}
}

// MaxBatchGet is the number of keys one BatchGetItem accepts.
const MaxBatchGet = 100

// CurrentItems returns the strongly consistent BatchGetItem that reads the
// current items of records (at most MaxBatchGet, with distinct keys), so
// that a relay publishes only what is still pending.
func (t Table) CurrentItems(records []Record) *dynamodb.BatchGetItemInput {
	keys := make([]map[string]types.AttributeValue, len(records))
	for i, r := range records {
		keys[i] = t.Key(r)
	}
	return &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		t.Name: {Keys: keys, ConsistentRead: aws.Bool(true)},
	}}
}

// Hold returns the update by which a relay takes r's item before publishing
// it: nextAttemptAt becomes until, and attempts grows by one. It applies
// only to a pending item that no one holds (no nextAttemptAt, or one not
// after now), so of two relays only one gets the item; the other's
// condition fails. It returns the item as updated, to publish from, and on
// a failed condition the item as it is, to tell a held item from a settled
// or missing one.
//
// The hold is also the backoff when marking fails: an event published but
// not recorded stays held until until, and no reconciler run publishes it
// again before. When publishing itself fails, the holder releases the item
// instead (Release), so that its retries are not kept out by its own hold.
//
// With the pending index, the hold also gives an item that lacks them the
// pending index keys (if_not_exists: an item that has them is not
// rewritten), so that a held item whose holder dies is found by the
// reconciler once the hold ends.
func (t Table) Hold(r Record, now, until time.Time) *dynamodb.UpdateItemInput {
	in := &dynamodb.UpdateItemInput{
		TableName:           aws.String(t.Name),
		Key:                 t.Key(r),
		UpdateExpression:    aws.String("SET #next = :until ADD #attempts :one"),
		ConditionExpression: aws.String("#status = :pending AND (attribute_not_exists(#next) OR #next <= :now)"),
		ExpressionAttributeNames: map[string]string{
			"#status": AttrStatus, "#next": AttrNextAttemptAt, "#attempts": AttrAttempts,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pending": &types.AttributeValueMemberS{Value: string(StatusPending)},
			":until":   &types.AttributeValueMemberN{Value: strconv.FormatInt(until.UnixMilli(), 10)},
			":now":     &types.AttributeValueMemberN{Value: strconv.FormatInt(now.UnixMilli(), 10)},
			":one":     &types.AttributeValueMemberN{Value: "1"},
		},
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if !t.NoPendingIndex {
		in.UpdateExpression = aws.String("SET #next = :until, #shard = if_not_exists(#shard, :shard), #since = if_not_exists(#since, :since) ADD #attempts :one")
		in.ExpressionAttributeNames["#shard"] = AttrPendingShard
		in.ExpressionAttributeNames["#since"] = AttrPendingSince
		in.ExpressionAttributeValues[":shard"] = &types.AttributeValueMemberS{Value: PendingShardKey(t.ShardFor(r.EventID))}
		in.ExpressionAttributeValues[":since"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(r.OccurredAt.UnixMilli(), 10)}
	}
	return in
}

// Release returns the update by which a relay gives back the hold it took
// (Hold, until heldUntil) when publishing the event failed, so that nothing
// was published: the hold ends (nextAttemptAt is removed) and the attempt
// is not counted (attempts falls by one). It applies only to a pending item
// still under that very hold, so that it never ends another relay's hold.
func (t Table) Release(r Record, heldUntil time.Time) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{
		TableName:           aws.String(t.Name),
		Key:                 t.Key(r),
		UpdateExpression:    aws.String("REMOVE #next ADD #attempts :minusOne"),
		ConditionExpression: aws.String("#status = :pending AND #next = :held"),
		ExpressionAttributeNames: map[string]string{
			"#status": AttrStatus, "#next": AttrNextAttemptAt, "#attempts": AttrAttempts,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pending":  &types.AttributeValueMemberS{Value: string(StatusPending)},
			":held":     &types.AttributeValueMemberN{Value: strconv.FormatInt(heldUntil.UnixMilli(), 10)},
			":minusOne": &types.AttributeValueMemberN{Value: "-1"},
		},
	}
}

// Held reports whether r's item is held by a relay at now.
func (r Record) Held(now time.Time) bool { return r.NextAttemptAt > now.UnixMilli() }

// AddPendingKeys returns the update that gives a pending item that lacks
// them the pending index keys of the contract (pending since it occurred),
// so that the reconciler finds it: for an item written by a writer that did
// not set them, whose publishing failed.
func (t Table) AddPendingKeys(r Record) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{
		TableName:           aws.String(t.Name),
		Key:                 t.Key(r),
		UpdateExpression:    aws.String("SET #shard = :shard, #since = :since"),
		ConditionExpression: aws.String("#status = :pending AND attribute_not_exists(#shard)"),
		ExpressionAttributeNames: map[string]string{
			"#status": AttrStatus, "#shard": AttrPendingShard, "#since": AttrPendingSince,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pending": &types.AttributeValueMemberS{Value: string(StatusPending)},
			":shard":   &types.AttributeValueMemberS{Value: PendingShardKey(t.ShardFor(r.EventID))},
			":since":   &types.AttributeValueMemberN{Value: strconv.FormatInt(r.OccurredAt.UnixMilli(), 10)},
		},
	}
}

// DuePendingQuery is PendingQuery(shard, cutoff) without the items held by
// a relay at now: those whose nextAttemptAt is after now.
func (t Table) DuePendingQuery(shard int, cutoff, now time.Time) *dynamodb.QueryInput {
	in := t.PendingQuery(shard, cutoff)
	in.FilterExpression = aws.String("attribute_not_exists(#next) OR #next <= :now")
	in.ExpressionAttributeNames["#next"] = AttrNextAttemptAt
	in.ExpressionAttributeValues[":now"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(now.UnixMilli(), 10)}
	return in
}

// PendingScan returns segment of a parallel Scan in totalSegments of a
// table without pending index (NoPendingIndex): the pending items that
// occurred at or before cutoff and that no relay holds at now.
func (t Table) PendingScan(segment, totalSegments int, cutoff, now time.Time) *dynamodb.ScanInput {
	return &dynamodb.ScanInput{
		TableName:        aws.String(t.Name),
		Segment:          aws.Int32(int32(segment)),
		TotalSegments:    aws.Int32(int32(totalSegments)),
		FilterExpression: aws.String("#status = :pending AND #occurred <= :cutoff AND (attribute_not_exists(#next) OR #next <= :now)"),
		ExpressionAttributeNames: map[string]string{
			"#status": AttrStatus, "#occurred": AttrOccurredAt, "#next": AttrNextAttemptAt,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pending": &types.AttributeValueMemberS{Value: string(StatusPending)},
			":cutoff":  &types.AttributeValueMemberS{Value: cutoff.UTC().Format(TimeFormat)},
			":now":     &types.AttributeValueMemberN{Value: strconv.FormatInt(now.UnixMilli(), 10)},
		},
	}
}
