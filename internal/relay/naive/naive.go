// Package naive is the straightforward outbox relay, kept as a baseline to
// measure the real relay against: for each stream record, in order, one
// PutEvents call with one entry, then one write (UpdateItem to mark it
// published, or DeleteItem). A 100-record batch costs 200 sequential round
// trips and 2 calls per event.
//
// It follows the same contract as package relay (skips what is not an outbox
// INSERT, reports failures by sequence number) but has no batching, no
// parallelism, no retries and no poison handling: a malformed or rejected
// event is reported as a failure and blocks the shard until the retries of
// the event source mapping run out.
package naive

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/streamrecord"
)

// DynamoDBAPI is the part of the DynamoDB client the naive relay uses.
type DynamoDBAPI interface {
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// EventBridgeAPI is the part of the EventBridge client it uses.
type EventBridgeAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// Relay is the naive relay (EventBridge target only).
type Relay struct {
	DynamoDB    DynamoDBAPI
	EventBridge EventBridgeAPI
	Config      config.Config
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// HandleStream publishes and marks each outbox INSERT record, one at a time.
func (r *Relay) HandleStream(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	resp := events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{}}
	for _, rec := range ev.Records {
		if err := r.relay(ctx, rec); err != nil {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: rec.Change.SequenceNumber})
		}
	}
	return resp, nil
}

func (r *Relay) relay(ctx context.Context, rec events.DynamoDBEventRecord) error {
	t := r.Config.Table
	sk, ok := streamrecord.String(rec.Change.Keys, t.SortKey)
	if rec.EventName != "INSERT" || !ok || !t.IsOutboxSortKey(sk) || rec.Change.NewImage == nil {
		return nil
	}
	image, err := streamrecord.Image(rec.Change.NewImage)
	if err != nil {
		return err
	}
	record, err := t.ParseItem(image)
	if err != nil {
		return err
	}
	entry := ebtypes.PutEventsRequestEntry{
		EventBusName: aws.String(r.Config.Target.EventBus),
		Source:       aws.String(record.Source),
		DetailType:   aws.String(record.DetailType),
		Detail:       aws.String(string(record.DetailJSON())),
		Time:         aws.Time(record.OccurredAt),
	}
	if record.TraceHeader != "" {
		entry.TraceHeader = aws.String(record.TraceHeader)
	}
	out, err := r.EventBridge.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{entry}})
	if err != nil {
		return err
	}
	if out.FailedEntryCount > 0 {
		return fmt.Errorf("PutEvents: %s", aws.ToString(out.Entries[0].ErrorCode))
	}
	if r.Config.PublishedAction == config.ActionDelete {
		_, err = r.DynamoDB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(t.Name), Key: t.Key(record)})
		return err
	}
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	_, err = r.DynamoDB.UpdateItem(ctx, t.MarkPublished(record, now, r.Config.PublishedTTL))
	var ccf *ddbtypes.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil
	}
	return err
}
