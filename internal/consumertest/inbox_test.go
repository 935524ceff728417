package consumertest_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
)

// effectOnce is a handler that counts the event in the ledger.
func effectOnce(eventID string, ran *int) func(context.Context, *consumer.Tx) error {
	return func(_ context.Context, tx *consumer.Tx) error {
		if ran != nil {
			*ran++
		}
		tx.Add(countEffect(eventID))
		return nil
	}
}

// Many goroutines deliver the same events at once, each until it is done:
// every event's effect happens exactly once.
func TestConcurrentDuplicatesApplyOnce(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	in := e.inbox()
	ids := deliverConcurrently(t, in, "01EVENT", func(id, hash string) (consumer.Outcome, error) {
		deadline := time.Now().Add(time.Minute)
		for {
			out, err := in.Process(context.Background(), id, hash, effectOnce(id, nil))
			if errors.Is(err, consumer.ErrInProgress) && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond) // a redelivery, after the holder completes
				continue
			}
			return out, err
		}
	})
	for ev, id := range ids {
		if n := e.applied(id); n != 1 {
			t.Errorf("event %d: effect applied %d times, want 1", ev, n)
		}
	}
}

// concurrentEvents and concurrentDeliveries are how many events
// deliverConcurrently delivers, and how many times each.
const concurrentEvents, concurrentDeliveries = 5, 12

