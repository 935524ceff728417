package conformance_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// fifoQueue creates a FIFO queue with attrs and returns its URL and ARN.
func (e *awsEnv) fifoQueue(name string, attrs map[string]string) (url, arn string) {
	e.t.Helper()
	all := map[string]string{"FifoQueue": "true"}
	maps.Copy(all, attrs)
	return e.queueWith(name, all)
}

// TestSNSFIFOToSQSFIFO subscribes an SQS FIFO queue (with a FIFO
// dead-letter queue) to an SNS FIFO topic with raw delivery and a filter
// policy on source and detail type, publishes three groups with retried
// (duplicate) publishes among them, and checks that the queue receives each
// group in order, once, with its group and deduplication ids, and that a
// message received too often moves to the dead-letter queue with its group.
func TestSNSFIFOToSQSFIFO(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	topics := sns.NewFromConfig(localawstest.Config(e.stack))
	topic, err := topics.CreateTopic(e.ctx, &sns.CreateTopicInput{Name: aws.String("events.fifo"), Attributes: map[string]string{"FifoTopic": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	_, dlqArn := e.fifoQueue("consumer-dlq.fifo", nil)
	redrive, _ := json.Marshal(map[string]any{"deadLetterTargetArn": dlqArn, "maxReceiveCount": 1})
	policy := localawstest.SendMessagePolicy("sns.amazonaws.com", "*", *topic.TopicArn)
	url, arn := e.fifoQueue("consumer.fifo", map[string]string{"RedrivePolicy": string(redrive), "Policy": policy})
	if _, err := topics.Subscribe(e.ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(arn),
		Attributes: map[string]string{"RawMessageDelivery": "true", "FilterPolicy": `{"source":["orders"],"detail-type":["OrderPlaced","OrderShipped"]}`}}); err != nil {
		t.Fatal(err)
	}

	const perGroup = 10
	groups := []string{"order-1", "order-2", "order-3"}
	for i := range perGroup {
		for _, g := range groups {
			detail := []string{"OrderPlaced", "OrderShipped", "OrderAudited"}[i%3] // OrderAudited is filtered out
			e.publishFIFO(topics, *topic.TopicArn, g, i, detail)
			if i%4 == 0 {
				e.publishFIFO(topics, *topic.TopicArn, g, i, detail) // a retry: deduplicated
			}
		}
	}
	var want []int
	for i := range perGroup {
		if i%3 != 2 {
			want = append(want, i)
		}
	}
	got := e.receiveGroups(url, len(groups)*len(want))
	for _, g := range groups {
		if !slices.Equal(got[g], want) {
			t.Errorf("group %s: received %v, want %v once each, in order", g, got[g], want)
		}
	}
	e.checkFIFORedrive(topics, *topic.TopicArn, url, dlqArn)
}

// publishFIFO publishes event n of group with its id as deduplication id.
func (e *awsEnv) publishFIFO(c *sns.Client, topic, group string, n int, detail string) {
	e.t.Helper()
	id := fmt.Sprintf("%s-%d", group, n)
	body := fmt.Sprintf(`{"metadata":{"eventId":%q},"group":%q,"n":%d}`, id, group, n)
	attrs := map[string]snstypes.MessageAttributeValue{
		"source":      {DataType: aws.String("String"), StringValue: aws.String("orders")},
		"detail-type": {DataType: aws.String("String"), StringValue: aws.String(detail)},
	}
	if _, err := c.Publish(e.ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String(body), MessageGroupId: aws.String(group),
		MessageDeduplicationId: aws.String(id), MessageAttributes: attrs}); err != nil {
		e.t.Fatalf("publish %s: %v", id, err)
	}
}

// receiveGroups receives and deletes until want messages arrived
// (bounded) and returns the event numbers received by group, checking each
// message's group and deduplication ids.
func (e *awsEnv) receiveGroups(url string, want int) map[string][]int {
	e.t.Helper()
	got := map[string][]int{}
	count := 0
	deadline := time.Now().Add(deliveryTimeout)
	for count < want {
		if time.Now().After(deadline) {
			e.t.Fatalf("received %d of %d messages: %v", count, want, got)
		}
		out, err := e.sqs.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			e.t.Fatal(err)
		}
		for _, m := range out.Messages {
			var ev struct {
				Metadata struct{ EventID string }
				Group    string
				N        int
			}
			if err := json.Unmarshal([]byte(*m.Body), &ev); err != nil {
				e.t.Fatalf("body %s: %v", *m.Body, err)
			}
			if m.Attributes["MessageGroupId"] != ev.Group || m.Attributes["MessageDeduplicationId"] != ev.Metadata.EventID {
				e.t.Fatalf("message %s: attributes %v, want its group and event id", *m.Body, m.Attributes)
			}
			got[ev.Group] = append(got[ev.Group], ev.N)
			count++
			if _, err := e.sqs.DeleteMessage(e.ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	return got
}

// checkFIFORedrive publishes two events of one group, receives the first
// without deleting it until it moves to the dead-letter queue, and checks
// that the group then goes on with the second.
func (e *awsEnv) checkFIFORedrive(c *sns.Client, topic, url, dlqArn string) {
	e.t.Helper()
	e.publishFIFO(c, topic, "poison", 0, "OrderPlaced")
	e.publishFIFO(c, topic, "poison", 1, "OrderPlaced")
	dlq, err := e.sqs.GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("consumer-dlq.fifo")})
	if err != nil {
		e.t.Fatal(err)
	}
	deadline := time.Now().Add(deliveryTimeout)
	var bodies []string
	for len(bodies) == 0 || bodies[0] == `{"metadata":{"eventId":"poison-0"},"group":"poison","n":0}` {
		if time.Now().After(deadline) {
			e.t.Fatalf("poison-0 never left the queue; last received %q", bodies)
		}
		out, err := e.sqs.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 1, WaitTimeSeconds: 1, VisibilityTimeout: 1})
		if err != nil {
			e.t.Fatal(err)
		}
		bodies = bodies[:0]
		for _, m := range out.Messages {
			bodies = append(bodies, *m.Body)
		}
	}
	if bodies[0] != `{"metadata":{"eventId":"poison-1"},"group":"poison","n":1}` {
		e.t.Fatalf("after poison-0 moved, received %q, want poison-1", bodies)
	}
	out, err := e.sqs.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: dlq.QueueUrl, MaxNumberOfMessages: 10,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameMessageGroupId}})
	if err != nil || len(out.Messages) != 1 || out.Messages[0].Attributes["MessageGroupId"] != "poison" {
		e.t.Fatalf("dead-letter queue %s: %+v %v, want poison-0 of group poison", dlqArn, out, err)
	}
}
