package consumertest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
)

// Many goroutines deliver the same events at once without a lease: every
// delivery runs the handler, and one transaction per event commits.
func TestEffectsOnlyConcurrentDuplicatesApplyOnce(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	in := e.inbox()
	var ran atomic.Int64
	ids := deliverConcurrently(t, in, "01LEASELESS", func(id, hash string) (consumer.Outcome, error) {
		return in.ProcessEffectsOnly(context.Background(), id, hash, func(_ context.Context, tx *consumer.Tx) error {
			ran.Add(1)
			tx.Add(countEffect(id))
			return nil
		})
	})
	if ran.Load() != concurrentEvents*concurrentDeliveries {
		t.Errorf("the handler ran %d times, want once per delivery (%d)", ran.Load(), concurrentEvents*concurrentDeliveries)
	}
	for ev, id := range ids {
		if n := e.applied(id); n != 1 {
			t.Errorf("event %d: effect applied %d times, want 1", ev, n)
		}
		if entry := e.entry(id); attrS(entry, consumer.AttrStatus) != consumer.StatusCompleted || attrS(entry, consumer.AttrPayloadHash) == "" {
			t.Errorf("event %d: inbox entry %v, want COMPLETED with its hash", ev, entry)
		}
	}
}

// A reused id with another payload is a mismatch without a lease too, with
// effects (a transaction) or without (a put), after a completion by either
// path and while a leased attempt holds the event; nothing is written.
func TestEffectsOnlyPayloadMismatch(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	in := e.inbox()
	ctx := context.Background()
	original, other := hashOf(t, `{"total":42.5}`), hashOf(t, `{"total":4250}`)
	none := func(context.Context, *consumer.Tx) error { return nil }
	if _, err := in.ProcessEffectsOnly(ctx, "01EFFECTS", original, effectOnce("01EFFECTS", nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Process(ctx, "01LEASED", original, effectOnce("01LEASED", nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := in.ProcessEffectsOnly(ctx, "01NOEFFECT", original, none); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"01EFFECTS", "01LEASED", "01NOEFFECT"} {
		_, err := in.ProcessEffectsOnly(ctx, id, other, effectOnce(id, nil))
		wantMismatch(t, id+" with an effect", err, 0, original, other)
		_, err = in.ProcessEffectsOnly(ctx, id, other, none)
		wantMismatch(t, id+" without effects", err, 0, original, other)
		if out, err := in.ProcessEffectsOnly(ctx, id, original, effectOnce(id, nil)); out != consumer.Duplicate || err != nil {
			t.Errorf("%s redelivered: %v, %v, want a duplicate", id, out, err)
		}
	}
	for id, want := range map[string]int{"01EFFECTS": 1, "01LEASED": 1, "01NOEFFECT": 0} {
		if n := e.applied(id); n != want {
			t.Errorf("%s: effect applied %d times, want %d", id, n, want)
		}
	}
	wantTotal(t, in, consumer.PayloadMismatches, 6)
}

// A leased attempt in progress keeps a lease-less delivery out; after its
// lease expires the lease-less delivery completes the event, and the
// stalled attempt's completion writes nothing.
func TestEffectsOnlyBesideALease(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	in := e.inbox()
	ctx := context.Background()
	const id = "01BESIDE"
	hash := hashOf(t, `{"orderId":"1"}`)
	_, err := in.Process(ctx, id, hash, func(ctx context.Context, tx *consumer.Tx) error {
		if _, err := in.ProcessEffectsOnly(ctx, id, hash, effectOnce(id, nil)); !errors.Is(err, consumer.ErrInProgress) {
			t.Errorf("during the lease: %v, want ErrInProgress", err)
		}
		e.clock.Advance(time.Minute + time.Millisecond)
		if out, err := in.ProcessEffectsOnly(ctx, id, hash, effectOnce(id, nil)); out != consumer.Applied || err != nil {
			t.Errorf("after the lease: %v, %v, want applied", out, err)
		}
		tx.Add(countEffect(id))
		return nil
	})
	if !errors.Is(err, consumer.ErrLeaseLost) {
		t.Fatalf("the stalled attempt: %v, want ErrLeaseLost", err)
	}
	if n := e.applied(id); n != 1 {
		t.Errorf("effect applied %d times, want 1", n)
	}
}

// conflictingClient refuses the first conflicts writes for a conflict, as
// DynamoDB does when another request writes one of the items at the same
// time: a TransactWriteItems is cancelled with a TransactionConflict on the
// inbox entry, a PutItem fails with a TransactionConflictException.
type conflictingClient struct {
	consumer.Client
	conflicts, calls atomic.Int64
}

func (c *conflictingClient) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.calls.Add(1)
	if c.conflicts.Add(-1) >= 0 {
		return nil, &types.TransactionConflictException{Message: aws.String("Transaction is ongoing for the item")}
	}
	return c.Client.PutItem(ctx, in, opts...)
}

func (c *conflictingClient) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.calls.Add(1)
	if c.conflicts.Add(-1) >= 0 {
		reasons := make([]types.CancellationReason, len(in.TransactItems))
		for i := range reasons {
			reasons[i].Code = aws.String("None")
		}
		reasons[len(reasons)-1].Code = aws.String("TransactionConflict")
		return nil, &types.TransactionCanceledException{Message: aws.String("Transaction cancelled"), CancellationReasons: reasons}
	}
	return c.Client.TransactWriteItems(ctx, in, opts...)
}

// A TransactionConflict is retried, a few times; past them the error says
// so and nothing was written.
func TestEffectsOnlyRetriesTransactionConflicts(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	client := &conflictingClient{Client: e.client}
	in, err := consumer.NewInbox(client, inboxTable, consumer.WithClock(e.clock.Now),
		consumer.WithLogger(consumer.NewLogger(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	hash := hashOf(t, `{"orderId":"1"}`)
	client.conflicts.Store(2)
	if out, err := in.ProcessEffectsOnly(ctx, "01CONFLICT", hash, effectOnce("01CONFLICT", nil)); out != consumer.Applied || err != nil {
		t.Fatalf("after 2 conflicts: %v, %v, want applied", out, err)
	}
	if client.calls.Load() != 3 || e.applied("01CONFLICT") != 1 {
		t.Errorf("%d calls, effect applied %d times, want 3 and 1", client.calls.Load(), e.applied("01CONFLICT"))
	}
	client.conflicts.Store(100)
	_, err = in.ProcessEffectsOnly(ctx, "01CONFLICTS", hash, effectOnce("01CONFLICTS", nil))
	var canceled *types.TransactionCanceledException
	if !errors.As(err, &canceled) {
		t.Fatalf("after conflicts without end: %v, want the cancellation", err)
	}
	if n := e.applied("01CONFLICTS"); n != 0 || e.entry("01CONFLICTS") != nil {
		t.Errorf("a cancelled commit wrote: effect %d, entry %v", n, e.entry("01CONFLICTS"))
	}

	// Without effects, the put alone is retried the same way.
	none := func(context.Context, *consumer.Tx) error { return nil }
	client.conflicts.Store(2)
	client.calls.Store(0)
	if out, err := in.ProcessEffectsOnly(ctx, "01PUTCONFLICT", hash, none); out != consumer.Applied || err != nil || client.calls.Load() != 3 {
		t.Fatalf("a put after 2 conflicts: %v, %v in %d calls, want applied in 3", out, err, client.calls.Load())
	}
	client.conflicts.Store(100)
	var conflict *types.TransactionConflictException
	if _, err := in.ProcessEffectsOnly(ctx, "01PUTCONFLICTS", hash, none); !errors.As(err, &conflict) || e.entry("01PUTCONFLICTS") != nil {
		t.Errorf("a put after conflicts without end: %v, entry %v, want the conflict and no entry", err, e.entry("01PUTCONFLICTS"))
	}
}

// The SQS adapter with EffectsOnly applies a batch's duplicates at once,
// without reporting any in progress: each event's effect happens once.
func TestHandleSQSEffectsOnlyDuplicatesInOneBatch(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	c := newConsumer(t, e, consumer.EffectsOnly())
	const queue = "arn:aws:sqs:us-east-1:123456789012:billing"
	var batch []events.SQSMessage
	for i := range 10 {
		r := record(fmt.Sprintf("01BATCH%d", i%3), `{"orderId":"1234","total":42.5}`)
		batch = append(batch, sqsMessage(fmt.Sprintf("m-%d", i), string(r.EnvelopeJSON()), queue, ""))
	}
	resp, err := c.HandleSQS(context.Background(), events.SQSEvent{Records: batch})
	if err != nil {
		t.Fatal(err)
	}
	if got := failedIDs(resp); len(got) != 0 {
		t.Errorf("batch item failures %v, want none", got)
	}
	for i := range 3 {
		if n := e.applied(fmt.Sprintf("01BATCH%d", i)); n != 1 {
			t.Errorf("event %d: effect applied %d times, want 1", i, n)
		}
	}
}
