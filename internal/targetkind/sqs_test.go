package targetkind

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

const (
	testQueue     = "arn:aws:sqs:eu-west-1:123456789012:orders"
	testFIFOQueue = "arn:aws:sqs:eu-west-1:123456789012:orders.fifo"
)

func TestQueueURL(t *testing.T) {
	t.Parallel()
	for arn, want := range map[string]string{
		testFIFOQueue: "https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo",
		"arn:aws-cn:sqs:cn-north-1:123456789012:q": "https://sqs.cn-north-1.amazonaws.com.cn/123456789012/q",
	} {
		if got := QueueURL(arn); got != want {
			t.Errorf("QueueURL(%s) = %s, want %s", arn, got, want)
		}
	}
}

// TestSQSSendsEnvelopes: 25 events go out in calls of 10, 10 and 5 to the
// queue's URL; each body is the published event, with the source and
// detail type as message attributes, and no FIFO fields on a standard
// queue.
func TestSQSSendsEnvelopes(t *testing.T) {
	t.Parallel()
	fake := &fakeBatchTarget{}
	p := &SQSPublisher{Client: fake, QueueARN: testQueue, Retry: noWait, Concurrency: 1}
	records := aggregateRecords([]string{"order-1"}, 25, `{"total":3}`)
	for i, r := range p.Publish(context.Background(), records) {
		if r.Status != publish.Published {
			t.Fatalf("record %d: %+v", i, r)
		}
	}
	if !slices.Equal(fake.sizes, []int{10, 10, 5}) || fake.urls[0] != QueueURL(testQueue) {
		t.Errorf("calls %v to %v; want [10 10 5] to %s", fake.sizes, fake.urls, QueueURL(testQueue))
	}
	for i, m := range fake.accepted {
		var ev outbox.Envelope
		if err := json.Unmarshal([]byte(m.body), &ev); err != nil || ev.Detail.Metadata.EventID != records[i].EventID || string(ev.Detail.Data) != `{"total":3}` {
			t.Fatalf("message %d: %s (%v)", i, m.body, err)
		}
		if m.attrs[outbox.MessageAttrSource] != "com.example.orders" || m.attrs[outbox.MessageAttrDetailType] != "OrderPlaced" || m.group != "" || m.dedup != "" {
			t.Fatalf("message %d: attributes %v, group %q, dedup %q", i, m.attrs, m.group, m.dedup)
		}
	}
}

// TestSQSBatchBytes: no call carries more than the kind's batch total; a
// 900 KB event is sent whole, and an event over the limit of one message
// is rejected without being sent.
func TestSQSBatchBytes(t *testing.T) {
	t.Parallel()
	limits := sqsKind{}.Limits()
	fake := &fakeBatchTarget{}
	p := &SQSPublisher{Client: fake, QueueARN: testQueue, Retry: noWait}
	records := aggregateRecords([]string{"order-1"}, 5, `{"blob":"`+strings.Repeat("x", 300*1024)+`"}`)
	records = append(records, aggregateRecords([]string{"order-3"}, 1, `{"blob":"`+strings.Repeat("x", 900*1024)+`"}`)...)
	records = append(records, aggregateRecords([]string{"order-2"}, 1, `{"blob":"`+strings.Repeat("x", limits.MessageBytes)+`"}`)...)
	res := p.Publish(context.Background(), records)
	for _, b := range fake.bytes {
		if b > limits.BatchBytes {
			t.Errorf("a call carried %d bytes, over %d", b, limits.BatchBytes)
		}
	}
	if len(fake.accepted) != 6 || res[5].Status != publish.Published || res[6].Status != publish.Rejected || res[6].Class != retry.ClassPoison ||
		!strings.Contains(res[6].Reason, "SQS accepts at most "+strconv.Itoa(limits.MessageBytes)) {
		t.Errorf("accepted %d, 900 KB %+v, last %+v; want 6 sent and the oversize event rejected", len(fake.accepted), res[5], res[6])
	}
	if slices.Max(fake.bytes) <= 256*1024 {
		t.Errorf("no call carried more than 256 KiB (%v): the relay still packs for the old limit", fake.bytes)
	}
}

