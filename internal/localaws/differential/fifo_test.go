package differential_test

import (
	"encoding/json"
	"maps"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// fifoQueue creates a FIFO queue with attrs and returns its URL and ARN
// (recording the creation).
func (r *run) fifoQueue(name string, attrs map[string]string) (string, string) {
	all := map[string]string{"FifoQueue": "true"}
	maps.Copy(all, attrs)
	out, err := r.sqs().CreateQueue(r.ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: all})
	r.rec("CreateQueue "+name, out, err)
	if err != nil {
		return "", ""
	}
	a, err := r.sqs().GetQueueAttributes(r.ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
	r.rec("GetQueueAttributes "+name, a, err)
	if err != nil {
		return *out.QueueUrl, ""
	}
	return *out.QueueUrl, a.Attributes["QueueArn"]
}

// receiveBodies receives up to maxMessages messages once and records their bodies
// in the order received, with their FIFO system attributes.
func (r *run) receiveBodies(name, url string, maxMessages int32) []sqstypes.Message {
	out, err := r.sqs().ReceiveMessage(r.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: maxMessages,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameMessageGroupId,
			sqstypes.MessageSystemAttributeNameMessageDeduplicationId, sqstypes.MessageSystemAttributeNameSequenceNumber}})
	if err != nil {
		r.rec(name, nil, err)
		return nil
	}
	r.note(name, summarise(out.Messages))
	return out.Messages
}

// summarise is the bodies and FIFO attributes of messages, in order.
func summarise(msgs []sqstypes.Message) []map[string]any {
	out := []map[string]any{}
	for _, m := range msgs {
		out = append(out, map[string]any{"Body": aws.ToString(m.Body), "Attributes": m.Attributes})
	}
	return out
}

// drainFIFO receives and deletes (bounded) until want messages arrived,
// and records them in the order received.
func (r *run) drainFIFO(name, url string, want int) {
	r.note(name, summarise(r.collectFIFO(name, url, want)))
}

// collectFIFO receives and deletes (bounded) until want messages arrived,
// and returns them in the order received (recording only failures).
func (r *run) collectFIFO(name, url string, want int) []sqstypes.Message {
	var got []sqstypes.Message
	deadline := time.Now().Add(deliveryTimeout)
	for len(got) < want && time.Now().Before(deadline) && r.ctx.Err() == nil {
		out, err := r.sqs().ReceiveMessage(r.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameMessageGroupId,
				sqstypes.MessageSystemAttributeNameMessageDeduplicationId}})
		if err != nil {
			r.rec(name+" ReceiveMessage failed", nil, err)
			return got
		}
		for _, m := range out.Messages {
			if _, err := r.sqs().DeleteMessage(r.ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				r.rec(name+" DeleteMessage failed", nil, err)
				return got
			}
		}
		got = append(got, out.Messages...)
	}
	return got
}

func (r *run) sendFIFO(name, url, group, dedup, body string) *sqs.SendMessageOutput {
	in := &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body), MessageGroupId: aws.String(group)}
	if dedup != "" {
		in.MessageDeduplicationId = aws.String(dedup)
	}
	out, err := r.sqs().SendMessage(r.ctx, in)
	r.rec(name, out, err)
	return out
}

func TestDifferentialSQSFIFO(t *testing.T) {
	compareOn(t, "sqs/fifo", sqs.NewFromConfig, func(r *run, c *sqs.Client) {
		create := func(step, name string, attrs map[string]string) {
			out, err := c.CreateQueue(r.ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
			r.rec(step, out, err)
		}
		create("CreateQueue .fifo name without FifoQueue", "diff-nofifo.fifo", nil)
		create("CreateQueue FifoQueue without .fifo name", "diff-nosuffix", map[string]string{"FifoQueue": "true"})
		create("CreateQueue perMessageGroupId with queue scope", "diff-bad-throughput.fifo", map[string]string{"FifoQueue": "true", "FifoThroughputLimit": "perMessageGroupId"})
		create("CreateQueue ContentBasedDeduplication on a standard queue", "diff-standard-cbd", map[string]string{"ContentBasedDeduplication": "true"})
		url, _ := r.fifoQueue("diff-fifo.fifo", map[string]string{"ContentBasedDeduplication": "true"})
		if url == "" {
			return
		}
		_, err := c.SendMessage(r.ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x")})
		r.rec("SendMessage without MessageGroupId", nil, err)
		_, err = c.SendMessage(r.ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x"), MessageGroupId: aws.String("a"), DelaySeconds: 5})
		r.rec("SendMessage with DelaySeconds", nil, err)
		first := r.sendFIFO("SendMessage a1", url, "a", "a1", "a1")
		dup := r.sendFIFO("SendMessage a1 again", url, "a", "a1", "a1 again")
		if first != nil && dup != nil {
			r.note("a duplicate has the original's MessageId", aws.ToString(first.MessageId) == aws.ToString(dup.MessageId))
		}
		batch, err := c.SendMessageBatch(r.ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: []sqstypes.SendMessageBatchRequestEntry{
			{Id: aws.String("a2"), MessageBody: aws.String("a2"), MessageGroupId: aws.String("a")},
			{Id: aws.String("b1"), MessageBody: aws.String("b1"), MessageGroupId: aws.String("b")},
			{Id: aws.String("b2"), MessageBody: aws.String("b2"), MessageGroupId: aws.String("b")},
		}})
		r.rec("SendMessageBatch", batch, err)
		batch, err = c.SendMessageBatch(r.ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: []sqstypes.SendMessageBatchRequestEntry{
			{Id: aws.String("nogroup"), MessageBody: aws.String("x")}}})
		r.rec("SendMessageBatch without MessageGroupId", batch, err)
		held := r.receiveBodies("receive 1: the oldest message", url, 1)
		r.receiveBodies("receive 10 while group a is in flight", url, 10)
		r.receiveBodies("receive while both groups are in flight", url, 10)
		if len(held) == 1 {
			_, err = c.DeleteMessage(r.ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: held[0].ReceiptHandle})
			r.rec("DeleteMessage a1", nil, err)
		}
		r.receiveBodies("receive after a1 is deleted", url, 10)
		r.fifoSettings(url)
	})
}

