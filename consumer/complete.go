package consumer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// completeNames and leaseNames are the expression names of the completion
// and of the release.
var (
	completeNames = map[string]string{
		"#status": AttrStatus, "#completedAt": AttrCompletedAt, "#expiresAt": AttrExpiresAt,
		"#token": AttrLeaseToken, "#lease": AttrLeaseExpiresAt, "#hash": AttrPayloadHash,
	}
	releaseNames = map[string]string{"#token": AttrLeaseToken, "#lease": AttrLeaseExpiresAt, "#hash": AttrPayloadHash}
)

// completion is the update that completes the attempt's entry.
func (in *Inbox) completion(a attempt) *types.Update {
	now := in.now()
	return &types.Update{
		TableName:                aws.String(in.table),
		Key:                      a.key(),
		UpdateExpression:         aws.String(completeUpdate),
		ConditionExpression:      aws.String(CompleteCondition),
		ExpressionAttributeNames: completeNames,
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":completed": str(StatusCompleted), ":completedAt": num(now.UnixMilli()),
			":expiresAt": num(now.Add(in.retention).Unix()), ":token": str(a.token), ":hash": str(a.hash),
		},
	}
}

// complete commits the completion, alone (one write) or with the effects
// in one TransactWriteItems, whose client request token is the lease token,
// so that the SDK's retries of it are idempotent.
func (in *Inbox) complete(ctx context.Context, a attempt, effects []types.TransactWriteItem) error {
	u := in.completion(a)
	if len(effects) == 0 {
		_, err := in.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression,
			ConditionExpression: u.ConditionExpression, ExpressionAttributeNames: u.ExpressionAttributeNames,
			ExpressionAttributeValues: u.ExpressionAttributeValues,
		})
		var failed *types.ConditionalCheckFailedException
		if errors.As(err, &failed) {
			return in.leaseLost(ctx, a)
		}
		if err != nil {
			return fmt.Errorf("consumer: completing event %s in %s: %w", a.eventID, in.table, err)
		}
		return nil
	}
	items := append(append(make([]types.TransactWriteItem, 0, len(effects)+1), effects...), types.TransactWriteItem{Update: u})
	_, err := in.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
		TransactItems:      items,
		ClientRequestToken: aws.String(a.token),
	})
	var canceled *types.TransactionCanceledException
	if errors.As(err, &canceled) && len(canceled.CancellationReasons) == len(items) &&
		aws.ToString(canceled.CancellationReasons[len(items)-1].Code) == "ConditionalCheckFailed" {
		return in.leaseLost(ctx, a)
	}
	if err != nil {
		return fmt.Errorf("consumer: completing event %s in %s with %d effects: %w", a.eventID, in.table, len(effects), err)
	}
	return nil
}

func (in *Inbox) leaseLost(ctx context.Context, a attempt) error {
	in.metrics.add(LeasesLost, 1)
	in.log.WarnContext(ctx, "lease lost before completion", "eventId", a.eventID)
	return fmt.Errorf("%w: event %s (its effects were not written)", ErrLeaseLost, a.eventID)
}

// releaseTimeout bounds a release.
const releaseTimeout = 5 * time.Second

// release ends the attempt's lease at once, if it still holds it. A failed
// release only delays the next attempt until the lease expires.
func (in *Inbox) release(ctx context.Context, a attempt) {
	// The handler may have failed because ctx ended; the release still runs.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	_, err := in.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(in.table),
		Key:                      a.key(),
		UpdateExpression:         aws.String(releaseUpdate),
		ConditionExpression:      aws.String("#token = :token AND #hash = :hash"),
		ExpressionAttributeNames: releaseNames,
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":zero": num(0), ":token": str(a.token), ":hash": str(a.hash),
		},
	})
	if err != nil {
		in.log.WarnContext(ctx, "releasing the lease failed; the next attempt waits for it to expire", "eventId", a.eventID, "error", err.Error())
	}
}
