package sns_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sns"
)

// deliveryDeadline bounds the wait for asynchronous deliveries.
const deliveryDeadline = 10 * time.Second

func wantInvalid(t *testing.T, err error, what string) {
	t.Helper()
	localawstest.WantError[*types.InvalidParameterException](t, err, what)
}

func createFifoTopic(t *testing.T, c *awssns.Client, name string, attrs map[string]string) string {
	t.Helper()
	all := map[string]string{"FifoTopic": "true"}
	for k, v := range attrs {
		all[k] = v
	}
	out, err := c.CreateTopic(context.Background(), &awssns.CreateTopicInput{Name: aws.String(name), Attributes: all})
	if err != nil {
		t.Fatalf("CreateTopic %s: %v", name, err)
	}
	return *out.TopicArn
}

// subscribedQueue creates a queue (a FIFO one for a .fifo name) whose
// policy lets topicArn send, subscribes it with attrs and returns its URL.
func subscribedQueue(t *testing.T, c *awssns.Client, q *awssqs.Client, topicArn, name string, attrs map[string]string) string {
	t.Helper()
	ctx := context.Background()
	arn := "arn:aws:sqs:us-east-1:000000000000:" + name
	policy := localawstest.SendMessagePolicy("sns.amazonaws.com", arn, topicArn)
	qattrs := map[string]string{"Policy": policy}
	if len(name) > 5 && name[len(name)-5:] == ".fifo" {
		qattrs["FifoQueue"] = "true"
	}
	out, err := q.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String(name), Attributes: qattrs})
	if err != nil {
		t.Fatalf("CreateQueue %s: %v", name, err)
	}
	if _, err := c.Subscribe(ctx, &awssns.SubscribeInput{TopicArn: aws.String(topicArn), Protocol: aws.String("sqs"), Endpoint: aws.String(arn), Attributes: attrs}); err != nil {
		t.Fatalf("Subscribe %s: %v", name, err)
	}
	return *out.QueueUrl
}

// settled waits (bounded) until the topic's deliveries, delivered, failed
// or filtered out, number want.
func settled(t *testing.T, svc *sns.Service, topicArn string, want int64) {
	t.Helper()
	localawstest.EventuallyState(t, deliveryDeadline, fmt.Sprintf("%d deliveries of %s", want, topicArn), func() (bool, string) {
		m := svc.Metrics()[topicArn]
		return m.NumberOfNotificationsDelivered+m.NumberOfNotificationsFailed+m.NumberOfNotificationsFilteredOut >= want, fmt.Sprintf("%+v", m)
	})
}

// drain receives and deletes every message of a queue, in the order
// received, with their system and message attributes.
func drain(t *testing.T, q *awssqs.Client, url string) []sqstypes.Message {
	t.Helper()
	ctx := context.Background()
	var got []sqstypes.Message
	for {
		out, err := q.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}, MessageAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatalf("receive from %s: %v", url, err)
		}
		if len(out.Messages) == 0 {
			return got
		}
		for _, m := range out.Messages {
			if _, err := q.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
		got = append(got, out.Messages...)
	}
}

