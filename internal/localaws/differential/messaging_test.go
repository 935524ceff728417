package differential_test

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// deliveryTimeout bounds the wait for a message to reach a queue.
const deliveryTimeout = 20 * time.Second

func (r *run) sqs() *sqs.Client { return sqs.NewFromConfig(r.cfg) }

// queue creates a queue and returns its URL and ARN (recording only
// failures).
func (r *run) queue(name string) (string, string) { return r.queueWith(name, nil) }

// queueWith is queue with attributes (such as those of a FIFO queue).
func (r *run) queueWith(name string, attributes map[string]string) (string, string) {
	out, err := r.sqs().CreateQueue(r.ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attributes})
	if err != nil {
		r.rec("CreateQueue "+name, nil, err)
		return "", ""
	}
	attrs, err := r.sqs().GetQueueAttributes(r.ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		r.rec("GetQueueAttributes "+name, nil, err)
		return *out.QueueUrl, ""
	}
	return *out.QueueUrl, attrs.Attributes["QueueArn"]
}

// entryTime is the Time of a PutEvents entry, which its delivered event
// carries.
var entryTime = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// receive waits (bounded) for want messages and records their bodies,
// sorted, with the receive attributes. It returns the "time" field of
// bodies that are EventBridge events.
func (r *run) receive(name, url string, want int) []string {
	var got []sqstypes.Message
	deadline := time.Now().Add(deliveryTimeout)
	for len(got) < want && time.Now().Before(deadline) && r.ctx.Err() == nil {
		out, err := r.sqs().ReceiveMessage(r.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameApproximateReceiveCount}})
		if err != nil {
			r.rec(name+" ReceiveMessage failed", nil, err)
			return nil
		}
		got = append(got, out.Messages...)
	}
	// Arrival order is unspecified; ids would decide a sort by body.
	byBody := func(m sqstypes.Message) string { return uuidRE.ReplaceAllString(aws.ToString(m.Body), "") }
	sort.Slice(got, func(i, j int) bool { return byBody(got[i]) < byBody(got[j]) })
	r.note(name, map[string]any{"Count": len(got), "Messages": got})
	var times []string
	for _, m := range got {
		var ev struct{ Time string }
		if json.Unmarshal([]byte(aws.ToString(m.Body)), &ev) == nil && ev.Time != "" {
			times = append(times, ev.Time)
		}
	}
	return times
}

func TestDifferentialSQS(t *testing.T) {
	compareOn(t, "sqs/queues", sqs.NewFromConfig, func(r *run, c *sqs.Client) {
		dlqURL, dlqARN := r.queue("diff-sqs-dlq")
		redrive, _ := json.Marshal(map[string]any{"deadLetterTargetArn": dlqARN, "maxReceiveCount": 1})
		q, err := c.CreateQueue(r.ctx, &sqs.CreateQueueInput{QueueName: aws.String("diff-sqs"), Attributes: map[string]string{
			"VisibilityTimeout": "1", "RedrivePolicy": string(redrive), "MessageRetentionPeriod": "3600"}})
		r.rec("CreateQueue", q, err)
		if err != nil {
			return
		}
		url := q.QueueUrl
		attrs, err := c.GetQueueAttributes(r.ctx, &sqs.GetQueueAttributesInput{QueueUrl: url, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
		r.rec("GetQueueAttributes", attrs, err)
		gu, err := c.GetQueueUrl(r.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("diff-sqs-missing")})
		r.rec("GetQueueUrl missing", gu, err)
		sent, err := c.SendMessage(r.ctx, &sqs.SendMessageInput{QueueUrl: url, MessageBody: aws.String("hello"),
			MessageAttributes: map[string]sqstypes.MessageAttributeValue{"kind": {DataType: aws.String("String"), StringValue: aws.String("greeting")}}})
		r.rec("SendMessage", sent, err)
		batch, err := c.SendMessageBatch(r.ctx, &sqs.SendMessageBatchInput{QueueUrl: url, Entries: []sqstypes.SendMessageBatchRequestEntry{
			{Id: aws.String("a"), MessageBody: aws.String("one")}, {Id: aws.String("b"), MessageBody: aws.String("two")}}})
		if err == nil {
			sort.Slice(batch.Successful, func(i, j int) bool { return *batch.Successful[i].Id < *batch.Successful[j].Id })
		}
		r.rec("SendMessageBatch", batch, err)
		dupIDs, err := c.SendMessageBatch(r.ctx, &sqs.SendMessageBatchInput{QueueUrl: url, Entries: []sqstypes.SendMessageBatchRequestEntry{
			{Id: aws.String("a"), MessageBody: aws.String("x")}, {Id: aws.String("a"), MessageBody: aws.String("y")}}})
		r.rec("SendMessageBatch duplicate ids", dupIDs, err)
		r.receive("first receive", *url, 3)
		r.redrive(*url, dlqURL, 3)
		dls, err := c.ListDeadLetterSourceQueues(r.ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(dlqURL)})
		r.rec("ListDeadLetterSourceQueues", dls, err)
		del, err := c.DeleteMessage(r.ctx, &sqs.DeleteMessageInput{QueueUrl: url, ReceiptHandle: aws.String("bogus")})
		r.rec("DeleteMessage bad receipt handle", del, err)
		_, err = c.DeleteQueue(r.ctx, &sqs.DeleteQueueInput{QueueUrl: url})
		r.rec("DeleteQueue", nil, err)
	})
}