// fifoSettings changes the high-throughput attributes and the queue type
// of a FIFO queue, and sends a deduplication id to a standard queue.
func (r *run) fifoSettings(url string) {
	c := r.sqs()
	_, err := c.SetQueueAttributes(r.ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{
		"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"}})
	r.rec("SetQueueAttributes high throughput", nil, err)
	attrs, err := c.GetQueueAttributes(r.ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{
		sqstypes.QueueAttributeNameFifoQueue, sqstypes.QueueAttributeNameDeduplicationScope, sqstypes.QueueAttributeNameFifoThroughputLimit,
		sqstypes.QueueAttributeNameContentBasedDeduplication}})
	r.rec("GetQueueAttributes FIFO attributes", attrs, err)
	_, err = c.SetQueueAttributes(r.ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{"FifoQueue": "false"}})
	r.rec("SetQueueAttributes FifoQueue", nil, err)
	std, _ := r.queue("diff-fifo-standard")
	if std != "" {
		_, err = c.SendMessage(r.ctx, &sqs.SendMessageInput{QueueUrl: aws.String(std), MessageBody: aws.String("x"), MessageDeduplicationId: aws.String("d")})
		r.rec("SendMessage with a deduplication id to a standard queue", nil, err)
	}
}

func TestDifferentialSQSFIFORedrive(t *testing.T) {
	compareOn(t, "sqs/fifo-redrive", sqs.NewFromConfig, func(r *run, c *sqs.Client) {
		dlqURL, dlqARN := r.fifoQueue("diff-fifo-dlq.fifo", nil)
		_, stdARN := r.queue("diff-fifo-std-dlq")
		policy := func(arn string) string {
			b, _ := json.Marshal(map[string]any{"deadLetterTargetArn": arn, "maxReceiveCount": 1})
			return string(b)
		}
		out, err := c.CreateQueue(r.ctx, &sqs.CreateQueueInput{QueueName: aws.String("diff-fifo-src-std.fifo"),
			Attributes: map[string]string{"FifoQueue": "true", "RedrivePolicy": policy(stdARN)}})
		r.rec("CreateQueue FIFO with a standard dead-letter queue", out, err)
		out, err = c.CreateQueue(r.ctx, &sqs.CreateQueueInput{QueueName: aws.String("diff-std-src-fifo"),
			Attributes: map[string]string{"RedrivePolicy": policy(dlqARN)}})
		r.rec("CreateQueue standard with a FIFO dead-letter queue", out, err)
		src, _ := r.fifoQueue("diff-fifo-src.fifo", map[string]string{"RedrivePolicy": policy(dlqARN), "VisibilityTimeout": "1"})
		if src == "" {
			return
		}
		for _, b := range []string{"g1", "g2", "g3"} {
			r.sendFIFO("SendMessage "+b, src, "g", b, b)
		}
		r.redriveFIFO(src, dlqURL, 3)
	})
}

// redriveFIFO receives from the source queue until want messages moved to
// the dead-letter queue (bounded), then records the dead-letter queue's
// messages in the order received.
func (r *run) redriveFIFO(source, dlq string, want int) {
	if r.awaitDeadLetters(source, dlq, want) {
		r.drainFIFO("dead-letter queue", dlq, want)
	}
}

