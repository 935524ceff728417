package consumer

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The retries of a lease-less commit that DynamoDB cancelled for a
// TransactionConflict: another request was writing one of its items.
const (
	conflictAttempts = 5
	conflictBackoff  = 20 * time.Millisecond
)

// acquireNames are the expression names of AcquireCondition.
var acquireNames = map[string]string{
	"#id": AttrEventID, "#status": AttrStatus, "#lease": AttrLeaseExpiresAt, "#hash": AttrPayloadHash,
}

// EffectsOnly makes a Consumer apply events with Inbox.ProcessEffectsOnly,
// without a lease: for handlers whose only side effects are the DynamoDB
// writes they add to their Tx.
func EffectsOnly() ConsumerOption { return func(s *consumerSettings) { s.effectsOnly = true } }

// ProcessEffectsOnly applies the event eventID, whose data hashes to hash,
// once, without a lease, in one round trip: it runs fn, then writes the
// event's COMPLETED inbox entry together with the effects fn added to tx,
// in one TransactWriteItems (a conditional PutItem when fn added none). The
// entry's put is conditioned like the lease's (AcquireCondition): the event
// is new, or an attempt of Process let its lease expire. It is for
// handlers whose only side effects are those writes: fn runs before the
// inbox is consulted, so it may run more than once for one event
// (concurrent deliveries, redeliveries of a completed event, a reused id),
// but only one of its transactions commits, so the effects happen exactly
// once, and nothing fn added for a duplicate or a mismatch is written. A refused put is decided from the entry DynamoDB returns
// (ReturnValuesOnConditionCheckFailure ALL_OLD), the payload hash first: a
// Duplicate, ErrPayloadMismatch or ErrInProgress (a Process attempt holds
// the lease). A transaction cancelled for a TransactionConflict is retried.
// The other errors are those of Process except ErrLeaseLost.
func (in *Inbox) ProcessEffectsOnly(ctx context.Context, eventID, hash string, fn func(ctx context.Context, tx *Tx) error) (Outcome, error) {
	if eventID == "" || hash == "" {
		return 0, fmt.Errorf("%w: empty event id or payload hash", ErrMalformedEvent)
	}
	tx := &Tx{}
	if err := fn(ctx, tx); err != nil {
		return 0, err
	}
	if tx.Len() > MaxEffects {
		return 0, fmt.Errorf("%w: %d effects, at most %d", ErrTooManyEffects, tx.Len(), MaxEffects)
	}
	a := attempt{eventID: eventID, hash: hash}
	put := in.completedPut(a)
	var old map[string]types.AttributeValue
	var err error
	if tx.Len() == 0 {
		old, err = in.putCompleted(ctx, put)
	} else {
		old, err = in.commitEffects(ctx, put, tx.items)
	}
	if err != nil {
		return 0, err
	}
	if old != nil {
		// refused reports a duplicate or says why the event may not complete.
		if _, err := in.refused(ctx, a, readEntry(old)); err != nil {
			return 0, err
		}
		return Duplicate, nil
	}
	in.metrics.add(EventsApplied, 1)
	return Applied, nil
}