// deliverConcurrently delivers concurrentEvents events (ids prefix00,
// prefix01, ...) concurrentDeliveries times each, all at once, and checks
// that one delivery of each event applied it and every other one was a
// duplicate, counted as skipped by the inbox. It returns the events' ids.
func deliverConcurrently(t *testing.T, in *consumer.Inbox, prefix string, deliver func(id, hash string) (consumer.Outcome, error)) []string {
	t.Helper()
	const events, deliveries = concurrentEvents, concurrentDeliveries
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[consumer.Outcome]int{}
	errs := make(chan error, events*deliveries)
	ids := make([]string, events)
	for ev := range events {
		id := fmt.Sprintf("%s%02d", prefix, ev)
		ids[ev] = id
		hash := hashOf(t, fmt.Sprintf(`{"n":%d}`, ev))
		for range deliveries {
			wg.Go(func() {
				out, err := deliver(id, hash)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				outcomes[out]++
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if outcomes[consumer.Applied] != events || outcomes[consumer.Duplicate] != events*(deliveries-1) {
		t.Errorf("outcomes %v, want %d applied and %d duplicates", outcomes, events, events*(deliveries-1))
	}
	wantTotal(t, in, consumer.DuplicatesSkipped, events*(deliveries-1))
	return ids
}

// A crashed attempt's event is refused while its lease lasts and taken
// over after it; the takeover is counted, and the crashed attempt, were it
// alive, could no longer complete: its effects are not written.
func TestLeaseTakeoverAfterExpiry(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	first, second := e.inbox(), e.inbox()
	const id = "01TAKEOVER"
	hash := hashOf(t, `{"orderId":"1"}`)
	var secondErr error
	var secondOutcome consumer.Outcome
	_, err := first.Process(context.Background(), id, hash, func(ctx context.Context, tx *consumer.Tx) error {
		// While the first attempt holds the lease, a redelivery is refused.
		if _, err := second.Process(ctx, id, hash, effectOnce(id, nil)); !errors.Is(err, consumer.ErrInProgress) {
			t.Errorf("a delivery during the lease: %v, want ErrInProgress", err)
		}
		// The first attempt stalls past its lease; a redelivery takes over.
		e.clock.Advance(time.Minute + time.Millisecond)
		secondOutcome, secondErr = second.Process(ctx, id, hash, effectOnce(id, nil))
		tx.Add(countEffect(id))
		return nil
	})
	if secondErr != nil || secondOutcome != consumer.Applied {
		t.Fatalf("the takeover: %v, %v", secondOutcome, secondErr)
	}
	if !errors.Is(err, consumer.ErrLeaseLost) {
		t.Fatalf("the stalled attempt's completion: %v, want ErrLeaseLost", err)
	}
	if n := e.applied(id); n != 1 {
		t.Errorf("effect applied %d times, want 1", n)
	}
	wantTotal(t, second, consumer.LeasesTakenOver, 1)
	wantTotal(t, first, consumer.LeasesLost, 1)
	if st := attrS(e.entry(id), consumer.AttrStatus); st != consumer.StatusCompleted {
		t.Errorf("status %s, want COMPLETED", st)
	}
}

// An entry written by a process that crashed (as the contract describes
// it, by another writer) is taken over only after its lease.
func TestCrashedEntryTakenOverAfterLease(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	in := e.inbox()
	const id = "01CRASHED"
	hash := hashOf(t, `{"orderId":"2"}`)
	leaseEnd := e.clock.Now().Add(30 * time.Second)
	_, err := e.client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(inboxTable), Item: map[string]types.AttributeValue{
		consumer.AttrEventID:        &types.AttributeValueMemberS{Value: id},
		consumer.AttrStatus:         &types.AttributeValueMemberS{Value: consumer.StatusInProgress},
		consumer.AttrPayloadHash:    &types.AttributeValueMemberS{Value: hash},
		consumer.AttrLeaseToken:     &types.AttributeValueMemberS{Value: "crashed-process"},
		consumer.AttrLeaseExpiresAt: &types.AttributeValueMemberN{Value: fmt.Sprint(leaseEnd.UnixMilli())},
		consumer.AttrInboxVersion:   &types.AttributeValueMemberN{Value: "1"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	if _, err := in.Process(context.Background(), id, hash, effectOnce(id, &ran)); !errors.Is(err, consumer.ErrInProgress) || ran != 0 {
		t.Fatalf("during the crashed lease: %v (handler ran %d times)", err, ran)
	}
	e.clock.Advance(30*time.Second + time.Millisecond)
	if out, err := in.Process(context.Background(), id, hash, effectOnce(id, &ran)); err != nil || out != consumer.Applied || ran != 1 {
		t.Fatalf("after the lease: %v, %v (handler ran %d times)", out, err, ran)
	}
	if in.Metrics().Total(consumer.LeasesTakenOver) != 1 || e.applied(id) != 1 {
		t.Errorf("takeovers %v, effects %d", in.Metrics().Total(consumer.LeasesTakenOver), e.applied(id))
	}
}

// A handler's failure releases the lease: the next delivery runs at once,
// and that is not a takeover. An effect whose own condition fails rolls the
// completion back with it.
func TestFailureReleasesTheLease(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	in := e.inbox()
	const id = "01RELEASED"
	hash := hashOf(t, `{"orderId":"3"}`)
	boom := errors.New("payment service down")
	if _, err := in.Process(context.Background(), id, hash, func(context.Context, *consumer.Tx) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("the handler's error: %v", err)
	}
	// An effect conditioned on an item that does not exist cancels the
	// transaction: neither the effect nor the completion is written.
	_, err := in.Process(context.Background(), id, hash, func(_ context.Context, tx *consumer.Tx) error {
		tx.Add(countEffect(id), types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName: aws.String(ledgerTable), ConditionExpression: aws.String("attribute_exists(pk)"),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "ACCOUNT#missing"}},
		}})
		return nil
	})
	var canceled *types.TransactionCanceledException
	if !errors.As(err, &canceled) || errors.Is(err, consumer.ErrLeaseLost) {
		t.Fatalf("a failing effect: %v, want the TransactionCanceledException", err)
	}
	if e.applied(id) != 0 || attrS(e.entry(id), consumer.AttrStatus) != consumer.StatusInProgress {
		t.Fatalf("the canceled transaction wrote something: effects %d, entry %v", e.applied(id), e.entry(id))
	}
	if out, err := in.Process(context.Background(), id, hash, effectOnce(id, nil)); err != nil || out != consumer.Applied {
		t.Fatalf("the next delivery: %v, %v", out, err)
	}
	if in.Metrics().Total(consumer.LeasesTakenOver) != 0 || e.applied(id) != 1 {
		t.Errorf("takeovers %v, effects %d", in.Metrics().Total(consumer.LeasesTakenOver), e.applied(id))
	}
	if _, err := in.Process(context.Background(), "01TOOMANY", hash, func(_ context.Context, tx *consumer.Tx) error {
		for range consumer.MaxEffects + 1 {
			tx.Add(countEffect("01TOOMANY"))
		}
		return nil
	}); !errors.Is(err, consumer.ErrTooManyEffects) {
		t.Errorf("100 effects: %v, want ErrTooManyEffects", err)
	}
}

// Without effects the completion is one UpdateItem, on the same condition:
// an attempt whose lease was taken over cannot complete either.
func TestLeaseLostWithoutEffects(t *testing.T) {
	t.Parallel()
	e := newEngine(t)
	first, second := e.inbox(), e.inbox()
	const id = "01NOEFFECTS"
	hash := hashOf(t, `{"orderId":"4"}`)
	_, err := first.Process(context.Background(), id, hash, func(ctx context.Context, _ *consumer.Tx) error {
		e.clock.Advance(time.Minute + time.Millisecond)
		if out, err := second.Process(ctx, id, hash, func(context.Context, *consumer.Tx) error { return nil }); err != nil || out != consumer.Applied {
			t.Errorf("the takeover: %v, %v", out, err)
		}
		return nil
	})
	if !errors.Is(err, consumer.ErrLeaseLost) {
		t.Fatalf("the stalled attempt's completion: %v, want ErrLeaseLost", err)
	}
	if out, err := first.Process(context.Background(), id, hash, effectOnce(id, nil)); err != nil || out != consumer.Duplicate {
		t.Errorf("a redelivery after both: %v, %v, want a duplicate", out, err)
	}
}