// redrive receives from the source queue until want messages exceeded
// their maxReceiveCount and moved to the dead-letter queue (bounded), then
// records the dead-letter queue's messages.
func (r *run) redrive(source, dlq string, want int) {
	if r.awaitDeadLetters(source, dlq, want) {
		r.receive("dead-letter queue", dlq, want)
	}
}

// awaitDeadLetters receives from the source queue until the dead-letter
// queue holds want messages or the wait ends (bounded). It reports false,
// after recording the failure, when a call fails.
func (r *run) awaitDeadLetters(source, dlq string, want int) bool {
	deadline := time.Now().Add(deliveryTimeout)
	for time.Now().Before(deadline) && r.ctx.Err() == nil {
		attrs, err := r.sqs().GetQueueAttributes(r.ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(dlq),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
		if err != nil {
			r.rec("redrive GetQueueAttributes failed", nil, err)
			return false
		}
		if attrs.Attributes["ApproximateNumberOfMessages"] == strconv.Itoa(want) {
			return true
		}
		_, err = r.sqs().ReceiveMessage(r.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(source), WaitTimeSeconds: 1, MaxNumberOfMessages: 10})
		if err != nil {
			r.rec("redrive ReceiveMessage failed", nil, err)
			return false
		}
	}
	return true
}

// allowSend lets a service principal send to a queue, as SNS and
// EventBridge require of an SQS target.
func (r *run) allowSend(url, queueARN, principal, sourceARN string) {
	policy := localawstest.SendMessagePolicy(principal, queueARN, sourceARN)
	_, err := r.sqs().SetQueueAttributes(r.ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{"Policy": policy}})
	r.rec("SetQueueAttributes Policy", nil, err)
}

// subscribeQueue lets a topic send to a queue and subscribes the queue with
// attributes, recording the subscription and its attributes.
func (r *run) subscribeQueue(c *sns.Client, topicARN, url, queueARN string, attributes map[string]string) {
	r.allowSend(url, queueARN, "sns.amazonaws.com", topicARN)
	sub, err := c.Subscribe(r.ctx, &sns.SubscribeInput{TopicArn: aws.String(topicARN), Protocol: aws.String("sqs"), Endpoint: aws.String(queueARN),
		Attributes: attributes, ReturnSubscriptionArn: true})
	r.rec("Subscribe", sub, err)
	if sub != nil {
		sa, err := c.GetSubscriptionAttributes(r.ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: sub.SubscriptionArn})
		r.rec("GetSubscriptionAttributes", sa, err)
	}
}