// completedPut is the put of the attempt's COMPLETED entry.
func (in *Inbox) completedPut(a attempt) *types.Put {
	now := in.now()
	return &types.Put{
		TableName: aws.String(in.table),
		Item: map[string]types.AttributeValue{
			AttrEventID:      str(a.eventID),
			AttrStatus:       str(StatusCompleted),
			AttrPayloadHash:  str(a.hash),
			AttrCompletedAt:  num(now.UnixMilli()),
			AttrExpiresAt:    num(now.Add(in.retention).Unix()),
			AttrInboxVersion: num(InboxVersion),
		},
		ConditionExpression:      aws.String(AcquireCondition),
		ExpressionAttributeNames: acquireNames,
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":inProgress": str(StatusInProgress), ":now": num(now.UnixMilli()), ":hash": str(a.hash),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// putCompleted writes the COMPLETED entry alone, retrying it after a
// TransactionConflict. It returns the entry that refused it, if one did.
func (in *Inbox) putCompleted(ctx context.Context, p *types.Put) (refusedBy map[string]types.AttributeValue, err error) {
	err = in.retryConflicts(ctx, p, func() error {
		_, err := in.client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: p.TableName, Item: p.Item, ConditionExpression: p.ConditionExpression,
			ExpressionAttributeNames: p.ExpressionAttributeNames, ExpressionAttributeValues: p.ExpressionAttributeValues,
			ReturnValuesOnConditionCheckFailure: p.ReturnValuesOnConditionCheckFailure,
		})
		return err
	}, func(err error) bool {
		var conflict *types.TransactionConflictException
		return errors.As(err, &conflict)
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return storedEntry(failed.Item, p)
	}
	if err != nil {
		return nil, fmt.Errorf("consumer: completing event %s in %s: %w", eventIDOf(p), aws.ToString(p.TableName), err)
	}
	return nil, nil
}

// retryConflicts makes a commit, and makes it again each time conflicted
// reports that a TransactionConflict refused it, while afterConflict
// allows. It returns the last try's error, or the error of the wait
// before the next.
func (in *Inbox) retryConflicts(ctx context.Context, p *types.Put, commit func() error, conflicted func(error) bool) error {
	for try := 1; ; try++ {
		err := commit()
		if !conflicted(err) {
			return err
		}
		retry, waitErr := in.afterConflict(ctx, p, try)
		if waitErr != nil {
			return waitErr
		}
		if !retry {
			return err
		}
	}
}

// afterConflict waits before the next try of a commit that a
// TransactionConflict refused, and reports whether to make it: not after
// conflictAttempts tries (err nil: the caller reports the conflict), nor
// once ctx ended.
func (in *Inbox) afterConflict(ctx context.Context, p *types.Put, try int) (retry bool, err error) {
	if try >= conflictAttempts {
		return false, nil
	}
	in.log.InfoContext(ctx, "transaction conflict, retrying", "eventId", eventIDOf(p), "attempt", try)
	if err := sleep(ctx, conflictBackoff<<(try-1)); err != nil {
		return false, fmt.Errorf("waiting to retry after a transaction conflict: %w", err)
	}
	return true, nil
}

// commitEffects writes the COMPLETED entry with the effects in one
// TransactWriteItems, retrying it after a TransactionConflict. It returns
// the entry that refused it, if one did.
func (in *Inbox) commitEffects(ctx context.Context, p *types.Put, effects []types.TransactWriteItem) (refusedBy map[string]types.AttributeValue, err error) {
	items := append(append(make([]types.TransactWriteItem, 0, len(effects)+1), effects...), types.TransactWriteItem{Put: p})
	// reasons are the cancellation reasons of a cancelled commit, one per
	// item; nil for any other outcome.
	reasons := func(err error) []types.CancellationReason {
		var canceled *types.TransactionCanceledException
		if !errors.As(err, &canceled) || len(canceled.CancellationReasons) != len(items) {
			return nil
		}
		return canceled.CancellationReasons
	}
	err = in.retryConflicts(ctx, p, func() error {
		// The SDK gives each call its own client request token, kept
		// across its own retries of the call.
		_, err := in.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		return err
	}, func(err error) bool {
		r := reasons(err)
		return r != nil && reasonIndex(r, "ConditionalCheckFailed") < 0 && reasonIndex(r, "TransactionConflict") >= 0
	})
	if r := reasons(err); r != nil {
		if code := aws.ToString(r[len(items)-1].Code); code == "ConditionalCheckFailed" {
			return storedEntry(r[len(items)-1].Item, p)
		}
		if i := reasonIndex(r, "ConditionalCheckFailed"); i >= 0 {
			return nil, fmt.Errorf("consumer: effect %d of event %s failed its condition (nothing was written): %w", i, eventIDOf(p), err)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("consumer: completing event %s in %s with %d effects: %w", eventIDOf(p), aws.ToString(p.TableName), len(effects), err)
	}
	return nil, nil
}

// storedEntry is the entry that refused the put p, or an error if DynamoDB
// did not return it: deciding without its hash could skip a mismatch.
func storedEntry(item map[string]types.AttributeValue, p *types.Put) (map[string]types.AttributeValue, error) {
	if len(item) == 0 {
		return nil, fmt.Errorf("consumer: the inbox entry of event %s refused the commit, but DynamoDB did not return it (ReturnValuesOnConditionCheckFailure ALL_OLD); nothing was written", eventIDOf(p))
	}
	return item, nil
}

func reasonIndex(reasons []types.CancellationReason, code string) int {
	for i, r := range reasons {
		if aws.ToString(r.Code) == code {
			return i
		}
	}
	return -1
}

func eventIDOf(p *types.Put) string {
	if v, ok := p.Item[AttrEventID].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// sleep waits d with up to half of it added at random, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d + rand.N(d/2+1))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