func TestFifoTopicsAndSubscriptions(t *testing.T) {
	t.Parallel()
	_, c, q := start(t)
	ctx := context.Background()
	_, err := c.CreateTopic(ctx, &awssns.CreateTopicInput{Name: aws.String("orders.fifo")})
	wantInvalid(t, err, "a .fifo name without FifoTopic")
	_, err = c.CreateTopic(ctx, &awssns.CreateTopicInput{Name: aws.String("orders"), Attributes: map[string]string{"FifoTopic": "true"}})
	wantInvalid(t, err, "FifoTopic without a .fifo name")
	_, err = c.CreateTopic(ctx, &awssns.CreateTopicInput{Name: aws.String("orders"), Attributes: map[string]string{"ContentBasedDeduplication": "true"}})
	wantInvalid(t, err, "ContentBasedDeduplication on a standard topic")

	arn := createFifoTopic(t, c, "orders.fifo", nil)
	attrs, err := c.GetTopicAttributes(ctx, &awssns.GetTopicAttributesInput{TopicArn: aws.String(arn)})
	if err != nil || attrs.Attributes["FifoTopic"] != "true" || attrs.Attributes["ContentBasedDeduplication"] != "false" {
		t.Fatalf("FIFO topic attributes %v %v", attrs, err)
	}
	if _, err := c.SetTopicAttributes(ctx, &awssns.SetTopicAttributesInput{TopicArn: aws.String(arn), AttributeName: aws.String("ContentBasedDeduplication"),
		AttributeValue: aws.String("true")}); err != nil {
		t.Fatalf("enabling content-based deduplication: %v", err)
	}
	_, err = c.Subscribe(ctx, &awssns.SubscribeInput{TopicArn: aws.String(arn), Protocol: aws.String("lambda"),
		Endpoint: aws.String("arn:aws:lambda:us-east-1:000000000000:function:f")})
	wantInvalid(t, err, "a Lambda subscription to a FIFO topic")
	standard := createTopic(t, c, "standard")
	_, err = c.Subscribe(ctx, &awssns.SubscribeInput{TopicArn: standard.TopicArn, Protocol: aws.String("sqs"),
		Endpoint: aws.String("arn:aws:sqs:us-east-1:000000000000:q.fifo")})
	wantInvalid(t, err, "a FIFO queue subscribed to a standard topic")
	subscribedQueue(t, c, q, arn, "standard-queue", nil) // a standard queue may subscribe to a FIFO topic
	_, err = c.Subscribe(ctx, &awssns.SubscribeInput{TopicArn: aws.String(arn), Protocol: aws.String("sqs"),
		Endpoint: aws.String("arn:aws:sqs:us-east-1:000000000000:q.fifo"), Attributes: map[string]string{"FilterPolicy": `{"source":"not-a-list"}`}})
	wantInvalid(t, err, "an invalid filter policy")
}

func TestFifoPublishValidationAndDeduplication(t *testing.T) {
	t.Parallel()
	var offset atomic.Int64
	svc, c, q := startWithClock(t, func() time.Time { return time.Now().Add(time.Duration(offset.Load())) })
	ctx := context.Background()
	arn := aws.String(createFifoTopic(t, c, "dedup.fifo", nil))
	url := subscribedQueue(t, c, q, *arn, "dedup-target.fifo", map[string]string{"RawMessageDelivery": "true"})
	_, err := c.Publish(ctx, &awssns.PublishInput{TopicArn: arn, Message: aws.String("x"), MessageDeduplicationId: aws.String("d")})
	wantInvalid(t, err, "a publish without MessageGroupId")
	_, err = c.Publish(ctx, &awssns.PublishInput{TopicArn: arn, Message: aws.String("x"), MessageGroupId: aws.String("g")})
	wantInvalid(t, err, "a publish without a deduplication id")
	standard := createTopic(t, c, "plain")
	_, err = c.Publish(ctx, &awssns.PublishInput{TopicArn: standard.TopicArn, Message: aws.String("x"), MessageDeduplicationId: aws.String("d")})
	wantInvalid(t, err, "a deduplication id on a standard topic")

	publish := func(dedup string) *awssns.PublishOutput {
		out, err := c.Publish(ctx, &awssns.PublishInput{TopicArn: arn, Message: aws.String("m-" + dedup), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String(dedup)})
		if err != nil {
			t.Fatalf("publish %s: %v", dedup, err)
		}
		return out
	}
	first := publish("one")
	if len(aws.ToString(first.SequenceNumber)) != 20 {
		t.Fatalf("SequenceNumber %q, want 20 digits", aws.ToString(first.SequenceNumber))
	}
	dup := publish("one")
	if *dup.MessageId != *first.MessageId || *dup.SequenceNumber != *first.SequenceNumber {
		t.Fatalf("duplicate publish %+v, want the original's ids %+v", dup, first)
	}
	batch, err := c.PublishBatch(ctx, &awssns.PublishBatchInput{TopicArn: arn, PublishBatchRequestEntries: []types.PublishBatchRequestEntry{
		{Id: aws.String("a"), Message: aws.String("m-two"), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("two")},
		{Id: aws.String("b"), Message: aws.String("m-one"), MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("one")},
		{Id: aws.String("c"), Message: aws.String("no group"), MessageDeduplicationId: aws.String("three")},
	}})
	if err != nil || len(batch.Successful) != 2 || len(batch.Failed) != 1 || *batch.Failed[0].Code != "InvalidParameter" {
		t.Fatalf("batch %+v %v", batch, err)
	}
	if *batch.Successful[1].MessageId != *first.MessageId || *batch.Successful[0].SequenceNumber <= *first.SequenceNumber {
		t.Fatalf("batch results %+v: want a newer sequence number, then the duplicate's original", batch.Successful)
	}
	settled(t, svc, *arn, 2)
	got := bodies(drain(t, q, url))
	if !slices.Equal(got, []string{"m-one", "m-two"}) {
		t.Fatalf("delivered %q, want each deduplication id once", got)
	}
	offset.Store(int64(sns.DefaultDeduplicationWindow + time.Second))
	publish("one")
	settled(t, svc, *arn, 3)
	if got := bodies(drain(t, q, url)); !slices.Equal(got, []string{"m-one"}) {
		t.Fatalf("after the window: delivered %q, want the message again", got)
	}
}