func TestDifferentialSNS(t *testing.T) {
	compareOn(t, "sns/topics", sns.NewFromConfig, func(r *run, c *sns.Client) {
		topic, err := c.CreateTopic(r.ctx, &sns.CreateTopicInput{Name: aws.String("diff-sns")})
		r.rec("CreateTopic", topic, err)
		if err != nil {
			return
		}
		url, arn := r.queue("diff-sns-target")
		r.subscribeQueue(c, *topic.TopicArn, url, arn, map[string]string{"RawMessageDelivery": "true"})
		attrs, err := c.GetTopicAttributes(r.ctx, &sns.GetTopicAttributesInput{TopicArn: topic.TopicArn})
		r.rec("GetTopicAttributes", attrs, err)
		pub, err := c.Publish(r.ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String(`{"n":1}`)})
		r.rec("Publish", pub, err)
		pb, err := c.PublishBatch(r.ctx, &sns.PublishBatchInput{TopicArn: topic.TopicArn, PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{
			{Id: aws.String("a"), Message: aws.String(`{"n":2}`)}, {Id: aws.String("b"), Message: aws.String(`{"n":3}`)}}})
		if err == nil {
			sort.Slice(pb.Successful, func(i, j int) bool { return *pb.Successful[i].Id < *pb.Successful[j].Id })
		}
		r.rec("PublishBatch", pb, err)
		dup, err := c.PublishBatch(r.ctx, &sns.PublishBatchInput{TopicArn: topic.TopicArn, PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{
			{Id: aws.String("a"), Message: aws.String("x")}, {Id: aws.String("a"), Message: aws.String("y")}}})
		r.rec("PublishBatch duplicate ids", dup, err)
		missing, err := c.Publish(r.ctx, &sns.PublishInput{TopicArn: aws.String("arn:aws:sns:us-east-1:123456789012:diff-no-such-topic"), Message: aws.String("x")})
		r.rec("Publish missing topic", missing, err)
		r.receive("raw delivery to SQS", url, 3)
		_, err = c.DeleteTopic(r.ctx, &sns.DeleteTopicInput{TopicArn: topic.TopicArn})
		r.rec("DeleteTopic", nil, err)
	})
}

