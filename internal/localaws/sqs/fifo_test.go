package sqs_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sqs"
)

func TestFifoQueueAttributes(t *testing.T) { eachProtocol(t, testFifoQueueAttributes) }

func TestFifoSendValidation(t *testing.T) { eachProtocol(t, testFifoSendValidation) }

func TestFifoGroupOrderAndVisibility(t *testing.T) { eachProtocol(t, testFifoGroupOrderAndVisibility) }

func TestFifoDeduplication(t *testing.T) { eachProtocol(t, testFifoDeduplication) }

func TestFifoReceiveRequestAttemptID(t *testing.T) { eachProtocol(t, testFifoReceiveRequestAttemptID) }

func TestFifoDeadLetterQueue(t *testing.T) { eachProtocol(t, testFifoDeadLetterQueue) }

func TestFifoLongPollWakesOnDelete(t *testing.T) { eachProtocol(t, testFifoLongPollWakesOnDelete) }

func fifoQueue(t *testing.T, c *awssqs.Client, name string, attrs map[string]string) string {
	t.Helper()
	all := map[string]string{"FifoQueue": "true"}
	for k, v := range attrs {
		all[k] = v
	}
	return createQueue(t, c, name, all)
}

func testFifoQueueAttributes(t *testing.T, p protocol) {
	_, c, _ := startWithClock(t, p)
	ctx := context.Background()
	create := func(name string, attrs map[string]string) error {
		_, err := c.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
		return err
	}
	localawstest.WantCode(t, create("orders.fifo", nil), "InvalidParameterValue", "a .fifo name without FifoQueue")
	localawstest.WantCode(t, create("orders", map[string]string{"FifoQueue": "true"}), "InvalidParameterValue", "FifoQueue without a .fifo name")
	localawstest.WantCode(t, create("orders", map[string]string{"ContentBasedDeduplication": "true"}), "InvalidAttributeName", "ContentBasedDeduplication on a standard queue")
	localawstest.WantCode(t, create("orders.fifo", map[string]string{"FifoQueue": "true", "FifoThroughputLimit": "perMessageGroupId"}),
		"InvalidAttributeValue", "perMessageGroupId with the queue deduplication scope")
	localawstest.WantCode(t, create("orders.fifo", map[string]string{"FifoQueue": "true", "DeduplicationScope": "topic"}), "InvalidAttributeValue", "an unknown scope")
	if err := create("plain", map[string]string{"FifoQueue": "false"}); err != nil {
		t.Fatalf("FifoQueue=false on a standard queue: %v", err)
	}

	url := fifoQueue(t, c, "orders.fifo", nil)
	wantQueueAttributes(t, c, url, "a new FIFO queue", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "false",
		"DeduplicationScope": "queue", "FifoThroughputLimit": "perQueue"})
	high := map[string]string{"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId", "ContentBasedDeduplication": "true"}
	if _, err := c.SetQueueAttributes(ctx, &awssqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: high}); err != nil {
		t.Fatalf("enabling high throughput: %v", err)
	}
	wantQueueAttributes(t, c, url, "high throughput", high)
	_, err := c.SetQueueAttributes(ctx, &awssqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{"DeduplicationScope": "queue"}})
	localawstest.WantCode(t, err, "InvalidAttributeValue", "the queue scope under perMessageGroupId")
	_, err = c.SetQueueAttributes(ctx, &awssqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{"FifoQueue": "false"}})
	localawstest.WantCode(t, err, "InvalidAttributeName", "changing FifoQueue")
	got := queueAttributes(t, c, url, types.QueueAttributeNameFifoQueue, types.QueueAttributeNameDeduplicationScope)
	if len(got) != 2 || got["FifoQueue"] != "true" || got["DeduplicationScope"] != "messageGroup" {
		t.Fatalf("named FIFO attributes: %v", got)
	}
}

