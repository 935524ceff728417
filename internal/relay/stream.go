package relay

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/batch"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/store"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/streamrecord"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// HandleStream runs stream mode on one batch. Records that are not outbox
// INSERTs are skipped. The response lists, by sequence number, every record
// whose event is still pending: publishing failed after the retries, or it
// was published but marking it failed. Poison events are not listed.
//
// The error is non-nil only when a failed record has no sequence number to
// report; the whole batch is then retried.
func (r *Relay) HandleStream(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	resp := events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{}}
	var items []batch.Item
	var source []int // index in ev.Records of each item
	skipped := 0
	for i, rec := range ev.Records {
		item, ok := r.streamItem(ctx, rec)
		if !ok {
			skipped++
			continue
		}
		items = append(items, item)
		source = append(source, i)
	}

	items = r.current(ctx, items)
	m := metrics.New()
	outcomes := r.processor.Process(ctx, items, m)
	counts := map[batch.Status]int{}
	for k, o := range outcomes {
		counts[o.Status]++
		if o.Status != batch.LeftPending && !r.waitsForStream(items[k], o) {
			continue
		}
		seq := ev.Records[source[k]].Change.SequenceNumber
		if seq == "" {
			r.flush(ctx, m)
			return events.DynamoDBEventResponse{}, fmt.Errorf("stream record %s failed and has no sequence number to report; retrying the whole batch", ev.Records[source[k]].EventID)
		}
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: seq})
	}
	r.flush(ctx, m)
	r.log.InfoContext(ctx, "stream batch processed",
		"records", len(ev.Records), "outboxRecords", len(items), "skipped", skipped+counts[batch.Skipped],
		"published", counts[batch.Published], "poison", counts[batch.Poison], "waiting", counts[batch.Waiting],
		"batchItemFailures", len(resp.BatchItemFailures))
	return resp, nil
}

// waitsForStream reports whether an ordered event that waits for an
// earlier event of its key is retried by the stream (a batch item failure).
// An event registered on its key's cursor is not: the relay that publishes
// the earlier one publishes it next. One that could not be registered is,
// while it is young and its key is not held by a FAILED event: the earlier
// event is most likely in flight (in another shard's batch, or in this
// batch's retry), and the retry publishes it soon after. Retrying holds the shard's later records, so it lasts only
// while the event is younger than half the reconciler's minimum age; after
// that, and at once behind a FAILED event, the record is done with and the
// reconciler publishes the event when its turn comes, and no other key
// waits for it.
func (r *Relay) waitsForStream(it batch.Item, o batch.Outcome) bool {
	return o.Status == batch.Waiting && !o.Blocked && !o.Registered && r.now().Sub(pendingSince(it.Record)) < r.minAge/2
}