func TestDifferentialEventBridge(t *testing.T) {
	compareOn(t, "events/buses", eventbridge.NewFromConfig, func(r *run, c *eventbridge.Client) {
		bus, err := c.CreateEventBus(r.ctx, &eventbridge.CreateEventBusInput{Name: aws.String("diff-bus")})
		r.rec("CreateEventBus", bus, err)
		desc, err := c.DescribeEventBus(r.ctx, &eventbridge.DescribeEventBusInput{Name: aws.String("diff-bus")})
		r.rec("DescribeEventBus", desc, err)
		url, arn := r.queue("diff-events-target")
		pattern := `{"source":["orders"],"detail-type":["OrderPlaced"],"detail":{"total":[{"numeric":[">",100]}],"region":[{"prefix":"eu-"}]}}`
		rule, err := c.PutRule(r.ctx, &eventbridge.PutRuleInput{Name: aws.String("diff-rule"), EventBusName: aws.String("diff-bus"), EventPattern: aws.String(pattern)})
		r.rec("PutRule", rule, err)
		if rule != nil {
			r.allowSend(url, arn, "events.amazonaws.com", *rule.RuleArn)
		}
		dr, err := c.DescribeRule(r.ctx, &eventbridge.DescribeRuleInput{Name: aws.String("diff-rule"), EventBusName: aws.String("diff-bus")})
		r.rec("DescribeRule", dr, err)
		pt, err := c.PutTargets(r.ctx, &eventbridge.PutTargetsInput{Rule: aws.String("diff-rule"), EventBusName: aws.String("diff-bus"),
			Targets: []ebtypes.Target{{Id: aws.String("q"), Arn: aws.String(arn)}}})
		r.rec("PutTargets", pt, err)
		lt, err := c.ListTargetsByRule(r.ctx, &eventbridge.ListTargetsByRuleInput{Rule: aws.String("diff-rule"), EventBusName: aws.String("diff-bus")})
		r.rec("ListTargetsByRule", lt, err)
		for _, p := range []struct{ name, pattern string }{
			{"rule's pattern", pattern},
			{"prefix", `{"detail":{"region":[{"prefix":"eu-"}]}}`},
			{"numeric", `{"detail":{"total":[{"numeric":[">",100]}]}}`},
			{"anything-but", `{"detail":{"region":[{"anything-but":["us-east-1"]}]}}`},
			{"exists", `{"detail":{"missing":[{"exists":false}]}}`},
		} {
			for _, tc := range []struct{ name, event string }{
				{"matching event", `{"source":"orders","detail-type":"OrderPlaced","detail":{"total":150,"region":"eu-west-1"}}`},
				{"event below the threshold", `{"source":"orders","detail-type":"OrderPlaced","detail":{"total":50,"region":"eu-west-1"}}`},
				{"event of another region", `{"source":"orders","detail-type":"OrderPlaced","detail":{"total":150,"region":"us-east-1"}}`},
			} {
				tp, err := c.TestEventPattern(r.ctx, &eventbridge.TestEventPatternInput{EventPattern: aws.String(p.pattern), Event: aws.String(withEnvelope(tc.event))})
				r.rec("TestEventPattern "+p.name+" "+tc.name, tp, err)
			}
		}
		entry := func(bus, detail string) ebtypes.PutEventsRequestEntry {
			return ebtypes.PutEventsRequestEntry{EventBusName: aws.String(bus), Source: aws.String("orders"), DetailType: aws.String("OrderPlaced"), Detail: aws.String(detail)}
		}
		pe, err := c.PutEvents(r.ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{
			entry("diff-no-such-bus", `{"total":150,"region":"eu-west-1"}`)}})
		r.rec("PutEvents to a missing bus", pe, err)
		pe, err = c.PutEvents(r.ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{
			entry("diff-bus", `{"total":150,"region":"eu-west-1","n":1}`),
			entry("diff-bus", `{"total": 150, not json`),
			entry("diff-bus", `["a","list"]`),
			entry("diff-bus", `{"total":50,"region":"eu-west-1"}`),
			{EventBusName: aws.String("diff-bus"), DetailType: aws.String("OrderPlaced"), Detail: aws.String(`{}`)},
			entry("diff-bus", `{"total":200,"region":"eu-central-1","n":2}`),
			{EventBusName: aws.String("diff-bus"), Source: aws.String("aws.orders"), DetailType: aws.String("OrderPlaced"), Detail: aws.String(`{}`)},
			{EventBusName: aws.String("diff-bus"), Source: aws.String("orders"), DetailType: aws.String("OrderPlaced"), Detail: aws.String(`{}`), Resources: []string{"not-an-arn"}},
			{EventBusName: aws.String("diff-bus"), Source: aws.String("orders"), DetailType: aws.String("OrderPlaced"), Detail: aws.String(`{"total":300,"region":"eu-north-1","n":3}`), Time: aws.Time(entryTime)},
		}})
		r.rec("PutEvents per-entry results", pe, err)
		var eleven []ebtypes.PutEventsRequestEntry
		for range 11 {
			eleven = append(eleven, entry("diff-bus", `{}`))
		}
		pe, err = c.PutEvents(r.ctx, &eventbridge.PutEventsInput{Entries: eleven})
		r.rec("PutEvents with 11 entries", pe, err)
		times := r.receive("delivered to SQS", url, 3)
		r.note("the entry's Time is the delivered event's time", slices.Contains(times, entryTime.Format(time.RFC3339)))
		_, err = c.RemoveTargets(r.ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String("diff-rule"), EventBusName: aws.String("diff-bus"), Ids: []string{"q"}})
		r.rec("RemoveTargets", nil, err)
		_, err = c.DeleteRule(r.ctx, &eventbridge.DeleteRuleInput{Name: aws.String("diff-rule"), EventBusName: aws.String("diff-bus")})
		r.rec("DeleteRule", nil, err)
		_, err = c.DeleteEventBus(r.ctx, &eventbridge.DeleteEventBusInput{Name: aws.String("diff-bus")})
		r.rec("DeleteEventBus", nil, err)
		gone, err := c.DescribeEventBus(r.ctx, &eventbridge.DescribeEventBusInput{Name: aws.String("diff-bus")})
		r.rec("DescribeEventBus deleted", gone, err)
	})
}

// withEnvelope adds the fields TestEventPattern requires of an event.
func withEnvelope(event string) string {
	var m map[string]any
	_ = json.Unmarshal([]byte(event), &m)
	m["id"], m["account"], m["time"], m["region"], m["resources"] = "1", "123456789012", "2026-01-01T00:00:00Z", "us-east-1", []string{}
	b, _ := json.Marshal(m)
	return string(b)
}
