package sns_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssns "github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sns"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sqs"
)

type queues struct{ q *sqs.Service }

func (a queues) DeliverAttributes(arn string, m sns.QueueMessage) (string, error) {
	attrs := map[string]sqs.MessageAttribute{}
	for k, v := range m.Attributes {
		attrs[k] = sqs.MessageAttribute{DataType: v.DataType, StringValue: v.StringValue, BinaryValue: v.BinaryValue}
	}
	return a.q.DeliverTo(arn, sqs.Delivery{Body: m.Body, Attributes: attrs, GroupID: m.GroupID, DeduplicationID: m.DeduplicationID})
}

func (a queues) QueuePolicy(arn string) (string, bool) { return a.q.QueuePolicy(arn) }

func start(t *testing.T) (*sns.Service, *awssns.Client, *awssqs.Client) {
	t.Helper()
	return startWithClock(t, nil)
}

// startWithClock starts SNS and SQS on the clock now (time.Now when nil).
func startWithClock(t *testing.T, now func() time.Time) (*sns.Service, *awssns.Client, *awssqs.Client) {
	t.Helper()
	stack := localawstest.StartEmpty(t)
	stack.Env().Now = now
	q := sqs.New(stack.Env())
	svc := sns.New(stack.Env(), sns.Deps{Queues: func() (sns.QueueSink, error) { return queues{q}, nil }})
	localawstest.Serve(t, stack, q, svc)
	cfg := localawstest.Config(stack)
	return svc, awssns.NewFromConfig(cfg), awssqs.NewFromConfig(cfg)
}