// TestSQSBatchTooLongForTheQueue: a queue whose MaximumMessageSize is
// under the kind's batch total (an older queue's 256 KiB) refuses a call
// whole; the relay sends it again in halves, and every message that fits
// the queue is delivered, in order.
func TestSQSBatchTooLongForTheQueue(t *testing.T) {
	t.Parallel()
	fake := &fakeBatchTarget{maxCallBytes: 256 * 1024}
	p := &SQSPublisher{Client: fake, QueueARN: testFIFOQueue, Retry: noWait}
	records := aggregateRecords([]string{"order-1"}, 8, `{"blob":"`+strings.Repeat("x", 60*1024)+`"}`)
	res := p.Publish(context.Background(), records)
	for i, r := range res {
		if r.Status != publish.Published {
			t.Fatalf("event %d: %+v", i, r)
		}
	}
	if len(fake.accepted) != len(records) {
		t.Fatalf("accepted %d of %d", len(fake.accepted), len(records))
	}
	for i, m := range fake.accepted {
		if m.dedup != records[i].EventID {
			t.Fatalf("message %d is event %s, want %s: the halves broke the group's order", i, m.dedup, records[i].EventID)
		}
	}
}

// TestSQSErrorClasses: only a fault of the message is poison; access, a
// missing queue and KMS stay pending with a hint; throttling and server
// faults are retried.
func TestSQSErrorClasses(t *testing.T) {
	t.Parallel()
	tests := []errorClassCase{
		{"InvalidMessageContents", true, publish.Rejected, retry.ClassPoison, ""},
		{"InvalidParameterValue", true, publish.Rejected, retry.ClassPoison, ""},
		{"AccessDenied", true, publish.Failed, retry.ClassEnvironment, "may lack sqs:SendMessage on the queue " + testQueue},
		{"KmsAccessDenied", true, publish.Failed, retry.ClassEnvironment, "kms:GenerateDataKey"},
		{"KmsDisabled", true, publish.Failed, retry.ClassEnvironment, "KMS key of the queue"},
		{"AWS.SimpleQueueService.NonExistentQueue", true, publish.Failed, retry.ClassEnvironment, "may not exist"},
		{"KmsThrottled", true, publish.Failed, retry.ClassThrottling, ""},
		{"RequestThrottled", true, publish.Failed, retry.ClassThrottling, ""},
		{"Whatever", true, publish.Failed, retry.ClassEnvironment, "unknown error code"},
		{"Whatever", false, publish.Failed, retry.ClassTransient, ""}, // a server fault
	}
	checkErrorClasses(t, tests, func(code string, sender bool) publish.Result {
		p := &SQSPublisher{Client: failingWith(code, sender), QueueARN: testQueue, Retry: noWait}
		return p.Publish(context.Background(), aggregateRecords([]string{"o"}, 1, `{}`))[0]
	})
}

// TestFIFOGroupsAndOrder: to a FIFO queue and a FIFO topic, each message's
// group is its item's partition key and its deduplication id its event id,
// and every group's messages are accepted in the order written, with
// batches of 10 and the groups in parallel.
func TestFIFOGroupsAndOrder(t *testing.T) {
	t.Parallel()
	aggregates := []string{"order-1", "order-2", "order 3 with spaces", strings.Repeat("z", 200)}
	records := aggregateRecords(aggregates, 30, `{}`)
	for _, tc := range []struct {
		name string
		pub  func(*fakeBatchTarget) publish.Publisher
	}{
		{"sqs", func(f *fakeBatchTarget) publish.Publisher {
			return &SQSPublisher{Client: f, QueueARN: testFIFOQueue, Retry: noWait}
		}},
		{"sns", func(f *fakeBatchTarget) publish.Publisher {
			return &SNSPublisher{Client: f, TopicARN: "arn:aws:sns:eu-west-1:123456789012:orders.fifo", Retry: noWait}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fake := &fakeBatchTarget{jitter: true}
			for i, r := range tc.pub(fake).Publish(context.Background(), records) {
				if r.Status != publish.Published {
					t.Fatalf("record %d: %+v", i, r)
				}
			}
			next := map[string]int{} // group: index of its next record
			byGroup := map[string][]outbox.Record{}
			for _, r := range records {
				byGroup[MessageGroupID(r)] = append(byGroup[MessageGroupID(r)], r)
			}
			for _, m := range fake.accepted {
				if !validFIFOID(m.group) || !validFIFOID(m.dedup) {
					t.Fatalf("group %q or deduplication id %q is not a valid FIFO id", m.group, m.dedup)
				}
				want := byGroup[m.group][next[m.group]]
				if m.dedup != MessageDeduplicationID(want) {
					t.Fatalf("group %q: got %s, want %s next", m.group, m.dedup, want.EventID)
				}
				next[m.group]++
			}
			if len(fake.accepted) != len(records) || len(byGroup) != len(aggregates) || slices.Max(fake.sizes) != publish.MaxBatchEntries {
				t.Errorf("accepted %d of %d in %d groups, calls %v", len(fake.accepted), len(records), len(byGroup), fake.sizes)
			}
		})
	}
}

