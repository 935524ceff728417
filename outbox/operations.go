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

// update returns the conditional update of r's item.
func (t Table) update(r Record, update, condition string, names map[string]string, values map[string]types.AttributeValue) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{
		TableName:                 aws.String(t.Name),
		Key:                       t.Key(r),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String(condition),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}
}

// pendingKeyValues returns r's pending index keys (:shard and :since, for
// #shard and #since): its shard, and pending since it occurred.
func (t Table) pendingKeyValues(r Record) (shard, since types.AttributeValue) {
	return stringValue(PendingShardKey(t.ShardFor(r.EventID))), millisValue(r.OccurredAt)
}

func stringValue(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

// millisValue is a time in Unix milliseconds, as the pending index and
// nextAttemptAt hold it.
func millisValue(t time.Time) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(t.UnixMilli(), 10)}
}

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
		":published": stringValue(string(StatusPublished)),
		":pending":   stringValue(string(StatusPending)),
		":now":       stringValue(now.UTC().Format(TimeFormat)),
	}
	set := "SET #status = :published, #publishedAt = :now"
	if ttl > 0 {
		names["#ttl"] = t.TTLAttribute
		values[":expires"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(ttl).Unix(), 10)}
		set += ", #ttl = :expires"
	}
	return t.update(r, set+" REMOVE #shard, #since", "#status = :pending", names, values)
}

// MarkFailed returns the update that records r as permanently unpublishable.
// The item leaves the pending index and keeps no TTL, so that it stays for
// inspection and replay. It applies to any item not yet published, failed or
// skipped (an operator's skip stands),
// including malformed items with no valid status: those are exactly the ones
// that must leave the pending index.
func (t Table) MarkFailed(r Record, reason string, now time.Time) *dynamodb.UpdateItemInput {
	return t.update(r,
		"SET #status = :failed, #lastError = :reason, #failedAt = :now ADD #attempts :one REMOVE #shard, #since",
		"attribute_exists(#pk) AND NOT (#status IN (:published, :failed, :skipped))",
		map[string]string{
			"#pk":     t.PartitionKey,
			"#status": AttrStatus, "#lastError": AttrLastError, "#failedAt": AttrFailedAt,
			"#attempts": AttrAttempts, "#shard": AttrPendingShard, "#since": AttrPendingSince,
		},
		map[string]types.AttributeValue{
			":failed":    stringValue(string(StatusFailed)),
			":published": stringValue(string(StatusPublished)),
			":skipped":   stringValue(string(StatusSkipped)),
			":reason":    stringValue(reason),
			":now":       stringValue(now.UTC().Format(TimeFormat)),
			":one":       &types.AttributeValueMemberN{Value: "1"},
		})
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
			":shard":  stringValue(PendingShardKey(shard)),
			":cutoff": millisValue(cutoff),
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

// CreateTableInput returns the CreateTable request of t: its partition and
// sort keys (strings) and, unless NoPendingIndex, the pending index, billed
// on demand. A pipeline adds the stream the relay reads, its tags and its
// protection settings.
func (t Table) CreateTableInput() *dynamodb.CreateTableInput {
	in := &dynamodb.CreateTableInput{
		TableName: aws.String(t.Name),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(t.PartitionKey), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(t.SortKey), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(t.PartitionKey), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(t.SortKey), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	}
	if !t.NoPendingIndex {
		index, attrs := t.PendingIndex()
		in.AttributeDefinitions = append(in.AttributeDefinitions, attrs...)
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{index}
	}
	return in
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
	shard, since := t.pendingKeyValues(r)
	return t.update(r, "SET #status = :pending, #shard = :shard, #since = :since REMOVE #next", "#status = :failed",
		map[string]string{
			"#status": AttrStatus, "#shard": AttrPendingShard, "#since": AttrPendingSince, "#next": AttrNextAttemptAt,
		},
		map[string]types.AttributeValue{
			":pending": stringValue(string(StatusPending)),
			":failed":  stringValue(string(StatusFailed)),
			":shard":   shard,
			":since":   since,
		})
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
	in := t.update(r, "SET #next = :until ADD #attempts :one", "#status = :pending AND (attribute_not_exists(#next) OR #next <= :now)",
		map[string]string{
			"#status": AttrStatus, "#next": AttrNextAttemptAt, "#attempts": AttrAttempts,
		},
		map[string]types.AttributeValue{
			":pending": stringValue(string(StatusPending)),
			":until":   millisValue(until),
			":now":     millisValue(now),
			":one":     &types.AttributeValueMemberN{Value: "1"},
		})
	in.ReturnValues = types.ReturnValueAllNew
	in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	if !t.NoPendingIndex {
		in.UpdateExpression = aws.String("SET #next = :until, #shard = if_not_exists(#shard, :shard), #since = if_not_exists(#since, :since) ADD #attempts :one")
		in.ExpressionAttributeNames["#shard"] = AttrPendingShard
		in.ExpressionAttributeNames["#since"] = AttrPendingSince
		in.ExpressionAttributeValues[":shard"], in.ExpressionAttributeValues[":since"] = t.pendingKeyValues(r)
	}
	return in
}

// Release returns the update by which a relay gives back the hold it took
// (Hold, until heldUntil) when publishing the event failed, so that nothing
// was published: the hold ends (nextAttemptAt is removed) and the attempt
// is not counted (attempts falls by one). It applies only to a pending item
// still under that very hold, so that it never ends another relay's hold.
func (t Table) Release(r Record, heldUntil time.Time) *dynamodb.UpdateItemInput {
	return t.update(r, "REMOVE #next ADD #attempts :minusOne", "#status = :pending AND #next = :held",
		map[string]string{
			"#status": AttrStatus, "#next": AttrNextAttemptAt, "#attempts": AttrAttempts,
		},
		map[string]types.AttributeValue{
			":pending":  stringValue(string(StatusPending)),
			":held":     millisValue(heldUntil),
			":minusOne": &types.AttributeValueMemberN{Value: "-1"},
		})
}

// Held reports whether r's item is held by a relay at now.
func (r Record) Held(now time.Time) bool { return r.NextAttemptAt > now.UnixMilli() }

// AddPendingKeys returns the update that gives a pending item that lacks
// them the pending index keys of the contract (pending since it occurred),
// so that the reconciler finds it: for an item written by a writer that did
// not set them, whose publishing failed.
func (t Table) AddPendingKeys(r Record) *dynamodb.UpdateItemInput {
	shard, since := t.pendingKeyValues(r)
	return t.update(r, "SET #shard = :shard, #since = :since", "#status = :pending AND attribute_not_exists(#shard)",
		map[string]string{
			"#status": AttrStatus, "#shard": AttrPendingShard, "#since": AttrPendingSince,
		},
		map[string]types.AttributeValue{
			":pending": stringValue(string(StatusPending)),
			":shard":   shard,
			":since":   since,
		})
}

// DuePendingQuery is PendingQuery(shard, cutoff) without the items held by
// a relay at now: those whose nextAttemptAt is after now.
func (t Table) DuePendingQuery(shard int, cutoff, now time.Time) *dynamodb.QueryInput {
	in := t.PendingQuery(shard, cutoff)
	in.FilterExpression = aws.String("attribute_not_exists(#next) OR #next <= :now")
	in.ExpressionAttributeNames["#next"] = AttrNextAttemptAt
	in.ExpressionAttributeValues[":now"] = millisValue(now)
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
			":pending": stringValue(string(StatusPending)),
			":cutoff":  stringValue(cutoff.UTC().Format(TimeFormat)),
			":now":     millisValue(now),
		},
	}
}