func bodies(msgs []sqstypes.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, *m.Body)
	}
	return out
}

// TestFifoFanOutToFifoQueues publishes two groups to a FIFO topic with
// content-based deduplication and checks each FIFO subscription receives
// its messages in order per group, with the group and deduplication ids,
// filtered by its policy, and a standard queue all of them, without ids.
func TestFifoFanOutToFifoQueues(t *testing.T) {
	t.Parallel()
	svc, c, q := start(t)
	ctx := context.Background()
	arn := createFifoTopic(t, c, "fanout.fifo", map[string]string{"ContentBasedDeduplication": "true"})
	all := subscribedQueue(t, c, q, arn, "all.fifo", map[string]string{"RawMessageDelivery": "true"})
	placed := subscribedQueue(t, c, q, arn, "placed.fifo", map[string]string{"RawMessageDelivery": "true",
		"FilterPolicy": `{"source":["orders"],"detail-type":[{"prefix":"Order"}]}`})
	byBody := subscribedQueue(t, c, q, arn, "body.fifo", map[string]string{"FilterPolicyScope": "MessageBody", "FilterPolicy": `{"n":[{"numeric":[">=",5]}]}`})
	standard := subscribedQueue(t, c, q, arn, "standard", map[string]string{"RawMessageDelivery": "true"})
	const perGroup = 8
	var published int64
	for i := range perGroup {
		for _, g := range []string{"a", "b"} {
			detail := "OrderPlaced"
			if i%2 == 1 {
				detail = "Refund"
			}
			attrs := map[string]types.MessageAttributeValue{"source": {DataType: aws.String("String"), StringValue: aws.String("orders")},
				"detail-type": {DataType: aws.String("String"), StringValue: aws.String(detail)}}
			body := fmt.Sprintf(`{"group":%q,"n":%d}`, g, i)
			if _, err := c.Publish(ctx, &awssns.PublishInput{TopicArn: aws.String(arn), Message: aws.String(body), MessageGroupId: aws.String(g), MessageAttributes: attrs}); err != nil {
				t.Fatal(err)
			}
			published++
		}
	}
	if _, err := c.Publish(ctx, &awssns.PublishInput{TopicArn: aws.String(arn), Message: aws.String(`{"group":"a","n":0}`), MessageGroupId: aws.String("a")}); err != nil {
		t.Fatal(err) // a duplicate by content: not delivered
	}
	settled(t, svc, arn, 4*published)

	checkGroups(t, "all.fifo", drain(t, q, all), perGroup, func(int) bool { return true })
	checkGroups(t, "placed.fifo", drain(t, q, placed), perGroup, func(n int) bool { return n%2 == 0 })
	wrapped := drain(t, q, byBody)
	for i, m := range wrapped {
		var n struct{ Message, SequenceNumber string }
		if err := json.Unmarshal([]byte(*m.Body), &n); err != nil || n.SequenceNumber == "" {
			t.Fatalf("notification %s: %v, want a SequenceNumber", *m.Body, err)
		}
		wrapped[i].Body = aws.String(n.Message)
	}
	checkGroups(t, "body.fifo", wrapped, perGroup, func(n int) bool { return n >= 5 })
	plain := drain(t, q, standard)
	if len(plain) != int(published) {
		t.Fatalf("standard queue: %d messages, want %d", len(plain), published)
	}
	for _, m := range plain {
		if _, has := m.Attributes["MessageGroupId"]; has {
			t.Fatalf("a standard queue's message has a MessageGroupId: %v", m.Attributes)
		}
	}
}