// current replaces the stream images of pending items with their current
// state, so that an event already published (by the reconciler, or by an
// earlier delivery of the record) is not published again. Young items are
// read, 100 per consistent BatchGetItem; an item held by the reconciler is
// left pending and retried. Items old enough for the reconciler to take
// them (half its minimum age) are held instead, with the same conditional
// hold as the reconciler's, so that exactly one of the two publishes them.
// All requests
// run at once: one round trip. When the read fails, the items are published
// from their images: the check avoids duplicates and must not stall the
// shard.
func (r *Relay) current(ctx context.Context, items []batch.Item) []batch.Item {
	now := r.now()
	var read, hold []int
	for i, it := range items {
		if it.Malformed != nil || it.Record.Status != outbox.StatusPending {
			continue
		}
		if since := pendingSince(it.Record); now.Sub(since) >= r.minAge/2 {
			hold = append(hold, i)
		} else {
			read = append(read, i)
		}
	}
	records := func(idx []int) []outbox.Record {
		rs := make([]outbox.Record, len(idx))
		for k, i := range idx {
			rs[k] = items[i].Record
		}
		return rs
	}
	var readItems []map[string]types.AttributeValue
	var readErrs []error
	var held []store.Held
	var wg sync.WaitGroup
	if len(read) > 0 {
		wg.Go(func() { readItems, readErrs = r.store.Current(ctx, records(read)) })
	}
	if len(hold) > 0 {
		wg.Go(func() {
			held = r.store.Hold(ctx, records(hold), r.hold.Within(ctx, now))
		})
	}
	wg.Wait()
	out := slices.Clone(items)
	unread := 0
	for k, i := range read {
		if readErrs[k] != nil {
			// The check only avoids duplicates: publish from the image
			// rather than stall the shard.
			if unread++; unread == 1 {
				r.log.WarnContext(ctx, "reading the current state of outbox items failed; publishing them from their stream images, which may publish an event twice",
					"error", readErrs[k], "hint", "the relay role may lack dynamodb:BatchGetItem on the table "+r.table.Name)
			}
			continue
		}
		out[i] = r.fresh(items[i], readItems[k], nil)
		if out[i].Record.Held(now) {
			markBusy(&out[i])
		}
	}
	for k, i := range hold {
		h := held[k]
		if h.Item != nil || h.Err != nil {
			out[i] = r.fresh(items[i], h.Item, h.Err)
			out[i].Held = h.Item != nil
			continue
		}
		// The condition failed: the item is settled, gone, or held.
		out[i] = r.fresh(items[i], h.Current, nil)
		markBusy(&out[i])
	}
	return out
}

// markBusy marks a pending item that another invocation holds. It stays
// pending and its record is retried (a batch item failure): the holder
// settles it meanwhile, or its hold ends and this relay takes it. Skipping
// it instead would leave it to the reconciler alone.
func markBusy(it *batch.Item) {
	if rec := it.Record; it.Skip == "" && it.Malformed == nil && rec.Status == outbox.StatusPending {
		it.Busy = "held by another invocation until " + time.UnixMilli(rec.NextAttemptAt).UTC().Format(outbox.TimeFormat) + "; retried"
	}
}

// fresh is the Item of the current state of it: item as read or held, nil
// when it is gone, or the error.
func (r *Relay) fresh(it batch.Item, item map[string]types.AttributeValue, err error) batch.Item {
	switch {
	case err != nil:
		it.Unavailable = err
		return it
	case item == nil:
		it.Skip = "the item is gone"
		return it
	}
	return batch.Parse(r.table, item)
}

// pendingSince is when a record became pending, as the reconciler sees it.
func pendingSince(rec outbox.Record) time.Time {
	if rec.PendingSince > 0 {
		return time.UnixMilli(rec.PendingSince)
	}
	return rec.OccurredAt
}

// streamItem returns the outbox item of a stream record, or false when the
// record is not an outbox INSERT.
func (r *Relay) streamItem(ctx context.Context, rec events.DynamoDBEventRecord) (batch.Item, bool) {
	if rec.EventName != string(events.DynamoDBOperationTypeInsert) {
		return batch.Item{}, false
	}
	sk, ok := streamrecord.String(rec.Change.Keys, r.table.SortKey)
	if !ok {
		sk, ok = streamrecord.String(rec.Change.NewImage, r.table.SortKey)
	}
	if !ok || !r.table.IsOutboxSortKey(sk) {
		return batch.Item{}, false
	}
	if rec.Change.NewImage == nil {
		r.log.WarnContext(ctx, "outbox stream record without a new image skipped; the stream view type must include new images (NEW_IMAGE or NEW_AND_OLD_IMAGES); the reconciler will publish the event",
			"sequenceNumber", rec.Change.SequenceNumber, "sortKey", sk)
		return batch.Item{}, false
	}
	image, err := streamrecord.Image(rec.Change.NewImage)
	if err != nil {
		keys, _ := streamrecord.Image(rec.Change.Keys)
		return batch.Malformed(r.table, keys, fmt.Errorf("unreadable stream image: %w", err)), true
	}
	return batch.Parse(r.table, image), true
}