func TestTopicsAndSubscriptions(t *testing.T) {
	t.Parallel()
	_, c, _ := start(t)
	ctx := context.Background()
	out, err := c.CreateTopic(ctx, &awssns.CreateTopicInput{Name: aws.String("events"), Attributes: map[string]string{"DisplayName": "E"},
		Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("a")}}})
	if err != nil || *out.TopicArn != "arn:aws:sns:us-east-1:000000000000:events" {
		t.Fatalf("CreateTopic %v %v", out, err)
	}
	again, err := c.CreateTopic(ctx, &awssns.CreateTopicInput{Name: aws.String("events"), Attributes: map[string]string{"DisplayName": "E"}})
	if err != nil || *again.TopicArn != *out.TopicArn {
		t.Fatalf("idempotent CreateTopic %v %v", again, err)
	}
	_, err = c.CreateTopic(ctx, &awssns.CreateTopicInput{Name: aws.String("events"), Attributes: map[string]string{"DisplayName": "other"}})
	localawstest.WantError[*types.InvalidParameterException](t, err, "CreateTopic with other attributes")
	if _, err := c.SetTopicAttributes(ctx, &awssns.SetTopicAttributesInput{TopicArn: out.TopicArn, AttributeName: aws.String("DisplayName"), AttributeValue: aws.String("Events")}); err != nil {
		t.Fatal(err)
	}
	attrs, err := c.GetTopicAttributes(ctx, &awssns.GetTopicAttributesInput{TopicArn: out.TopicArn})
	if err != nil || attrs.Attributes["DisplayName"] != "Events" || attrs.Attributes["TopicArn"] != *out.TopicArn || attrs.Attributes["Policy"] == "" {
		t.Fatalf("GetTopicAttributes %v %v", attrs, err)
	}
	sub, err := c.Subscribe(ctx, &awssns.SubscribeInput{TopicArn: out.TopicArn, Protocol: aws.String("sqs"),
		Endpoint: aws.String("arn:aws:sqs:us-east-1:000000000000:q"), Attributes: map[string]string{"RawMessageDelivery": "true"}, ReturnSubscriptionArn: true})
	if err != nil || !strings.HasPrefix(*sub.SubscriptionArn, *out.TopicArn+":") {
		t.Fatalf("Subscribe %v %v", sub, err)
	}
	sa, err := c.GetSubscriptionAttributes(ctx, &awssns.GetSubscriptionAttributesInput{SubscriptionArn: sub.SubscriptionArn})
	if err != nil || sa.Attributes["RawMessageDelivery"] != "true" || sa.Attributes["Protocol"] != "sqs" || sa.Attributes["PendingConfirmation"] != "false" {
		t.Fatalf("GetSubscriptionAttributes %v %v", sa, err)
	}
	if _, err := c.SetSubscriptionAttributes(ctx, &awssns.SetSubscriptionAttributesInput{SubscriptionArn: sub.SubscriptionArn,
		AttributeName: aws.String("RawMessageDelivery"), AttributeValue: aws.String("false")}); err != nil {
		t.Fatal(err)
	}
	subs, err := c.ListSubscriptionsByTopic(ctx, &awssns.ListSubscriptionsByTopicInput{TopicArn: out.TopicArn})
	if err != nil || len(subs.Subscriptions) != 1 || *subs.Subscriptions[0].Endpoint != "arn:aws:sqs:us-east-1:000000000000:q" {
		t.Fatalf("ListSubscriptionsByTopic %v %v", subs, err)
	}
	tags, err := c.ListTagsForResource(ctx, &awssns.ListTagsForResourceInput{ResourceArn: out.TopicArn})
	if err != nil || len(tags.Tags) != 1 {
		t.Fatalf("tags %v %v", tags, err)
	}
	list, err := c.ListTopics(ctx, &awssns.ListTopicsInput{})
	if err != nil || len(list.Topics) != 1 {
		t.Fatalf("ListTopics %v %v", list, err)
	}
	if _, err := c.Unsubscribe(ctx, &awssns.UnsubscribeInput{SubscriptionArn: sub.SubscriptionArn}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteTopic(ctx, &awssns.DeleteTopicInput{TopicArn: out.TopicArn}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetTopicAttributes(ctx, &awssns.GetTopicAttributesInput{TopicArn: out.TopicArn})
	localawstest.WantError[*types.NotFoundException](t, err, "deleted topic")
}

func receive(t *testing.T, c *awssqs.Client, url string, wait int32) []string {
	t.Helper()
	out, err := c.ReceiveMessage(context.Background(), &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), WaitTimeSeconds: wait,
		MaxNumberOfMessages: 10, MessageAttributeNames: []string{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	for _, m := range out.Messages {
		b := *m.Body
		if a, ok := m.MessageAttributes["kind"]; ok {
			b += " kind=" + *a.StringValue
		}
		bodies = append(bodies, b)
	}
	return bodies
}

// createTopic creates a standard topic.
func createTopic(t *testing.T, c *awssns.Client, name string) *awssns.CreateTopicOutput {
	t.Helper()
	out, err := c.CreateTopic(context.Background(), &awssns.CreateTopicInput{Name: aws.String(name)})
	if err != nil {
		t.Fatalf("CreateTopic %s: %v", name, err)
	}
	return out
}

func TestPublishToSQSAllowedAndDenied(t *testing.T) {
	t.Parallel()
	svc, c, q := start(t)
	ctx := context.Background()
	topic := createTopic(t, c, "t")
	mk := func(name, sourceArn string, raw bool) string {
		out, err := q.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		arn := "arn:aws:sqs:us-east-1:000000000000:" + name
		policy := localawstest.SendMessagePolicy("sns.amazonaws.com", arn, sourceArn)
		if _, err := q.SetQueueAttributes(ctx, &awssqs.SetQueueAttributesInput{QueueUrl: out.QueueUrl, Attributes: map[string]string{"Policy": policy}}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Subscribe(ctx, &awssns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(arn),
			Attributes: map[string]string{"RawMessageDelivery": fmt.Sprint(raw)}}); err != nil {
			t.Fatal(err)
		}
		return *out.QueueUrl
	}
	wrapped := mk("wrapped", *topic.TopicArn, false)
	raw := mk("raw", *topic.TopicArn, true)
	denied := mk("denied", *topic.TopicArn+"-other", false)

	pub, err := c.Publish(ctx, &awssns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String(`{"order":1}`), Subject: aws.String("s"),
		MessageAttributes: map[string]types.MessageAttributeValue{"kind": {DataType: aws.String("String"), StringValue: aws.String("order")}}})
	if err != nil {
		t.Fatal(err)
	}
	got := receive(t, q, wrapped, 10)
	if len(got) != 1 {
		t.Fatalf("wrapped queue got %q", got)
	}
	var n map[string]any
	if err := json.Unmarshal([]byte(got[0]), &n); err != nil {
		t.Fatal(err)
	}
	if n["Type"] != "Notification" || n["MessageId"] != *pub.MessageId || n["TopicArn"] != *topic.TopicArn || n["Message"] != `{"order":1}` ||
		n["Subject"] != "s" || n["SignatureVersion"] != "1" || n["Timestamp"] == nil {
		t.Fatalf("notification %s", got[0])
	}
	if a, _ := n["MessageAttributes"].(map[string]any); a["kind"] == nil {
		t.Fatalf("notification attributes %v", n["MessageAttributes"])
	}
	if got := receive(t, q, raw, 10); len(got) != 1 || got[0] != `{"order":1} kind=order` {
		t.Fatalf("raw queue got %q", got)
	}
	localawstest.Eventually(t, 10*time.Second, "the failed notification in the topic's metrics", func() bool {
		return svc.Metrics()[*topic.TopicArn].NumberOfNotificationsFailed == 1
	})
	if got := receive(t, q, denied, 0); len(got) != 0 {
		t.Fatalf("delivered to a queue whose policy does not allow the topic: %q", got)
	}
}

func TestPublishBatch(t *testing.T) {
	t.Parallel()
	_, c, _ := start(t)
	ctx := context.Background()
	topic := createTopic(t, c, "b")
	out, err := c.PublishBatch(ctx, &awssns.PublishBatchInput{TopicArn: topic.TopicArn, PublishBatchRequestEntries: []types.PublishBatchRequestEntry{
		{Id: aws.String("1"), Message: aws.String("one")},
		{Id: aws.String("2"), Message: aws.String("")},
		{Id: aws.String("3"), Message: aws.String("three"), MessageAttributes: map[string]types.MessageAttributeValue{
			"n": {DataType: aws.String("Number"), StringValue: aws.String("x")}}},
		{Id: aws.String("4"), Message: aws.String("four")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Successful) != 2 || *out.Successful[0].Id != "1" || *out.Successful[1].Id != "4" || out.Successful[0].MessageId == nil {
		t.Fatalf("successful %+v", out.Successful)
	}
	if len(out.Failed) != 2 || *out.Failed[0].Id != "2" || *out.Failed[0].Code != "InvalidParameter" || !out.Failed[0].SenderFault || *out.Failed[1].Id != "3" {
		t.Fatalf("failed %+v", out.Failed)
	}
	_, err = c.PublishBatch(ctx, &awssns.PublishBatchInput{TopicArn: topic.TopicArn, PublishBatchRequestEntries: []types.PublishBatchRequestEntry{
		{Id: aws.String("1"), Message: aws.String("a")}, {Id: aws.String("1"), Message: aws.String("b")}}})
	localawstest.WantError[*types.BatchEntryIdsNotDistinctException](t, err, "duplicate ids")
	many := make([]types.PublishBatchRequestEntry, 11)
	for i := range many {
		many[i] = types.PublishBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), Message: aws.String("m")}
	}
	_, err = c.PublishBatch(ctx, &awssns.PublishBatchInput{TopicArn: topic.TopicArn, PublishBatchRequestEntries: many})
	localawstest.WantError[*types.TooManyEntriesInBatchRequestException](t, err, "11 entries")
	big := strings.Repeat("x", 200*1024)
	_, err = c.PublishBatch(ctx, &awssns.PublishBatchInput{TopicArn: topic.TopicArn, PublishBatchRequestEntries: []types.PublishBatchRequestEntry{
		{Id: aws.String("a"), Message: aws.String(big)}, {Id: aws.String("b"), Message: aws.String(big)}}})
	localawstest.WantError[*types.BatchRequestTooLongException](t, err, "over 256 KB")
}

func TestTopicTags(t *testing.T) {
	t.Parallel()
	_, c, _ := start(t)
	ctx := context.Background()
	arn := createTopic(t, c, "tagged").TopicArn
	list := func() map[string]string {
		t.Helper()
		out, err := c.ListTagsForResource(ctx, &awssns.ListTagsForResourceInput{ResourceArn: arn})
		if err != nil {
			t.Fatalf("ListTagsForResource: %v", err)
		}
		m := map[string]string{}
		for _, tag := range out.Tags {
			m[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
		}
		return m
	}
	if _, err := c.TagResource(ctx, &awssns.TagResourceInput{ResourceArn: arn, Tags: []types.Tag{
		{Key: aws.String("team"), Value: aws.String("a")}, {Key: aws.String("env"), Value: aws.String("dev")}}}); err != nil {
		t.Fatal(err)
	}
	if got := list(); len(got) != 2 || got["team"] != "a" || got["env"] != "dev" {
		t.Fatalf("tags after TagResource = %v", got)
	}
	if _, err := c.UntagResource(ctx, &awssns.UntagResourceInput{ResourceArn: arn, TagKeys: []string{"env"}}); err != nil {
		t.Fatal(err)
	}
	if got := list(); len(got) != 1 || got["team"] != "a" {
		t.Fatalf("tags after UntagResource = %v", got)
	}
	var many []types.Tag
	for i := range 50 {
		many = append(many, types.Tag{Key: aws.String(fmt.Sprintf("k%02d", i)), Value: aws.String("v")})
	}
	_, err := c.TagResource(ctx, &awssns.TagResourceInput{ResourceArn: arn, Tags: many})
	localawstest.WantCode(t, err, "TagLimitExceeded", "51 tags")
	_, err = c.ListTagsForResource(ctx, &awssns.ListTagsForResourceInput{ResourceArn: aws.String("arn:aws:sns:us-east-1:000000000000:none")})
	localawstest.WantError[*types.NotFoundException](t, err, "tags of a missing topic")
}

// TestMaximumMessageSize: a topic takes messages, and batches, up to its
// MaximumMessageSize (1,024 to 1,048,576 bytes, 262,144 when unset), and one
// set above 256 KiB takes at most 100 subscriptions.
func TestMaximumMessageSize(t *testing.T) {
	t.Parallel()
	_, c, q := start(t)
	ctx := context.Background()
	topic := createTopic(t, c, "large")
	setSize := func(arn *string, v string) error {
		_, err := c.SetTopicAttributes(ctx, &awssns.SetTopicAttributesInput{TopicArn: arn,
			AttributeName: aws.String("MaximumMessageSize"), AttributeValue: aws.String(v)})
		return err
	}
	publish := func(size int) error {
		_, err := c.Publish(ctx, &awssns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String(strings.Repeat("x", size))})
		return err
	}
	localawstest.WantError[*types.InvalidParameterException](t, publish(sns.MaxMessageBytes+1), "a message over the default size")
	for _, bad := range []string{"1023", "1048577", "big"} {
		localawstest.WantError[*types.InvalidParameterException](t, setSize(topic.TopicArn, bad), "MaximumMessageSize "+bad)
	}

	crowded := createTopic(t, c, "crowded")
	subscribe := func(arn *string, i int) error {
		_, err := c.Subscribe(ctx, &awssns.SubscribeInput{TopicArn: arn, Protocol: aws.String("sqs"),
			Endpoint: aws.String(fmt.Sprintf("arn:aws:sqs:us-east-1:000000000000:q%d", i))})
		return err
	}
	for i := range sns.LargeTopicMaxSubscriptions + 1 {
		if err := subscribe(crowded.TopicArn, i); err != nil {
			t.Fatal(err)
		}
	}
	localawstest.WantError[*types.InvalidParameterException](t, setSize(crowded.TopicArn, "262145"), "raising the size of a topic of 101 subscriptions")

	queue, err := q.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("large"), Attributes: map[string]string{
		"Policy": localawstest.SendMessagePolicy("sns.amazonaws.com", "arn:aws:sqs:us-east-1:000000000000:large", *topic.TopicArn)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := setSize(topic.TopicArn, "1048576"); err != nil {
		t.Fatal(err)
	}
	attrs, err := c.GetTopicAttributes(ctx, &awssns.GetTopicAttributesInput{TopicArn: topic.TopicArn})
	if err != nil || attrs.Attributes["MaximumMessageSize"] != "1048576" {
		t.Fatalf("GetTopicAttributes: %v, %v", attrs, err)
	}
	if _, err := c.Subscribe(ctx, &awssns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"),
		Endpoint: aws.String("arn:aws:sqs:us-east-1:000000000000:large")}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < sns.LargeTopicMaxSubscriptions; i++ {
		if err := subscribe(topic.TopicArn, i); err != nil {
			t.Fatal(err)
		}
	}
	localawstest.WantError[*types.InvalidParameterException](t, subscribe(topic.TopicArn, sns.LargeTopicMaxSubscriptions), "a 101st subscription to a large topic")
	if err := publish(900 * 1024); err != nil {
		t.Fatalf("a 900 KiB message to a 1 MiB topic: %v", err)
	}
	localawstest.WantError[*types.InvalidParameterException](t, publish(sns.MaxMaximumMessageSize+1), "a message over the topic's size")
	big := strings.Repeat("x", 400*1024)
	batch := func(n int) error {
		entries := make([]types.PublishBatchRequestEntry, n)
		for i := range entries {
			entries[i] = types.PublishBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), Message: aws.String(big)}
		}
		_, err := c.PublishBatch(ctx, &awssns.PublishBatchInput{TopicArn: topic.TopicArn, PublishBatchRequestEntries: entries})
		return err
	}
	if err := batch(2); err != nil {
		t.Fatalf("an 800 KiB batch to a 1 MiB topic: %v", err)
	}
	localawstest.WantError[*types.BatchRequestTooLongException](t, batch(3), "a 1.2 MiB batch")
	var got []string
	localawstest.Eventually(t, 30*time.Second, "the three messages in the queue", func() bool {
		got = append(got, receive(t, q, *queue.QueueUrl, 1)...)
		return len(got) >= 3
	})
	if len(got) != 3 {
		t.Fatalf("the queue got %d messages, want 3", len(got))
	}
}
