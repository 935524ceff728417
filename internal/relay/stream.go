package relay

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/pipeline"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/streamrecord"
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
	var items []pipeline.Item
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

	m := metrics.New()
	outcomes := r.pipeline.Process(ctx, items, m)
	counts := map[pipeline.Status]int{}
	for k, o := range outcomes {
		counts[o.Status]++
		if o.Status != pipeline.LeftPending {
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
		"records", len(ev.Records), "outboxRecords", len(items), "skipped", skipped+counts[pipeline.Skipped],
		"published", counts[pipeline.Published], "poison", counts[pipeline.Poison],
		"batchItemFailures", len(resp.BatchItemFailures))
	return resp, nil
}

// streamItem returns the outbox item of a stream record, or false when the
// record is not an outbox INSERT.
func (r *Relay) streamItem(ctx context.Context, rec events.DynamoDBEventRecord) (pipeline.Item, bool) {
	if rec.EventName != string(events.DynamoDBOperationTypeInsert) {
		return pipeline.Item{}, false
	}
	sk, ok := streamrecord.String(rec.Change.Keys, r.table.SortKey)
	if !ok {
		sk, ok = streamrecord.String(rec.Change.NewImage, r.table.SortKey)
	}
	if !ok || !r.table.IsOutboxSortKey(sk) {
		return pipeline.Item{}, false
	}
	if rec.Change.NewImage == nil {
		r.log.WarnContext(ctx, "outbox stream record without a new image skipped; the stream view type must include new images (NEW_IMAGE or NEW_AND_OLD_IMAGES); the reconciler will publish the event",
			"sequenceNumber", rec.Change.SequenceNumber, "sortKey", sk)
		return pipeline.Item{}, false
	}
	image, err := streamrecord.Image(rec.Change.NewImage)
	if err != nil {
		keys, _ := streamrecord.Image(rec.Change.Keys)
		return pipeline.Malformed(r.table, keys, fmt.Errorf("unreadable stream image: %w", err)), true
	}
	return pipeline.Parse(r.table, image), true
}
