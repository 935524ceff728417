package operate

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
)

// FailedBatch is what the event source mapping sends to the dead-letter
// queue about a batch that ran out of retries or age: metadata only, not the
// records.
type FailedBatch struct {
	RequestContext struct {
		Condition              string `json:"condition"`
		ApproximateInvokeCount int    `json:"approximateInvokeCount"`
	} `json:"requestContext"`
	Timestamp string `json:"timestamp"`
	Info      struct {
		ShardID                         string `json:"shardId"`
		StartSequenceNumber             string `json:"startSequenceNumber"`
		EndSequenceNumber               string `json:"endSequenceNumber"`
		ApproximateArrivalOfFirstRecord string `json:"approximateArrivalOfFirstRecord"`
		ApproximateArrivalOfLastRecord  string `json:"approximateArrivalOfLastRecord"`
		BatchSize                       int    `json:"batchSize"`
		StreamArn                       string `json:"streamArn"`
	} `json:"DDBStreamBatchInfo"`
}

// lastArrival is when the batch's last record reached the stream: every
// event of the batch was written before.
func (b FailedBatch) lastArrival() (time.Time, bool) {
	t, err := time.Parse(time.RFC3339Nano, b.Info.ApproximateArrivalOfLastRecord)
	return t, err == nil
}

// DLQMessage is one message of the dead-letter queue.
type DLQMessage struct {
	Batch FailedBatch
	// Unreadable is set when the body is not a batch's metadata.
	Unreadable bool
	// Settled is set when every event the batch can hold is published.
	Settled bool
	// Deleted is set when the message was deleted.
	Deleted bool
	receipt string
}

// RedriveOptions configure Redrive.
type RedriveOptions struct {
	// Visibility is how long the messages stay hidden from other readers
	// while Redrive works; default 5 minutes.
	Visibility time.Duration
	// DryRun reports the batches and changes nothing.
	DryRun bool
	// Batches, when not nil, receives the batches read, before anything
	// is republished.
	Batches func([]DLQMessage)
	// Report, when not nil, receives each reconciler run's report.
	Report func(reconcile.Report)
}

// RedriveResult says what Redrive did.
type RedriveResult struct {
	Messages  []DLQMessage
	Reconcile reconcile.Report
	// Pending counts the events still pending that the unsettled batches
	// may hold.
	Pending int
	// InFlight counts the messages that another reader holds, when none
	// could be read.
	InFlight int
}

// release makes the messages not deleted visible again.
func (c *Clients) release(ctx context.Context, url string, msgs []DLQMessage) {
	for _, m := range msgs {
		if !m.Deleted {
			_, _ = c.SQS.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String(m.receipt), VisibilityTimeout: 0})
		}
	}
}

// Redrive reads the dead-letter queue's batch metadata, runs the reconciler
// for the events still pending, and deletes each message once no event that
// its batch can hold is pending: every event written before the batch's
// last record reached the stream is published.
func (c *Clients) Redrive(ctx context.Context, p *Pipeline, o RedriveOptions) (RedriveResult, error) {
	if o.Visibility <= 0 {
		o.Visibility = 5 * time.Minute
	}
	// The dead-letter queue holds the batches of this Region's mapping,
	// whose filter passes only this Region's events.
	scope, err := p.originScope(Origins{})
	if err != nil {
		return RedriveResult{}, err
	}
	url, err := c.queueURL(ctx, p)
	if err != nil {
		return RedriveResult{}, err
	}
	msgs, err := c.receiveAll(ctx, p, url, o.Visibility)
	if err != nil {
		return RedriveResult{}, err
	}
	res := RedriveResult{Messages: msgs}
	if o.Batches != nil {
		o.Batches(msgs)
	}
	if len(msgs) == 0 {
		var q QueueStatus
		err := c.queueStatus(ctx, p, &q)
		res.InFlight = q.InFlight
		return res, err
	}
	// Whatever is not deleted is visible again at the end, for the alarm
	// and the next reader.
	defer c.release(context.WithoutCancel(ctx), url, res.Messages)
	if o.DryRun {
		return res, nil
	}
	if res.Reconcile, err = c.Reconcile(ctx, p, o.Report); err != nil {
		return res, err
	}
	for i := range res.Messages {
		m := &res.Messages[i]
		last, ok := m.Batch.lastArrival()
		if m.Unreadable || !ok {
			continue
		}
		// Arrival times have a precision of one second.
		n, _, err := c.pendingIn(ctx, p.pending(), scope, last.Add(time.Second))
		if err != nil {
			return res, err
		}
		if n > 0 {
			res.Pending = max(res.Pending, n)
			continue
		}
		m.Settled = true
		if _, err := c.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String(m.receipt)}); err != nil {
			return res, call("sqs:DeleteMessage", "queue "+p.Names.DeadLetterQueue, err)
		}
		m.Deleted = true
	}
	return res, nil
}

