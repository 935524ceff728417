package targetkind

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
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
	// maxCallBytes, when set, is a queue's MaximumMessageSize: a
	// SendMessageBatch call whose bodies are longer in all is refused
	// whole, as SQS refuses it (BatchRequestTooLong).
	maxCallBytes int

	mu       sync.Mutex
	urls     []string // QueueUrl or TopicArn of each call
	sizes    []int    // entries of each call
	bytes    []int    // body bytes of each call
	accepted []message
}

// failingWith is a fake whose every entry fails with code, the sender's
// fault or not.
func failingWith(code string, sender bool) *fakeBatchTarget {
	return &fakeBatchTarget{fail: func(string) (string, bool) { return code, sender }}
}

// fakeEntry is one entry of a SendMessageBatch or PublishBatch call, and
// what became of it.
type fakeEntry struct {
	body, group, dedup *string
	attrs              map[string]string
	code               string
	sender             bool
}

// call accepts or fails the entries of one call to url.
func (f *fakeBatchTarget) call(url string, entries []fakeEntry) {
	f.delay()
	f.mu.Lock()
	defer f.mu.Unlock()
	total := 0
	for i := range entries {
		e := &entries[i]
		total += len(aws.ToString(e.body))
		if f.fail != nil {
			if e.code, e.sender = f.fail(aws.ToString(e.body)); e.code != "" {
				continue
			}
		}
		f.accepted = append(f.accepted, message{body: aws.ToString(e.body), group: aws.ToString(e.group), dedup: aws.ToString(e.dedup), attrs: e.attrs})
	}
	f.urls, f.sizes, f.bytes = append(f.urls, url), append(f.sizes, len(entries)), append(f.bytes, total)
}

func (f *fakeBatchTarget) delay() {
	if f.jitter {
		time.Sleep(time.Duration(rand.Int64N(int64(2 * time.Millisecond))))
	}
}

func (f *fakeBatchTarget) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	total := 0
	for _, e := range in.Entries {
		total += len(aws.ToString(e.MessageBody))
	}
	if f.maxCallBytes > 0 && total > f.maxCallBytes {
		return nil, &smithy.GenericAPIError{Code: "AWS.SimpleQueueService.BatchRequestTooLong", Message: "Batch requests cannot be longer than " + strconv.Itoa(f.maxCallBytes) + " bytes."}
	}
	entries := make([]fakeEntry, len(in.Entries))
	for i, e := range in.Entries {
		entries[i] = fakeEntry{body: e.MessageBody, group: e.MessageGroupId, dedup: e.MessageDeduplicationId, attrs: map[string]string{}}
		for k, v := range e.MessageAttributes {
			entries[i].attrs[k] = aws.ToString(v.StringValue)
		}
	}
	f.call(aws.ToString(in.QueueUrl), entries)
	out := &sqs.SendMessageBatchOutput{}
	for i, e := range entries {
		if e.code == "" {
			out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: in.Entries[i].Id, MessageId: aws.String("m")})
		} else {
			out.Failed = append(out.Failed, sqstypes.BatchResultErrorEntry{Id: in.Entries[i].Id, Code: aws.String(e.code), Message: aws.String("x"), SenderFault: e.sender})
		}
	}
	return out, nil
}

func (f *fakeBatchTarget) PublishBatch(_ context.Context, in *sns.PublishBatchInput, _ ...func(*sns.Options)) (*sns.PublishBatchOutput, error) {
	entries := make([]fakeEntry, len(in.PublishBatchRequestEntries))
	for i, e := range in.PublishBatchRequestEntries {
		entries[i] = fakeEntry{body: e.Message, group: e.MessageGroupId, dedup: e.MessageDeduplicationId, attrs: map[string]string{}}
		for k, v := range e.MessageAttributes {
			entries[i].attrs[k] = aws.ToString(v.StringValue)
		}
	}
	f.call(aws.ToString(in.TopicArn), entries)
	out := &sns.PublishBatchOutput{}
	for i, e := range entries {
		id := in.PublishBatchRequestEntries[i].Id
		if e.code == "" {
			out.Successful = append(out.Successful, snstypes.PublishBatchResultEntry{Id: id, MessageId: aws.String("m")})
		} else {
			out.Failed = append(out.Failed, snstypes.BatchResultErrorEntry{Id: id, Code: aws.String(e.code), Message: aws.String("x"), SenderFault: e.sender})
		}
	}
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

// errorClassCase is an entry error code a batch call returns and what the
// publisher makes of it: the status, the class and a part of the hint.
type errorClassCase struct {
	code   string
	sender bool
	status publish.Status
	class  retry.Class
	hint   string
}

// checkErrorClasses publishes, for each case, one record whose entry fails
// with the case's code, and checks the result.
func checkErrorClasses(t *testing.T, tests []errorClassCase, publishOne func(code string, sender bool) publish.Result) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			t.Parallel()
			res := publishOne(tt.code, tt.sender)
			if res.Status != tt.status || res.Class != tt.class || !strings.Contains(res.Hint, tt.hint) {
				t.Errorf("%+v; want %v, %s, hint with %q", res, tt.status, tt.class, tt.hint)
			}
		})
	}
}