func testFifoSendValidation(t *testing.T, p protocol) {
	_, c, _ := startWithClock(t, p)
	ctx := context.Background()
	url := aws.String(fifoQueue(t, c, "strict.fifo", nil))
	_, err := c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("x"), MessageDeduplicationId: aws.String("d")})
	localawstest.WantCode(t, err, "MissingParameter", "a send without MessageGroupId")
	_, err = c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("x"), MessageGroupId: aws.String("g")})
	localawstest.WantCode(t, err, "InvalidParameterValue", "a send without a deduplication id")
	_, err = c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("x"), MessageGroupId: aws.String("g"),
		MessageDeduplicationId: aws.String("d"), DelaySeconds: 5})
	localawstest.WantCode(t, err, "InvalidParameterValue", "a per-message delay")
	batch, err := c.SendMessageBatch(ctx, &awssqs.SendMessageBatchInput{QueueUrl: url, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("ok"), MessageBody: aws.String("x"), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("d")},
		{Id: aws.String("nogroup"), MessageBody: aws.String("x"), MessageDeduplicationId: aws.String("e")},
		{Id: aws.String("nodedup"), MessageBody: aws.String("x"), MessageGroupId: aws.String("g")},
	}})
	if err != nil || len(batch.Successful) != 1 || len(batch.Failed) != 2 {
		t.Fatalf("batch: %+v %v", batch, err)
	}
	codes := map[string]string{}
	for _, f := range batch.Failed {
		codes[*f.Id] = *f.Code
		if !f.SenderFault {
			t.Errorf("entry %s: not a sender fault", *f.Id)
		}
	}
	if codes["nogroup"] != "MissingParameter" || codes["nodedup"] != "InvalidParameterValue" {
		t.Fatalf("batch failures %v", codes)
	}
	if aws.ToString(batch.Successful[0].SequenceNumber) == "" {
		t.Fatal("a FIFO batch entry without SequenceNumber")
	}
	standard := aws.String(createQueue(t, c, "standard", nil))
	_, err = c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: standard, MessageBody: aws.String("x"), MessageDeduplicationId: aws.String("d")})
	localawstest.WantCode(t, err, "InvalidParameterValue", "a deduplication id on a standard queue")
	out, err := c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: standard, MessageBody: aws.String("x")})
	if err != nil || out.SequenceNumber != nil {
		t.Fatalf("a standard send: %+v %v", out, err)
	}
}

// sendFifo sends body to group with body as its deduplication id and
// returns the result.
func sendFifo(t *testing.T, c *awssqs.Client, url, group, body string) *awssqs.SendMessageOutput {
	t.Helper()
	out, err := c.SendMessage(context.Background(), &awssqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body),
		MessageGroupId: aws.String(group), MessageDeduplicationId: aws.String(body)})
	if err != nil {
		t.Fatalf("send %s to %s: %v", body, group, err)
	}
	return out
}

// startFifoGroup starts an SQS service with the FIFO queue name holding m1
// then m2, both of group g, and returns the queue's URL.
func startFifoGroup(t *testing.T, p protocol, name string) (*sqs.Service, *awssqs.Client, string) {
	t.Helper()
	svc, c, _ := startWithClock(t, p)
	url := fifoQueue(t, c, name, nil)
	sendFifo(t, c, url, "g", "m1")
	sendFifo(t, c, url, "g", "m2")
	return svc, c, url
}

// receiveBodies receives up to n messages at once (visibility 30 s) and
// returns them.
func receiveBodies(t *testing.T, c *awssqs.Client, url string, n int32) ([]string, []types.Message) {
	t.Helper()
	out, err := c.ReceiveMessage(context.Background(), &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: n,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
	if err != nil {
		t.Fatalf("receive: %v", err)
	}
	var bodies []string
	for _, m := range out.Messages {
		bodies = append(bodies, *m.Body)
	}
	return bodies, out.Messages
}

func wantBodies(t *testing.T, got []string, what string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: received %q, want %q", what, got, want)
	}
}

