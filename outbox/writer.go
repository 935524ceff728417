package outbox

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TransactWriter is the part of the DynamoDB client the Writer uses.
type TransactWriter interface {
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Writer turns events into outbox items inside the caller's transaction.
// It is safe for concurrent use.
type Writer struct {
	table   Table
	client  TransactWriter
	now     func() time.Time
	ordered bool
	claim   *claimCheck
	origin  string
	// target is the kind of target (WithTarget); "" for any.
	target string
}

// WriterOption configures a Writer.
type WriterOption func(*Writer)

// WithClock makes the Writer read the time from now; for tests.
func WithClock(now func() time.Time) WriterOption { return func(w *Writer) { w.now = now } }

// WithOrdering makes every event the Writer writes ordered: an event without
// OrderingKey takes its PartitionKey as ordering key. Without it, only
// events that set OrderingKey are ordered.
func WithOrdering() WriterOption { return func(w *Writer) { w.ordered = true } }

// WithOrigin sets the Region stamped on every event as its origin
// (AttrOrigin). Without it the Writer takes the Region of its DynamoDB
// client (a *dynamodb.Client, or any client with the same Options method),
// which is where the transaction commits; WithOrigin is for clients that
// do not say, and for tests.
func WithOrigin(region string) WriterOption { return func(w *Writer) { w.origin = region } }

// NewWriter returns a Writer for table. client may be nil if only Put is used.
// Ordered events also need the client's GetItem (ItemReader).
func NewWriter(client TransactWriter, table Table, opts ...WriterOption) (*Writer, error) {
	table = table.WithDefaults()
	if err := table.Validate(); err != nil {
		return nil, err
	}
	w := &Writer{table: table, client: client, now: time.Now, origin: clientRegion(client)}
	for _, opt := range opts {
		opt(w)
	}
	if err := checkOrigin(w.origin); err != nil {
		return nil, err
	}
	if err := w.targetProblem(); err != nil {
		return nil, err
	}
	if w.ordered {
		if err := table.orderingProblem(); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// Table returns the Writer's table, with defaults applied.
func (w *Writer) Table() Table { return w.table }

// Put validates e and returns the transaction action that stores it, to be
// appended to the caller's own TransactWriteItems, and the record it writes.
// The Put is conditioned on the item not existing, so an event id is never
// written twice. An ordered event needs a second action, on its key's
// sequence item: write it with Write or ActionsAfter.
func (w *Writer) Put(e Event) (types.TransactWriteItem, Record, error) {
	records, err := w.records([]Event{e})
	if err != nil {
		return types.TransactWriteItem{}, Record{}, err
	}
	r := records[0]
	if r.OrderingKey != "" {
		return types.TransactWriteItem{}, Record{}, &EventError{Index: 0, Field: "OrderingKey", Err: ErrSequenceUnknown,
			Fix: "an ordered event also advances its key's sequence item: write it with Write, or with ActionsAfter and the key's last sequence"}
	}
	if err := w.checkSize(r, 0); err != nil {
		return types.TransactWriteItem{}, Record{}, err
	}
	return w.put(r), r, nil
}

func (w *Writer) put(r Record) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{
		TableName:                aws.String(w.table.Name),
		Item:                     w.table.Item(r),
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": w.table.PartitionKey},
	}}
}

// Write stores the caller's items and the events in one TransactWriteItems
// call: all of them are written, or none. Every event is validated first; on
// a validation error nothing is sent. It returns the records written, in the
// order of events.
//
// For ordered events it first reads the last sequence of their ordering keys
// (LastSequences). When another writer advanced one of them in between, the
// transaction is cancelled and Write returns a *SequenceConflictError
// (errors.Is(err, ErrSequenceConflict)): nothing was written, and the caller
// reads its data again and retries.
func (w *Writer) Write(ctx context.Context, items []types.TransactWriteItem, events ...Event) ([]Record, error) {
	if w.client == nil {
		return nil, fmt.Errorf("outbox writer has no DynamoDB client: pass one to NewWriter")
	}
	traced := make([]Event, len(events))
	for i, e := range events {
		traced[i] = e.WithTraceContext(ctx)
	}
	records, err := w.records(traced)
	if err != nil {
		return nil, err
	}
	if err := w.storeClaims(ctx, records); err != nil {
		return nil, err
	}
	if err := checkActions(items, records); err != nil {
		return nil, err
	}
	var last map[string]int64
	if keys := orderingKeys(records); len(keys) > 0 {
		if last, err = w.LastSequences(ctx, keys...); err != nil {
			return nil, err
		}
	}
	actions, records, err := w.assemble(last, items, records)
	if err != nil {
		return nil, err
	}
	if _, err := w.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions}); err != nil {
		if conflict := w.table.SequenceConflict(actions, err); conflict != nil {
			err = conflict
		}
		return nil, fmt.Errorf("writing %d items and %d outbox events to %s: %w", len(items), len(events), w.table.Name, err)
	}
	return records, nil
}