// checkGroups checks that msgs hold, for groups a and b, the messages
// n < perGroup that keep passes, each group in order, with the group id and
// a deduplication id.
func checkGroups(t *testing.T, queue string, msgs []sqstypes.Message, perGroup int, keep func(int) bool) {
	t.Helper()
	got := map[string][]int{}
	for _, m := range msgs {
		var b struct {
			Group string
			N     int
		}
		if err := json.Unmarshal([]byte(*m.Body), &b); err != nil {
			t.Fatalf("%s: body %s: %v", queue, *m.Body, err)
		}
		if m.Attributes["MessageGroupId"] != b.Group || m.Attributes["MessageDeduplicationId"] == "" {
			t.Fatalf("%s: message %s has attributes %v, want its group and a deduplication id", queue, *m.Body, m.Attributes)
		}
		got[b.Group] = append(got[b.Group], b.N)
	}
	var want []int
	for n := range perGroup {
		if keep(n) {
			want = append(want, n)
		}
	}
	for _, g := range []string{"a", "b"} {
		if !slices.Equal(got[g], want) {
			t.Errorf("%s group %s: received %v, want %v in order", queue, g, got[g], want)
		}
	}
}

func TestFilterPolicies(t *testing.T) {
	t.Parallel()
	svc, c, q := start(t)
	ctx := context.Background()
	topic := createTopic(t, c, "filtered")
	byAttr := subscribedQueue(t, c, q, *topic.TopicArn, "by-attr", map[string]string{"RawMessageDelivery": "true",
		"FilterPolicy": `{"kind":["order"],"total":[{"numeric":[">",100]}]}`})
	byBody := subscribedQueue(t, c, q, *topic.TopicArn, "by-body", map[string]string{"RawMessageDelivery": "true",
		"FilterPolicyScope": "MessageBody", "FilterPolicy": `{"detail":{"region":[{"prefix":"eu-"}]}}`})
	publish := func(body, kind, total string) {
		t.Helper()
		attrs := map[string]types.MessageAttributeValue{"kind": {DataType: aws.String("String"), StringValue: aws.String(kind)},
			"total": {DataType: aws.String("Number"), StringValue: aws.String(total)}}
		if _, err := c.Publish(ctx, &awssns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String(body), MessageAttributes: attrs}); err != nil {
			t.Fatal(err)
		}
	}
	publish(`{"detail":{"region":"eu-west-1"},"n":1}`, "order", "150")
	publish(`{"detail":{"region":"us-east-1"},"n":2}`, "order", "50")
	publish(`not json`, "refund", "500")
	settled(t, svc, *topic.TopicArn, 6)
	if got := bodies(drain(t, q, byAttr)); !slices.Equal(got, []string{`{"detail":{"region":"eu-west-1"},"n":1}`}) {
		t.Fatalf("attribute policy delivered %q", got)
	}
	if got := bodies(drain(t, q, byBody)); !slices.Equal(got, []string{`{"detail":{"region":"eu-west-1"},"n":1}`}) {
		t.Fatalf("body policy delivered %q", got)
	}
	if m := svc.Metrics()[*topic.TopicArn]; m.NumberOfNotificationsFilteredOut != 4 {
		t.Fatalf("metrics %+v, want 4 filtered out", m)
	}
	subs, err := c.ListSubscriptionsByTopic(ctx, &awssns.ListSubscriptionsByTopicInput{TopicArn: topic.TopicArn})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range subs.Subscriptions {
		sa, err := c.GetSubscriptionAttributes(ctx, &awssns.GetSubscriptionAttributesInput{SubscriptionArn: s.SubscriptionArn})
		if err != nil || sa.Attributes["FilterPolicy"] == "" || sa.Attributes["FilterPolicyScope"] == "" {
			t.Fatalf("subscription attributes %v %v: want the policy and its scope", sa, err)
		}
		if sa.Attributes["FilterPolicyScope"] == "MessageBody" {
			_, err := c.SetSubscriptionAttributes(ctx, &awssns.SetSubscriptionAttributesInput{SubscriptionArn: s.SubscriptionArn,
				AttributeName: aws.String("FilterPolicyScope"), AttributeValue: aws.String("MessageAttributes")})
			wantInvalid(t, err, "a nested policy on message attributes")
		}
	}
	_, err = c.Subscribe(ctx, &awssns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String("arn:aws:sqs:us-east-1:000000000000:nested"),
		Attributes: map[string]string{"FilterPolicy": `{"detail":{"region":["eu-west-1"]}}`}})
	wantInvalid(t, err, "a nested policy in the default scope")
}
