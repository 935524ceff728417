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
// reconciler run publishes it). attempts and lastError stay as history. It
// applies only to FAILED items. r needs only the key, EventID and OccurredAt.
func (t Table) Requeue(r Record) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{
		TableName:           aws.String(t.Name),
		Key:                 t.Key(r),
		UpdateExpression:    aws.String("SET #status = :pending, #shard = :shard, #since = :since"),
		ConditionExpression: aws.String("#status = :failed"),
		ExpressionAttributeNames: map[string]string{
			"#status": AttrStatus, "#shard": AttrPendingShard, "#since": AttrPendingSince,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pending": &types.AttributeValueMemberS{Value: string(StatusPending)},
			":failed":  &types.AttributeValueMemberS{Value: string(StatusFailed)},
			":shard":   &types.AttributeValueMemberS{Value: PendingShardKey(t.ShardFor(r.EventID))},
			":since":   &types.AttributeValueMemberN{Value: strconv.FormatInt(r.OccurredAt.UnixMilli(), 10)},
		},
	}
}