// TestFIFOID: a partition key that SQS and SNS accept is the group as is;
// another is hashed, and equal keys hash alike.
func TestFIFOID(t *testing.T) {
	t.Parallel()
	if got := fifoID("order#42"); got != "order#42" {
		t.Errorf("fifoID(order#42) = %q", got)
	}
	for _, v := range []string{"order 42", "ordré", strings.Repeat("a", 129), ""} {
		got := fifoID(v)
		if got == v || !validFIFOID(got) || got != fifoID(v) {
			t.Errorf("fifoID(%q) = %q: want a stable valid id other than the key", v, got)
		}
	}
}

// TestMessageGroupIDOfOrderedEvent: an ordered event's group is its
// ordering key, whatever its partition key; an unordered one's its
// partition key.
func TestMessageGroupIDOfOrderedEvent(t *testing.T) {
	t.Parallel()
	ordered := outbox.Record{PartitionKey: "OUTBOX#01J", OrderingKey: "account-7", Sequence: 3}
	if got := MessageGroupID(ordered); got != "account-7" {
		t.Errorf("group of an ordered event = %q, want its ordering key account-7", got)
	}
	if got := MessageGroupID(outbox.Record{PartitionKey: "order#42"}); got != "order#42" {
		t.Errorf("group of an unordered event = %q, want its partition key", got)
	}
}

// TestSettingsFIFO: only FIFO queues and topics are FIFO targets; a bus
// whose name ends like one is not.
func TestSettingsFIFO(t *testing.T) {
	t.Parallel()
	for s, want := range map[Settings]bool{
		{Type: SQS, QueueARN: "arn:aws:sqs:us-east-1:123456789012:orders.fifo"}: true,
		{Type: SNS, TopicARN: "arn:aws:sns:us-east-1:123456789012:orders.fifo"}: true,
		{Type: SQS, QueueARN: "arn:aws:sqs:us-east-1:123456789012:orders"}:      false,
		{Type: SNS, TopicARN: "arn:aws:sns:us-east-1:123456789012:orders"}:      false,
		{Type: EventBridge, EventBus: "orders.fifo"}:                            false,
	} {
		if got := s.FIFO(); got != want {
			t.Errorf("%s: FIFO() = %t, want %t", s.Describe(), got, want)
		}
	}
}

// TestFIFOLanes: distinct groups fill every call, one lane each; a group
// with more events than a call holds keeps them in one lane, in order.
func TestFIFOLanes(t *testing.T) {
	t.Parallel()
	lanesOf := func(groups []string) [][][]int {
		sizes, index := make([]int, len(groups)), make([]int, len(groups))
		for i := range groups {
			sizes[i], index[i] = 1, i
		}
		return fifoLanes(groups, sizes, index, sqsKind{}.Limits().BatchBytes, 0)
	}
	var distinct []string
	for i := range 100 {
		distinct = append(distinct, "order-"+strconv.Itoa(i))
	}
	lanes := lanesOf(distinct)
	if len(lanes) != 10 {
		t.Fatalf("%d lanes for 100 groups, want 10", len(lanes))
	}
	for _, l := range lanes {
		if len(l) != 1 || len(l[0]) != publish.MaxBatchEntries {
			t.Errorf("lane %v: want one full call", l)
		}
	}
	hot := append(slices.Repeat([]string{"hot"}, 25), distinct[:15]...)
	for _, l := range lanesOf(hot) {
		var seq []int
		for _, c := range l {
			seq = append(seq, c...)
		}
		if !slices.IsSorted(seq) {
			t.Errorf("lane %v is out of order", l)
		}
		if slices.Contains(seq, 0) && !slices.Contains(seq, 24) {
			t.Errorf("the hot group is split across lanes: %v", l)
		}
	}
}

// TestMessageSizeIsTheContracts: the size SNS and SQS count for the
// message the relay sends, body and attributes, is the size the writer
// checks (outbox.Record.MessageSizeIn), in every format, with and without
// a trace context, so that an event the writer accepts is never refused
// by a topic or a queue for its size.
func TestMessageSizeIsTheContracts(t *testing.T) {
	t.Parallel()
	r := aggregateRecords([]string{"order-1"}, 1, `{"total":3}`)[0]
	traced := r
	traced.TraceParent, traced.TraceState = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=blue"
	for _, rec := range []outbox.Record{r, traced} {
		for _, f := range outbox.Formats {
			body := string(rec.MessageIn(f))
			if got, want := snsMessageSize(snsEntry(rec, body, true)), rec.MessageSizeIn(f); got != want {
				t.Errorf("SNS message in %s: %d bytes, the writer counts %d", f, got, want)
			}
			if got, want := sqsMessageSize(sqsEntry(rec, body, true)), rec.MessageSizeIn(f); got != want {
				t.Errorf("SQS message in %s: %d bytes, the writer counts %d", f, got, want)
			}
		}
	}
}
