package operate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// SkipOutput is what `outbox skip --json` prints.
type SkipOutput struct {
	Pipeline string `json:"pipeline"`
	// DryRun is true without --yes: nothing was changed.
	DryRun bool `json:"dryRun"`
	// Event is the FAILED event, as `outbox failed --json` lists it.
	Event FailedEvent `json:"event"`
	// Skipped is true once the event is SKIPPED and its key's cursor moved
	// past it.
	Skipped bool `json:"skipped"`
}

// failedEvent finds the FAILED event with the given id.
// On a multi-Region pipeline, an event written in another Region than
// origins selects is not found: its key's cursor is moved by that Region's
// reconciler, in its own replica.
func (c *Clients) failedEvent(ctx context.Context, p *Pipeline, eventID string, origins Origins) (FailedEvent, error) {
	list, err := c.Failed(ctx, p, Filter{IDs: []string{eventID}, Origins: origins})
	if err != nil {
		return FailedEvent{}, err
	}
	if len(list.Events) == 0 {
		return FailedEvent{}, missingError(p, []string{eventID}, list.elsewhere)
	}
	e := list.Events[0]
	switch {
	case e.Record.Sequence == 0:
		return e, usageError("skip", "event %s is not an ordered event: no event waits behind it, so there is nothing to skip; %s", eventID, requeueAdvice(p, e))
	case !p.Config.Ordered:
		return e, usageError("skip", "pipeline %s does not publish in order (its ordering is off): event %s was written with ordering key %q, but no event waits behind it, so there is nothing to skip; %s",
			p.Name, eventID, e.Record.OrderingKey, requeueAdvice(p, e))
	case !e.HoldsKey:
		return e, usageError("skip", "event %s is event %d of ordering key %q, whose cursor is already past it: no event waits behind it, so there is nothing to skip; %s",
			eventID, e.Record.Sequence, e.Record.OrderingKey, requeueAdvice(p, e))
	}
	return e, nil
}

// requeueAdvice says how to get the FAILED event e published.
func requeueAdvice(p *Pipeline, e FailedEvent) string {
	id := e.Record.EventID
	if e.Broken != "" {
		return fmt.Sprintf("its item breaks the record contract (%s): fix the item, then `outbox requeue %s --id %s` publishes it", e.Broken, p.Name, id)
	}
	return fmt.Sprintf("`outbox requeue %s --id %s` publishes it once its cause is fixed", p.Name, id)
}

// Skip marks the FAILED ordered event SKIPPED and moves its key's cursor
// past it, in one transaction (outbox.Table.SkipActions), so that the
// reconciler publishes the events that wait behind it. It refuses an event
// that is not its key's next one: skipping it would skip those before it.
func (c *Clients) Skip(ctx context.Context, p *Pipeline, e FailedEvent, now time.Time) error {
	t := p.Table()
	r := e.Record
	actions := t.SkipActions(r, now)
	_, err := c.DynamoDB.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions})
	var canceled *types.TransactionCanceledException
	if !errors.As(err, &canceled) {
		return call("dynamodb:TransactWriteItems", "table "+t.Name, err)
	}
	reasons := canceled.CancellationReasons
	failed := func(i int) bool { return i < len(reasons) && aws.ToString(reasons[i].Code) == "ConditionalCheckFailed" }
	switch {
	case failed(0):
		return stuck("event %s is no longer FAILED (requeued or skipped meanwhile): see `outbox failed %s`", r.EventID, p.Name)
	case failed(1):
		cur, err := c.cursor(ctx, t, r.OrderingKey)
		if err != nil {
			return err
		}
		return stuck("event %s is event %d of ordering key %q, but the key's next event to publish is %d: skip that one first (`outbox failed %s` lists it), or requeue it",
			r.EventID, r.Sequence, r.OrderingKey, cur.Next(), p.Name)
	}
	return fmt.Errorf("skipping event %s: %w", r.EventID, err)
}

// cursor reads the cursor of an ordering key.
func (c *Clients) cursor(ctx context.Context, t outbox.Table, key string) (outbox.Cursor, error) {
	out, err := c.DynamoDB.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(t.Name), Key: t.CursorKey(key), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return outbox.Cursor{}, call("dynamodb:GetItem", "table "+t.Name, err)
	}
	return outbox.ParseCursor(out.Item)
}

// waitingBehind marks, on an ordered pipeline, each ordered event its
// key's cursor has not passed as holding its key, with how many events of
// its key were written after it: none of them is published before it is
// (once requeued) or is skipped. Two strongly consistent reads per key, of
// its sequence item and its cursor. A pipeline without ordered mode
// publishes every event as it comes: no event holds another, whatever
// ordering key it was written with; nor does an event whose key's cursor
// was moved past it (outbox.Table.StartCursor).
func (c *Clients) waitingBehind(ctx context.Context, p *Pipeline, events []FailedEvent) error {
	if !p.Config.Ordered {
		return nil
	}
	t := p.Table()
	keys := map[string]keyState{}
	for i := range events {
		r := events[i].Record
		if r.Sequence == 0 {
			continue
		}
		k, ok := keys[r.OrderingKey]
		if !ok {
			var err error
			if k, err = c.keyState(ctx, t, r.OrderingKey); err != nil {
				return err
			}
			keys[r.OrderingKey] = k
		}
		if r.Sequence > k.published {
			events[i].HoldsKey, events[i].WaitingBehind = true, max(k.last-r.Sequence, 0)
		}
	}
	return nil
}

// keyState is where an ordering key stands: its last sequence given out,
// and the last one published.
type keyState struct{ last, published int64 }

func (c *Clients) keyState(ctx context.Context, t outbox.Table, key string) (keyState, error) {
	out, err := c.DynamoDB.GetItem(ctx, t.LastSequenceInput(key))
	if err != nil {
		return keyState{}, call("dynamodb:GetItem", "table "+t.Name, err)
	}
	last, err := outbox.ParseLastSequence(out.Item)
	if err != nil {
		return keyState{}, fmt.Errorf("the sequence item of ordering key %q: %w", key, err)
	}
	cur, err := c.cursor(ctx, t, key)
	if err != nil {
		return keyState{}, fmt.Errorf("the cursor of ordering key %q: %w", key, err)
	}
	return keyState{last: last, published: cur.Published}, nil
}
