package outbox

import (
	"context"
	"fmt"
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
	table  Table
	client TransactWriter
	now    func() time.Time
}

// WriterOption configures a Writer.
type WriterOption func(*Writer)

// WithClock makes the Writer read the time from now; for tests.
func WithClock(now func() time.Time) WriterOption { return func(w *Writer) { w.now = now } }

// NewWriter returns a Writer for table. client may be nil if only Put is used.
func NewWriter(client TransactWriter, table Table, opts ...WriterOption) (*Writer, error) {
	table = table.WithDefaults()
	if err := table.Validate(); err != nil {
		return nil, err
	}
	w := &Writer{table: table, client: client, now: time.Now}
	for _, opt := range opts {
		opt(w)
	}
	return w, nil
}

// Table returns the Writer's table, with defaults applied.
func (w *Writer) Table() Table { return w.table }

// Put validates e and returns the transaction action that stores it, to be
// appended to the caller's own TransactWriteItems, and the record it writes.
// The Put is conditioned on the item not existing, so an event id is never
// written twice.
func (w *Writer) Put(e Event) (types.TransactWriteItem, Record, error) {
	r, err := w.table.newRecord(e, 0, w.now())
	if err != nil {
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
func (w *Writer) Write(ctx context.Context, items []types.TransactWriteItem, events ...Event) ([]Record, error) {
	if w.client == nil {
		return nil, fmt.Errorf("outbox writer has no DynamoDB client: pass one to NewWriter")
	}
	actions, records, err := w.Actions(items, events...)
	if err != nil {
		return nil, err
	}
	if _, err := w.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions}); err != nil {
		return nil, fmt.Errorf("writing %d items and %d outbox events to %s: %w", len(items), len(events), w.table.Name, err)
	}
	return records, nil
}

// Actions validates the events and returns the caller's items followed by
// one Put per event, ready for TransactWriteItems, with the records written.
func (w *Writer) Actions(items []types.TransactWriteItem, events ...Event) ([]types.TransactWriteItem, []Record, error) {
	if n := len(items) + len(events); n > MaxTransactionActions {
		return nil, nil, &TransactionError{Actions: n, Err: ErrTooManyActions}
	}
	now := w.now()
	actions := make([]types.TransactWriteItem, 0, len(items)+len(events))
	actions = append(actions, items...)
	records := make([]Record, 0, len(events))
	for i, e := range events {
		r, err := w.table.newRecord(e, i, now)
		if err != nil {
			return nil, nil, err
		}
		actions = append(actions, w.put(r))
		records = append(records, r)
	}
	return actions, records, nil
}