func TestDifferentialSNSFIFO(t *testing.T) {
	compareOn(t, "sns/fifo", sns.NewFromConfig, func(r *run, c *sns.Client) {
		bad, err := c.CreateTopic(r.ctx, &sns.CreateTopicInput{Name: aws.String("diff-nofifo.fifo")})
		r.rec("CreateTopic .fifo name without FifoTopic", bad, err)
		bad, err = c.CreateTopic(r.ctx, &sns.CreateTopicInput{Name: aws.String("diff-nosuffix"), Attributes: map[string]string{"FifoTopic": "true"}})
		r.rec("CreateTopic FifoTopic without .fifo name", bad, err)
		topic, err := c.CreateTopic(r.ctx, &sns.CreateTopicInput{Name: aws.String("diff-sns.fifo"), Attributes: map[string]string{"FifoTopic": "true"}})
		r.rec("CreateTopic", topic, err)
		if err != nil {
			return
		}
		attrs, err := c.GetTopicAttributes(r.ctx, &sns.GetTopicAttributesInput{TopicArn: topic.TopicArn})
		r.rec("GetTopicAttributes", attrs, err)
		url, arn := r.fifoQueue("diff-sns-target.fifo", nil)
		r.subscribeQueue(c, *topic.TopicArn, url, arn, map[string]string{"RawMessageDelivery": "true", "FilterPolicy": `{"source":["orders"]}`})
		bodyURL, bodyARN := r.fifoQueue("diff-sns-body.fifo", nil)
		r.allowSend(bodyURL, bodyARN, "sns.amazonaws.com", *topic.TopicArn)
		bodySub, err := c.Subscribe(r.ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(bodyARN),
			Attributes: map[string]string{"FilterPolicyScope": "MessageBody", "FilterPolicy": `{"n":[{"prefix":"b"}]}`}})
		r.rec("Subscribe with a MessageBody filter policy", bodySub, err)
		r.snsFIFOPublish(c, *topic.TopicArn)
		r.drainFIFO("delivered to the FIFO queue", url, 4)
		r.drainFIFO("delivered to the FIFO queue filtering on the body", bodyURL, 2)
		r.snsContentDeduplication(c)
	})
}

// snsContentDeduplication publishes twice the same message without a
// deduplication id to a FIFO topic with ContentBasedDeduplication.
func (r *run) snsContentDeduplication(c *sns.Client) {
	topic, err := c.CreateTopic(r.ctx, &sns.CreateTopicInput{Name: aws.String("diff-sns-content.fifo"),
		Attributes: map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true"}})
	r.rec("CreateTopic with ContentBasedDeduplication", topic, err)
	if err != nil {
		return
	}
	var ids []string
	for _, step := range []string{"Publish by content", "Publish by content again"} {
		out, err := c.Publish(r.ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String("same"), MessageGroupId: aws.String("g")})
		r.rec(step, out, err)
		if err == nil {
			ids = append(ids, aws.ToString(out.MessageId))
		}
	}
	r.note("a duplicate by content has the original's MessageId", len(ids) == 2 && ids[0] == ids[1])
}

// snsFIFOPublish publishes to a FIFO topic: errors, a filtered message, a
// duplicate by content, and a batch.
func (r *run) snsFIFOPublish(c *sns.Client, topic string) {
	orders := map[string]snstypes.MessageAttributeValue{"source": {DataType: aws.String("String"), StringValue: aws.String("orders")}}
	other := map[string]snstypes.MessageAttributeValue{"source": {DataType: aws.String("String"), StringValue: aws.String("billing")}}
	_, err := c.Publish(r.ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("x")})
	r.rec("Publish without MessageGroupId", nil, err)
	_, err = c.Publish(r.ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("x"), MessageGroupId: aws.String("a")})
	r.rec("Publish without a deduplication id", nil, err)
	publish := func(step, group, body string, attrs map[string]snstypes.MessageAttributeValue) *sns.PublishOutput {
		out, err := c.Publish(r.ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(body), MessageGroupId: aws.String(group),
			MessageDeduplicationId: aws.String(body[6:8]), MessageAttributes: attrs})
		r.rec(step, out, err)
		return out
	}
	first := publish("Publish a1", "a", `{"n":"a1"}`, orders)
	publish("Publish a filtered out", "a", `{"n":"f1"}`, other)
	dup := publish("Publish a1 again", "a", `{"n":"a1"}`, orders)
	if first != nil && dup != nil {
		r.note("a duplicate has the original's MessageId", aws.ToString(first.MessageId) == aws.ToString(dup.MessageId))
	}
	publish("Publish a2", "a", `{"n":"a2"}`, orders)
	pb, err := c.PublishBatch(r.ctx, &sns.PublishBatchInput{TopicArn: aws.String(topic), PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{
		{Id: aws.String("b1"), Message: aws.String(`{"n":"b1"}`), MessageGroupId: aws.String("b"), MessageDeduplicationId: aws.String("b1"), MessageAttributes: orders},
		{Id: aws.String("b2"), Message: aws.String(`{"n":"b2"}`), MessageGroupId: aws.String("b"), MessageDeduplicationId: aws.String("b2"), MessageAttributes: orders},
	}})
	r.rec("PublishBatch", pb, err)
}
