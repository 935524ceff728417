package reconcile

import (
	"cmp"
	"context"
	"slices"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/batch"
)

// In ordered mode most of a backlog's events cannot be published when they
// are found: a hot key's events are on every shard and page, and each waits
// for the one before it. Holding such an event only to release it again
// costs two writes each time it is found, on every page and every pass over
// the waiting events. So before holding, the reconciler reads the cursors
// of the keys found and holds only what the gate can publish now: each
// key's events that follow its cursor without a gap (and those the cursor
// covers, which the gate settles or publishes late). The others wait
// unheld, with nothing written, for a later pass of the run, once the
// events before them are published. A key held by a FAILED event goes
// through the gate, which counts it blocked. So does a key whose cursor
// could not be read: the gate reports the error on its events.

// runnable splits the items of an ordered relay's run into those to hold
// and process now and those that wait behind a gap in their key's
// sequence. Items without a sequence go through as they are.
func (r *Reconciler) runnable(ctx context.Context, items []batch.Item) (now, waiting []batch.Item) {
	byKey := map[string][]int{}
	var keys []string
	for i, it := range items {
		if it.Record.Sequence == 0 {
			now = append(now, it)
			continue
		}
		k := it.Record.OrderingKey
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], i)
	}
	if len(keys) == 0 {
		return now, nil
	}
	cursors, errs := r.Ordered.Cursors(ctx, keys)
	for n, k := range keys {
		group := byKey[k]
		slices.SortStableFunc(group, func(a, b int) int { return cmp.Compare(items[a].Record.Sequence, items[b].Record.Sequence) })
		c := cursors[n]
		if errs[n] != nil || c.IsBlocked() {
			for _, i := range group {
				now = append(now, items[i])
			}
			continue
		}
		next := c.Next()
		for _, i := range group {
			switch seq := items[i].Record.Sequence; {
			case seq < next:
				now = append(now, items[i])
			case seq == next:
				now = append(now, items[i])
				next++
			default:
				waiting = append(waiting, items[i])
			}
		}
	}
	return now, waiting
}
