package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Cursors reads the cursor items of the ordering keys (outbox.Cursor),
// with the strongly consistent reads of Current. It returns, per key, the
// cursor, or the error that kept it from being read.
func (s *Store) Cursors(ctx context.Context, keys []string) ([]outbox.Cursor, []error) {
	records := make([]outbox.Record, len(keys))
	for i, k := range keys {
		records[i] = s.Table.CursorRecord(k)
	}
	items, errs := s.Current(ctx, records)
	cursors := make([]outbox.Cursor, len(keys))
	for i, item := range items {
		if errs[i] != nil {
			continue
		}
		c, err := outbox.ParseCursor(item)
		if err != nil {
			errs[i] = fmt.Errorf("the cursor item of ordering key %q in %s: %w", keys[i], s.Table.Name, err)
		}
		cursors[i] = c
	}
	return cursors, errs
}

// CursorMove is one advance of a key's cursor: the relay found it at From
// and had the events From+1 to To accepted; Done are the waiting events
// registered on the cursor (outbox.Cursor.Waiting) that the move covers.
type CursorMove struct {
	Key      string
	From, To int64
	Done     []int64
}

// AdvanceCursors advances each key's cursor (outbox.Table.AdvanceCursor),
// in parallel. It returns, per move, the cursor as this move left it, with
// the events registered after it (Exists is false when another relay moved
// it further: that one publishes what follows), and an error: nil when the
// cursor is at the move's To or beyond, whoever moved it.
func (s *Store) AdvanceCursors(ctx context.Context, moves []CursorMove) ([]outbox.Cursor, []error) {
	cursors := make([]outbox.Cursor, len(moves))
	errs := make([]error, len(moves))
	s.parallel(len(moves), func(i int) {
		m := moves[i]
		out, err := s.updateOne(ctx, s.Table.AdvanceCursor(m.Key, m.From, m.To, m.Done))
		var ccf *types.ConditionalCheckFailedException
		switch {
		case errors.As(err, &ccf):
			// Another relay moved the cursor first: it is at To or beyond,
			// unless it is below From, which no relay does.
			c, perr := outbox.ParseCursor(ccf.Item)
			if perr == nil && c.Published >= m.To {
				return
			}
			errs[i] = fmt.Errorf("the cursor of ordering key %q in %s is at %d, not between %d and %d: %w", m.Key, s.Table.Name, c.Published, m.From, m.To-1, err)
		case err != nil:
			errs[i] = err
		default:
			cursors[i], errs[i] = outbox.ParseCursor(out.Attributes)
		}
	})
	return cursors, errs
}

// Registration is the result of registering a key's waiting events.
type Registration struct {
	// Registered is true when the cursor holds them now.
	Registered bool
	// Closed is true when the gap closed meanwhile: the cursor, as it is
	// now, has moved up to them.
	Closed bool
	Err    error
}

// RegisterWaiting registers each key's waiting events on its cursor
// (outbox.Table.RegisterWaiting), in parallel.
func (s *Store) RegisterWaiting(ctx context.Context, keys []string, waiting [][]outbox.Record) []Registration {
	out := make([]Registration, len(keys))
	s.parallel(len(keys), func(i int) {
		_, err := s.updateOne(ctx, s.Table.RegisterWaiting(keys[i], waiting[i]))
		var ccf *types.ConditionalCheckFailedException
		switch {
		case err == nil:
			out[i].Registered = true
		case errors.As(err, &ccf):
			out[i].Closed = true
		default:
			out[i].Err = err
		}
	})
	return out
}

// BlockCursors marks each key as held by its FAILED event of the given
// sequence (outbox.Table.BlockCursor), in parallel. A key whose cursor moved
// on meanwhile is left as it is. It returns one error per key.
func (s *Store) BlockCursors(ctx context.Context, keys []string, sequences []int64) []error {
	return s.update(ctx, len(keys), func(i int) *dynamodb.UpdateItemInput {
		return s.Table.BlockCursor(keys[i], sequences[i])
	})
}

// StartCursors moves the cursors of keys, found as found, to published
// (outbox.Table.StartCursor), in parallel; a cursor that changed meanwhile
// is left as it is. It returns one error per key.
func (s *Store) StartCursors(ctx context.Context, keys []string, found []outbox.Cursor, published []int64) []error {
	return s.update(ctx, len(keys), func(i int) *dynamodb.UpdateItemInput {
		return s.Table.StartCursor(keys[i], found[i], published[i])
	})
}
