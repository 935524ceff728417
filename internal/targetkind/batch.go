package targetkind

import (
	"context"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// messageAttributes are r's message attributes (outbox.MessageAttributes),
// each made by value.
func messageAttributes[V any](r outbox.Record, value func(string) V) map[string]V {
	attrs := map[string]V{}
	for name, v := range r.MessageAttributes() {
		attrs[name] = value(v)
	}
	return attrs
}

// messageSize is what SNS and SQS count for a message: the body and, for
// each attribute, its name, data type and value (which parts returns).
func messageSize[V any](body *string, attrs map[string]V, parts func(V) (dataType, value *string, binary []byte)) int {
	n := len(aws.ToString(body))
	for name, v := range attrs {
		dataType, value, binary := parts(v)
		n += len(name) + len(aws.ToString(dataType)) + len(aws.ToString(value)) + len(binary)
	}
	return n
}

// idBatch is a batch call that names its entries by Id, their positions
// in the call (SNS PublishBatch, SQS SendMessageBatch), and what differs
// between the services: the entry of a record, its size, its group, and
// the call itself.
type idBatch[E any] struct {
	batcher publish.Batcher
	// limits are the kind's: the largest entry, and the entries and
	// total size of one call.
	limits outbox.Limits
	fifo   bool
	// format is the envelope of the message bodies.
	format outbox.Format
	// entry is the entry of a record whose message body is body.
	entry func(r outbox.Record, body string, fifo bool) E
	size  func(E) int
	group func(E) string
	setID func(*E, string)
	// call sends the entries, their ids set, in one call.
	call func(ctx context.Context, entries []E) ([]publish.EntryResult, error)
}

// publish sends the records in calls of up to 10 entries and
// limits.BatchBytes, calls in parallel; to a FIFO target, the entries of
// one group one call after the other, in order. An entry over
// limits.MessageBytes is not sent.
func (c idBatch[E]) publish(ctx context.Context, records []outbox.Record) []publish.Result {
	results := make([]publish.Result, len(records))
	entries := make([]E, len(records))
	var sizes, index []int
	var groups []string
	for i, r := range records {
		entries[i] = c.entry(r, string(r.MessageIn(c.format)), c.fifo)
		size := c.size(entries[i])
		if size > c.limits.MessageBytes {
			results[i] = publish.TooLarge(c.batcher.Target, size, c.limits.MessageBytes)
			continue
		}
		sizes, index, groups = append(sizes, size), append(index, i), append(groups, c.group(entries[i]))
	}
	send := func(ctx context.Context, idx []int) ([]publish.EntryResult, error) {
		batch := make([]E, len(idx))
		for k, i := range idx {
			batch[k] = entries[i]
			c.setID(&batch[k], strconv.Itoa(k)) // unique within the call
		}
		return c.call(ctx, batch)
	}
	if c.fifo {
		c.batcher.RunLanes(ctx, fifoLanes(groups, sizes, index, c.limits.BatchBytes, c.batcher.Concurrency), send, results)
	} else {
		c.batcher.Run(ctx, publish.AcceptedChunks(sizes, index, c.limits.BatchBytes), send, results)
	}
	return results
}
