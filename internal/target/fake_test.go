package target

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// message is what a fake SQS queue or SNS topic accepted.
type message struct {
	body, group, dedup string
	attrs              map[string]string
}

// fakeBatchTarget is an SQS queue and an SNS topic in memory: it keeps the
// messages it accepts in the order it accepts them, and fails the entries
// that fail says fail.
type fakeBatchTarget struct {
	// fail returns the error code of an entry ("" for success) and whether
	// it is the sender's fault, from the entry's body.
	fail func(body string) (code string, sender bool)
	// jitter, when set, delays each call by up to 2 ms, as a network
	// does, so that calls in parallel finish in any order.
	jitter bool

	mu       sync.Mutex
	urls     []string // QueueUrl or TopicArn of each call
	sizes    []int    // entries of each call
	bytes    []int    // body bytes of each call
	accepted []message
}

func (f *fakeBatchTarget) entry(id, body, group, dedup *string, attrs map[string]string) (ok bool, code string, sender bool) {
	if f.fail != nil {
		if code, sender = f.fail(aws.ToString(body)); code != "" {
			return false, code, sender
		}
	}
	f.accepted = append(f.accepted, message{body: aws.ToString(body), group: aws.ToString(group), dedup: aws.ToString(dedup), attrs: attrs})
	return true, "", false
}

func (f *fakeBatchTarget) delay() {
	if f.jitter {
		time.Sleep(time.Duration(rand.Int64N(int64(2 * time.Millisecond))))
	}
}

func (f *fakeBatchTarget) call(url string, n, bytes int) {
	f.urls, f.sizes, f.bytes = append(f.urls, url), append(f.sizes, n), append(f.bytes, bytes)
}

func (f *fakeBatchTarget) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	f.delay()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &sqs.SendMessageBatchOutput{}
	total := 0
	for _, e := range in.Entries {
		total += len(aws.ToString(e.MessageBody))
		attrs := map[string]string{}
		for k, v := range e.MessageAttributes {
			attrs[k] = aws.ToString(v.StringValue)
		}
		if ok, code, sender := f.entry(e.Id, e.MessageBody, e.MessageGroupId, e.MessageDeduplicationId, attrs); ok {
			out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: e.Id, MessageId: aws.String("m")})
		} else {
			out.Failed = append(out.Failed, sqstypes.BatchResultErrorEntry{Id: e.Id, Code: aws.String(code), Message: aws.String("x"), SenderFault: sender})
		}
	}
	f.call(aws.ToString(in.QueueUrl), len(in.Entries), total)
	return out, nil
}

func (f *fakeBatchTarget) PublishBatch(_ context.Context, in *sns.PublishBatchInput, _ ...func(*sns.Options)) (*sns.PublishBatchOutput, error) {
	f.delay()
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &sns.PublishBatchOutput{}
	total := 0
	for _, e := range in.PublishBatchRequestEntries {
		total += len(aws.ToString(e.Message))
		attrs := map[string]string{}
		for k, v := range e.MessageAttributes {
			attrs[k] = aws.ToString(v.StringValue)
		}
		if ok, code, sender := f.entry(e.Id, e.Message, e.MessageGroupId, e.MessageDeduplicationId, attrs); ok {
			out.Successful = append(out.Successful, snstypes.PublishBatchResultEntry{Id: e.Id, MessageId: aws.String("m")})
		} else {
			out.Failed = append(out.Failed, snstypes.BatchResultErrorEntry{Id: e.Id, Code: aws.String(code), Message: aws.String("x"), SenderFault: sender})
		}
	}
	f.call(aws.ToString(in.TopicArn), len(in.PublishBatchRequestEntries), total)
	return out, nil
}

// noWait retries at once.
var noWait = retry.Policy{Attempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }}

// aggregateRecords are n records of each aggregate, in the order an
// application wrote them: aggregate by aggregate, interleaved.
func aggregateRecords(aggregates []string, n int, detail string) []outbox.Record {
	var rs []outbox.Record
	for i := range n {
		for _, a := range aggregates {
			rs = append(rs, outbox.Record{
				PartitionKey: a, EventID: "01JDQ8Z7K5V6W3X2Y1Z0" + a + strconv.Itoa(i),
				Source: "com.example.orders", DetailType: "OrderPlaced", Detail: []byte(detail), OccurredAt: time.Unix(1700000000, 0),
			})
		}
	}
	return rs
}
