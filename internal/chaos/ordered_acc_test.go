package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// The ordered run: the pipeline in ordered mode (ordering.enabled) on a
// FIFO target, and writers of ordered events (outbox.WithOrdering) on
// accounts, each account an ordering key: orderedKeys of them, the
// hotKeys first taking hotShare of the transactions, and tripleShare of
// the transactions posting three events to their account at once. The
// consumer checks each key's order (KeyOrder) under the same faults as
// every run.
const (
	orderedKeys = 1000
	hotKeys     = 10
	hotShare    = 0.5
	tripleShare = 0.1
	// accountSortKey is the sort key of an account's item, whose balance
	// each transaction changes with its events.
	accountSortKey = "ACCOUNT"
)

// withOrdering returns k in ordered mode, named <name>-ordered.
func (k chaosTarget) withOrdering() chaosTarget {
	k.name += "-ordered"
	k.ordered = true
	return k
}

// writerOptions are the options of the run's writers.
func (k chaosTarget) writerOptions() []outbox.WriterOption {
	if k.ordered {
		return []outbox.WriterOption{outbox.WithOrdering()}
	}
	return nil
}

// orderedRun is what an ordered run counts besides the Tally.
type orderedRun struct {
	keys *KeyOrder
	// conflicts counts the writers' transactions refused because another
	// writer advanced the key's sequence first; they are retried.
	conflicts atomic.Int64
}

// newOrderedRun returns the counts of an ordered run, nil for another.
func (k chaosTarget) newOrderedRun() *orderedRun {
	if !k.ordered {
		return nil
	}
	return &orderedRun{keys: NewKeyOrder()}
}

// received records a reception on an ordered run.
func (o *orderedRun) received(id, key string, seq int64) {
	if o != nil {
		o.keys.Received(id, key, seq)
	}
}

// fill adds the order's counts to res on an ordered run, and logs them.
func (o *orderedRun) fill(t *testing.T, res *Result) {
	if o == nil {
		return
	}
	o.keys.Fill(res)
	t.Logf("ordered: events of %d ordering keys received; %d transactions retried after a sequence conflict", o.keys.Keys(), o.conflicts.Load())
	for _, e := range o.keys.Examples() {
		t.Logf("  inversion: %s", e)
	}
}

// orderedTransaction picks the account and the number of events of a
// transaction.
func orderedTransaction(rng *rand.Rand) (key string, events int) {
	n := hotKeys + rng.IntN(orderedKeys-hotKeys)
	if rng.Float64() < hotShare {
		n = rng.IntN(hotKeys)
	}
	events = 1
	if rng.Float64() < tripleShare {
		events = 3
	}
	return fmt.Sprintf("ACCOUNT#%03d", n), events
}

// writeOrdered is one writer of an ordered run: it takes the numbers of
// its transaction's events, waits for the first one's turn in the paced
// schedule, and commits the change of the account's balance with its
// events, which the ordered writer numbers after the account's last.
func (r *run) writeOrdered(ctx context.Context, writer int, start time.Time, next *atomic.Int64) {
	rng := rand.New(rand.NewPCG(uint64(writer), uint64(time.Now().UnixNano())))
	for ctx.Err() == nil {
		key, size := orderedTransaction(rng)
		n := next.Add(int64(size)) - int64(size)
		if n >= int64(r.o.events) {
			return
		}
		size = min(size, r.o.events-int(n))
		if !r.turn(ctx, start, n) {
			return
		}
		events := make([]outbox.Event, size)
		total := 0
		for i := range events {
			amount := rng.IntN(2000) - 1000
			total += amount
			events[i] = outbox.Event{
				ID: newID(), PartitionKey: key, Source: eventSource, DetailType: "AmountPosted",
				Detail: json.RawMessage(fmt.Sprintf(`{"account":%q,"amount":%d,"n":%d}`, key, amount, n+int64(i))),
			}
		}
		c := r.contract.current.Load()
		if r.commit(ctx, key, c.table.SortKeyFor(events[0].ID), func() error { return r.writeInSequence(ctx, c.w, balanceChange(c.table, key, total), events) }) {
			for _, e := range events {
				r.tally.Written(e.ID)
				r.contract.committed(c)
			}
		}
	}
}

// writeInSequence writes the events with item, again while another writer
// advanced their key's sequence first: such a transaction wrote nothing.
func (r *run) writeInSequence(ctx context.Context, w *outbox.Writer, item ddbtypes.TransactWriteItem, events []outbox.Event) error {
	for {
		_, err := w.Write(ctx, []ddbtypes.TransactWriteItem{item}, events...)
		if !errors.Is(err, outbox.ErrSequenceConflict) {
			return err
		}
		r.ordered.conflicts.Add(1)
		if !sleepUntil(ctx, time.Now().Add(time.Duration(1+rand.IntN(20))*time.Millisecond)) {
			return err
		}
	}
}

// balanceChange is the update of key's account item by amount.
func balanceChange(t outbox.Table, key string, amount int) ddbtypes.TransactWriteItem {
	return ddbtypes.TransactWriteItem{Update: &ddbtypes.Update{
		TableName: aws.String(t.Name),
		Key: map[string]ddbtypes.AttributeValue{
			t.PartitionKey: &ddbtypes.AttributeValueMemberS{Value: key},
			t.SortKey:      &ddbtypes.AttributeValueMemberS{Value: accountSortKey},
		},
		UpdateExpression:          aws.String("ADD #balance :amount"),
		ExpressionAttributeNames:  map[string]string{"#balance": "balance"},
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":amount": &ddbtypes.AttributeValueMemberN{Value: strconv.Itoa(amount)}},
	}}
}