func testFifoGroupOrderAndVisibility(t *testing.T, p protocol) {
	_, c, clk := startWithClock(t, p)
	ctx := context.Background()
	url := fifoQueue(t, c, "ordered.fifo", nil)
	var sequences []string
	for _, s := range []struct{ group, body string }{{"a", "a1"}, {"b", "b1"}, {"a", "a2"}, {"b", "b2"}, {"a", "a3"}} {
		sequences = append(sequences, *sendFifo(t, c, url, s.group, s.body).SequenceNumber)
	}
	if !slices.IsSorted(sequences) || len(sequences[0]) != 20 {
		t.Fatalf("sequence numbers %v: want increasing 20-digit numbers", sequences)
	}

	got, msgs := receiveBodies(t, c, url, 1)
	wantBodies(t, got, "first receive", "a1")
	if a := msgs[0].Attributes; a["MessageGroupId"] != "a" || a["MessageDeduplicationId"] != "a1" || a["SequenceNumber"] != sequences[0] {
		t.Fatalf("system attributes %v", a)
	}
	got, _ = receiveBodies(t, c, url, 10)
	wantBodies(t, got, "group a in flight: group b only, in order", "b1", "b2")
	got, _ = receiveBodies(t, c, url, 10)
	wantBodies(t, got, "both groups in flight", []string{}...)

	if _, err := c.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: msgs[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	got, _ = receiveBodies(t, c, url, 10)
	wantBodies(t, got, "a1 deleted: the rest of group a", "a2", "a3")

	clk.Advance(31 * time.Second) // every visibility timeout expires
	got, _ = receiveBodies(t, c, url, 10)
	wantBodies(t, got, "after the visibility timeout: groups by their oldest message", "b1", "b2", "a2", "a3")
}

func testFifoDeduplication(t *testing.T, p protocol) {
	_, c, clk := startWithClock(t, p)
	ctx := context.Background()
	url := fifoQueue(t, c, "dedup.fifo", nil)
	first := sendFifo(t, c, url, "g", "m1")
	again := sendFifo(t, c, url, "g", "m1")
	if *again.MessageId != *first.MessageId || *again.SequenceNumber != *first.SequenceNumber {
		t.Fatalf("duplicate: %s %s, want the original's %s %s", *again.MessageId, *again.SequenceNumber, *first.MessageId, *first.SequenceNumber)
	}
	got, msgs := receiveBodies(t, c, url, 10)
	wantBodies(t, got, "a duplicate is not delivered", "m1")
	if _, err := c.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: msgs[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(4 * time.Minute)
	sendFifo(t, c, url, "other-group", "m1")
	got, _ = receiveBodies(t, c, url, 10)
	wantBodies(t, got, "deleted, in another group, inside the window", []string{}...)
	clk.Advance(61 * time.Second)
	late := sendFifo(t, c, url, "g", "m1")
	if *late.MessageId == *first.MessageId {
		t.Fatal("a send after the window answered with the original")
	}
	got, _ = receiveBodies(t, c, url, 10)
	wantBodies(t, got, "after the window", "m1")

	content := fifoQueue(t, c, "content.fifo", map[string]string{"ContentBasedDeduplication": "true"})
	for _, body := range []string{"same", "same", "other"} {
		if _, err := c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(content), MessageBody: aws.String(body), MessageGroupId: aws.String("g")}); err != nil {
			t.Fatal(err)
		}
	}
	got, msgs = receiveBodies(t, c, content, 10)
	wantBodies(t, got, "content-based deduplication", "same", "other")
	if id := msgs[0].Attributes["MessageDeduplicationId"]; id != "0967115f2813a3541eaef77de9d9d5773f1c0c04314b0bbfe4ff3b3b1c55b5d5" {
		t.Fatalf("content deduplication id %s, want the SHA-256 of the body", id)
	}

	scoped := fifoQueue(t, c, "scoped.fifo", map[string]string{"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"})
	sendFifo(t, c, scoped, "g1", "m")
	sendFifo(t, c, scoped, "g2", "m")
	sendFifo(t, c, scoped, "g2", "m")
	got, _ = receiveBodies(t, c, scoped, 10)
	wantBodies(t, got, "deduplication per message group", "m", "m")
}