// Actions validates the events and returns the caller's items followed by
// one Put per event, ready for TransactWriteItems, with the records written.
// Ordered events need the last sequence of their keys: use ActionsAfter.
func (w *Writer) Actions(items []types.TransactWriteItem, events ...Event) ([]types.TransactWriteItem, []Record, error) {
	return w.ActionsAfter(nil, items, events...)
}

// ActionsAfter is Actions for ordered events too: last holds the last
// sequence of each of their ordering keys (0 for a key without events), as
// LastSequences reads it or as the caller keeps it. The events of a key get
// the numbers after it, in the order given, and the actions end with one
// AdvanceSequence per key, conditioned on last. A cancelled transaction of
// these actions whose SequenceConflict is not nil was refused because last
// was out of date.
func (w *Writer) ActionsAfter(last map[string]int64, items []types.TransactWriteItem, events ...Event) ([]types.TransactWriteItem, []Record, error) {
	records, err := w.records(events)
	if err != nil {
		return nil, nil, err
	}
	return w.assemble(last, items, records)
}

// records validates events and returns their records, without sequences.
func (w *Writer) records(events []Event) ([]Record, error) {
	now := w.now()
	records := make([]Record, 0, len(events))
	for i, e := range events {
		r, err := w.table.newRecord(e, i, now, w.ordered)
		if err != nil {
			return nil, err
		}
		if r.OrderingKey != "" && !w.ordered {
			if err := w.table.orderingProblem(); err != nil {
				return nil, err
			}
		}
		r.Origin = w.origin
		records = append(records, r)
	}
	return records, nil
}

// orderingKeys returns the distinct ordering keys of records, in the order
// they first appear.
func orderingKeys(records []Record) []string {
	var keys []string
	for _, r := range records {
		if r.OrderingKey != "" && !slices.Contains(keys, r.OrderingKey) {
			keys = append(keys, r.OrderingKey)
		}
	}
	return keys
}

// checkActions fails when the transaction would have more actions than
// DynamoDB allows: the items, one per record, one per ordering key.
func checkActions(items []types.TransactWriteItem, records []Record) error {
	if n := len(items) + len(records) + len(orderingKeys(records)); n > MaxTransactionActions {
		return &TransactionError{Actions: n, Err: ErrTooManyActions}
	}
	return nil
}

// assemble numbers the ordered records after last, checks their sizes and
// returns the items, one Put per record and one AdvanceSequence per ordering
// key, with the records.
func (w *Writer) assemble(last map[string]int64, items []types.TransactWriteItem, records []Record) ([]types.TransactWriteItem, []Record, error) {
	keys := orderingKeys(records)
	if err := checkActions(items, records); err != nil {
		return nil, nil, err
	}
	next := make(map[string]int64, len(keys))
	for i := range records {
		r := &records[i]
		if r.OrderingKey != "" {
			if _, ok := next[r.OrderingKey]; !ok {
				n, known := last[r.OrderingKey]
				if !known || n < 0 {
					return nil, nil, &EventError{Index: i, Field: "OrderingKey", Err: ErrSequenceUnknown,
						Fix: fmt.Sprintf("pass the last sequence of %q (0 if it has no events yet), as Writer.LastSequences reads it, or write with Write", r.OrderingKey)}
				}
				next[r.OrderingKey] = n
			}
			next[r.OrderingKey]++
			r.Sequence = next[r.OrderingKey]
		}
		if err := w.checkSize(*r, i); err != nil {
			return nil, nil, err
		}
	}
	actions := make([]types.TransactWriteItem, 0, len(items)+len(records)+len(keys))
	actions = append(actions, items...)
	for _, r := range records {
		actions = append(actions, w.put(r))
	}
	for _, key := range keys {
		actions = append(actions, w.table.AdvanceSequence(key, last[key], next[key]))
	}
	return actions, records, nil
}