// receiveAll receives every visible message of the queue, hiding each for
// visibility.
func (c *Clients) receiveAll(ctx context.Context, p *Pipeline, url string, visibility time.Duration) ([]DLQMessage, error) {
	var msgs []DLQMessage
	for {
		out, err := c.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(url), MaxNumberOfMessages: 10,
			VisibilityTimeout: int32(visibility.Seconds()), WaitTimeSeconds: 0,
		})
		if err != nil {
			return msgs, call("sqs:ReceiveMessage", "queue "+p.Names.DeadLetterQueue, err)
		}
		if len(out.Messages) == 0 {
			return msgs, nil
		}
		for _, m := range out.Messages {
			d := DLQMessage{receipt: aws.ToString(m.ReceiptHandle)}
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &d.Batch); err != nil || d.Batch.Info.ShardID == "" {
				d.Unreadable = true
			}
			msgs = append(msgs, d)
		}
	}
}

// String describes the batch of m.
func (m DLQMessage) String() string {
	if m.Unreadable {
		return "a message that is not a stream batch's metadata (left in the queue)"
	}
	b := m.Batch.Info
	return fmt.Sprintf("shard %s, sequence numbers %s to %s, %d records, arrived %s to %s, %s after %d invocations",
		b.ShardID, b.StartSequenceNumber, b.EndSequenceNumber, b.BatchSize,
		b.ApproximateArrivalOfFirstRecord, b.ApproximateArrivalOfLastRecord,
		m.Batch.RequestContext.Condition, m.Batch.RequestContext.ApproximateInvokeCount)
}

// dlqMessageJSON is a DLQMessage as `outbox redrive --json` lists it.
type dlqMessageJSON struct {
	ShardID             string `json:"shardId"`
	StartSequenceNumber string `json:"startSequenceNumber"`
	EndSequenceNumber   string `json:"endSequenceNumber"`
	BatchSize           int    `json:"batchSize"`
	FirstArrival        string `json:"firstArrival"`
	LastArrival         string `json:"lastArrival"`
	Condition           string `json:"condition"`
	InvokeCount         int    `json:"invokeCount"`
	Unreadable          bool   `json:"unreadable"`
	Settled             bool   `json:"settled"`
	Deleted             bool   `json:"deleted"`
}

// MarshalJSON writes the message as `outbox redrive --json` lists it.
func (m DLQMessage) MarshalJSON() ([]byte, error) {
	b, rc := m.Batch.Info, m.Batch.RequestContext
	return json.Marshal(dlqMessageJSON{b.ShardID, b.StartSequenceNumber, b.EndSequenceNumber, b.BatchSize, b.ApproximateArrivalOfFirstRecord,
		b.ApproximateArrivalOfLastRecord, rc.Condition, rc.ApproximateInvokeCount, m.Unreadable, m.Settled, m.Deleted})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (m *DLQMessage) UnmarshalJSON(data []byte) error {
	var in dlqMessageJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	*m = DLQMessage{Unreadable: in.Unreadable, Settled: in.Settled, Deleted: in.Deleted}
	b := &m.Batch.Info
	b.ShardID, b.StartSequenceNumber, b.EndSequenceNumber, b.BatchSize = in.ShardID, in.StartSequenceNumber, in.EndSequenceNumber, in.BatchSize
	b.ApproximateArrivalOfFirstRecord, b.ApproximateArrivalOfLastRecord = in.FirstArrival, in.LastArrival
	m.Batch.RequestContext.Condition, m.Batch.RequestContext.ApproximateInvokeCount = in.Condition, in.InvokeCount
	return nil
}