func testFifoReceiveRequestAttemptID(t *testing.T, p protocol) {
	_, c, url := startFifoGroup(t, p, "attempts.fifo")
	ctx := context.Background()
	receive := func(attempt string) []types.Message {
		out, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 1, ReceiveRequestAttemptId: aws.String(attempt)})
		if err != nil {
			t.Fatalf("receive attempt %s: %v", attempt, err)
		}
		return out.Messages
	}
	first := receive("attempt-1")
	retry := receive("attempt-1")
	if len(first) != 1 || len(retry) != 1 || *retry[0].ReceiptHandle != *first[0].ReceiptHandle || *retry[0].Body != "m1" {
		t.Fatalf("retried attempt: %+v, want the first answer %+v", retry, first)
	}
	if other := receive("attempt-2"); len(other) != 0 {
		t.Fatalf("another attempt while the group is in flight: %+v", other)
	}
	if _, err := c.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: first[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	if after := receive("attempt-1"); len(after) != 1 || *after[0].Body != "m2" {
		t.Fatalf("attempt retried after its message was deleted: %+v, want a new receive of m2", after)
	}
	_, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), ReceiveRequestAttemptId: aws.String("no spaces")})
	localawstest.WantCode(t, err, "InvalidParameterValue", "an invalid attempt id")
}

func testFifoDeadLetterQueue(t *testing.T, p protocol) {
	_, c, _ := startWithClock(t, p)
	ctx := context.Background()
	dlq := fifoQueue(t, c, "dead.fifo", nil)
	standardDLQ := createQueue(t, c, "dead-standard", nil)
	redrive := func(target string) string {
		b, _ := json.Marshal(map[string]any{"deadLetterTargetArn": queueArn(t, c, target), "maxReceiveCount": 1})
		return string(b)
	}
	_, err := c.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("src.fifo"),
		Attributes: map[string]string{"FifoQueue": "true", "RedrivePolicy": redrive(standardDLQ)}})
	localawstest.WantCode(t, err, "InvalidParameterValue", "a FIFO queue with a standard dead-letter queue")
	_, err = c.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("src"), Attributes: map[string]string{"RedrivePolicy": redrive(dlq)}})
	localawstest.WantCode(t, err, "InvalidParameterValue", "a standard queue with a FIFO dead-letter queue")

	src := fifoQueue(t, c, "src.fifo", map[string]string{"RedrivePolicy": redrive(dlq), "VisibilityTimeout": "0"})
	for _, b := range []string{"a1", "a2", "a3"} {
		sendFifo(t, c, src, "a", b)
	}
	out, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(src), MaxNumberOfMessages: 2})
	if err != nil || len(out.Messages) != 2 {
		t.Fatalf("first receive: %+v %v", out, err)
	}
	got, _ := receiveBodies(t, c, src, 10)
	wantBodies(t, got, "a1 and a2 received once: moved, a3 follows", "a3")
	got, msgs := receiveBodies(t, c, dlq, 10)
	wantBodies(t, got, "the dead-letter queue keeps the group's order", "a1", "a2")
	if msgs[0].Attributes["MessageGroupId"] != "a" || msgs[0].Attributes["MessageDeduplicationId"] != "a1" {
		t.Fatalf("dead-lettered message attributes %v", msgs[0].Attributes)
	}
}

// testFifoLongPollWakesOnDelete checks that a long poll held back by a
// group in flight returns the group's next message as soon as the one in
// flight is deleted, well before its visibility timeout (30 s) would.
func testFifoLongPollWakesOnDelete(t *testing.T, p protocol) {
	svc, c, url := startFifoGroup(t, p, "poll.fifo")
	ctx := context.Background()
	_, held := receiveBodies(t, c, url, 1)
	type result struct {
		bodies []string
		err    error
	}
	done := make(chan result, 1)
	go func() {
		out, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), WaitTimeSeconds: 20})
		r := result{err: err}
		if err == nil {
			for _, m := range out.Messages {
				r.bodies = append(r.bodies, *m.Body)
			}
		}
		done <- r
	}()
	localawstest.Eventually(t, 10*time.Second, "the long poll to wait", func() bool { return svc.Waiting() != 0 })
	if _, err := c.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: held[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		wantBodies(t, r.bodies, "the long poll after the delete", "m2")
	case <-time.After(10 * time.Second): // half the poll's wait: it was not woken
		t.Fatal("the long poll did not return when the group's message in flight was deleted")
	}
}
