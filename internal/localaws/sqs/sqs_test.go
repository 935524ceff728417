package sqs_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/schemas"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/transport/http/protocol/awsquery"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sqs"
)

// protocol is a wire protocol the SDK client is switched to: SQS serves
// both the JSON protocol of current SDKs and the awsQuery (XML) protocol of
// older ones.
type protocol = localawstest.Protocol[awssqs.Options]

var protocols = []protocol{
	{Name: "json", Option: func(*awssqs.Options) {}},
	{Name: "query", Option: func(o *awssqs.Options) { o.Protocol = awsquery.New(schemas.AmazonSQS) }},
}

// eachProtocol runs test once per wire protocol, in parallel.
func eachProtocol(t *testing.T, test func(*testing.T, protocol)) {
	localawstest.EachProtocol(t, protocols, test)
}

func TestQueueLifecycle(t *testing.T) { eachProtocol(t, testQueueLifecycle) }

func TestSendReceiveDelete(t *testing.T) { eachProtocol(t, testSendReceiveDelete) }

func TestBatches(t *testing.T) { eachProtocol(t, testBatches) }

func TestLongPollingReturnsEarly(t *testing.T) { eachProtocol(t, testLongPollingReturnsEarly) }

func TestVisibilityTimeoutAndRedrive(t *testing.T) { eachProtocol(t, testVisibilityTimeoutAndRedrive) }

func TestRolePrincipalsAndDeliver(t *testing.T) { eachProtocol(t, testRolePrincipalsAndDeliver) }

// start starts an SQS service, on a stack of its own, and a client of it
// speaking p.
func start(t *testing.T, p protocol) (*localaws.Stack, *sqs.Service, *awssqs.Client) {
	t.Helper()
	return startOn(t, p, nil)
}

// startWithClock starts an SQS service on a clock the test moves.
func startWithClock(t *testing.T, p protocol) (*sqs.Service, *awssqs.Client, *localawstest.Clock) {
	t.Helper()
	clk := localawstest.NewClock(time.Now())
	_, svc, c := startOn(t, p, clk.Now)
	return svc, c, clk
}

// startOn is start with the stack's clock now, or the real one when nil.
func startOn(t *testing.T, p protocol, now func() time.Time) (*localaws.Stack, *sqs.Service, *awssqs.Client) {
	t.Helper()
	stack := localawstest.StartEmpty(t)
	env := stack.Env()
	if now != nil {
		env.Now = now
	}
	svc := sqs.New(env)
	localawstest.Serve(t, stack, svc)
	return stack, svc, awssqs.NewFromConfig(localawstest.Config(stack), p.Option)
}

func createQueue(t *testing.T, c *awssqs.Client, name string, attrs map[string]string) string {
	t.Helper()
	out, err := c.CreateQueue(context.Background(), &awssqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatalf("CreateQueue %s: %v", name, err)
	}
	return *out.QueueUrl
}

func queueArn(t *testing.T, c *awssqs.Client, url string) string {
	t.Helper()
	return queueAttributes(t, c, url, types.QueueAttributeNameQueueArn)["QueueArn"]
}

// queueAttributes reads the named attributes of a queue (all without names).
func queueAttributes(t *testing.T, c *awssqs.Client, url string, names ...types.QueueAttributeName) map[string]string {
	t.Helper()
	if len(names) == 0 {
		names = []types.QueueAttributeName{types.QueueAttributeNameAll}
	}
	out, err := c.GetQueueAttributes(context.Background(), &awssqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: names})
	if err != nil {
		t.Fatalf("GetQueueAttributes: %v", err)
	}
	return out.Attributes
}

// wantQueueAttributes reads all attributes of a queue and fails the test
// where one of want differs; it returns the attributes read.
func wantQueueAttributes(t *testing.T, c *awssqs.Client, url, what string, want map[string]string) map[string]string {
	t.Helper()
	attrs := queueAttributes(t, c, url)
	for k, v := range want {
		if attrs[k] != v {
			t.Errorf("%s: attribute %s = %q, want %q", what, k, attrs[k], v)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	return attrs
}

func testQueueLifecycle(t *testing.T, p protocol) {
	stack, _, c := start(t, p)
	ctx := context.Background()
	url := createQueue(t, c, "orders", map[string]string{"VisibilityTimeout": "45", "DelaySeconds": "0"})
	if want := stack.Endpoint() + "/000000000000/orders"; url != want {
		t.Fatalf("QueueUrl %s, want %s", url, want)
	}
	// Identical create is idempotent; a different value fails.
	if again := createQueue(t, c, "orders", map[string]string{"VisibilityTimeout": "45"}); again != url {
		t.Fatalf("idempotent create gave %s", again)
	}
	_, err := c.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("orders"), Attributes: map[string]string{"VisibilityTimeout": "10"}})
	localawstest.WantError[*types.QueueNameExists](t, err, "create with other attributes")
	// The JSON protocol carries the awsQuery code in x-amzn-query-error;
	// awsQuery has it as the error's Code, which the SDK maps to the type.
	if p.Name == "json" && (localawstest.ErrorCode(err) != "QueueAlreadyExists") {
		t.Fatalf("error code %v, want the query code QueueAlreadyExists", err)
	}

	got, err := c.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("orders")})
	if err != nil || *got.QueueUrl != url {
		t.Fatalf("GetQueueUrl: %v %v", got, err)
	}
	dlq := checkQueueAttributes(t, c, url)

	if _, err := c.TagQueue(ctx, &awssqs.TagQueueInput{QueueUrl: aws.String(url), Tags: map[string]string{"team": "a", "env": "dev"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UntagQueue(ctx, &awssqs.UntagQueueInput{QueueUrl: aws.String(url), TagKeys: []string{"env"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := c.ListQueueTags(ctx, &awssqs.ListQueueTagsInput{QueueUrl: aws.String(url)})
	if err != nil || len(tags.Tags) != 1 || tags.Tags["team"] != "a" {
		t.Fatalf("tags %v %v", tags, err)
	}

	list, err := c.ListQueues(ctx, &awssqs.ListQueuesInput{QueueNamePrefix: aws.String("orders")})
	if err != nil || len(list.QueueUrls) != 2 {
		t.Fatalf("ListQueues %v %v", list, err)
	}
	page, err := c.ListQueues(ctx, &awssqs.ListQueuesInput{MaxResults: aws.Int32(1)})
	if err != nil || len(page.QueueUrls) != 1 || page.NextToken == nil {
		t.Fatalf("ListQueues page %v %v", page, err)
	}
	page, err = c.ListQueues(ctx, &awssqs.ListQueuesInput{MaxResults: aws.Int32(1), NextToken: page.NextToken})
	if err != nil || len(page.QueueUrls) != 1 || page.QueueUrls[0] != dlq {
		t.Fatalf("ListQueues second page %v %v", page, err)
	}

	if _, err := c.DeleteQueue(ctx, &awssqs.DeleteQueueInput{QueueUrl: aws.String(url)}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetQueueUrl(ctx, &awssqs.GetQueueUrlInput{QueueName: aws.String("orders")})
	localawstest.WantError[*types.QueueDoesNotExist](t, err, "after delete")
	_, err = c.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("orders")})
	localawstest.WantError[*types.QueueDeletedRecently](t, err, "recreate at once")
	_, err = c.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("bad name!")})
	localawstest.WantCode(t, err, "InvalidParameterValue", "bad name")
}

// checkQueueAttributes checks the defaults of queue url (created with
// VisibilityTimeout 45), sets a redrive policy to a new dead-letter queue,
// whose URL it returns, and checks that invalid attributes are refused.
func checkQueueAttributes(t *testing.T, c *awssqs.Client, url string) (dlq string) {
	t.Helper()
	ctx := context.Background()
	attrs := wantQueueAttributes(t, c, url, "defaults", map[string]string{
		"VisibilityTimeout": "45", "MessageRetentionPeriod": "345600", "MaximumMessageSize": "1048576",
		"ReceiveMessageWaitTimeSeconds": "0", "ApproximateNumberOfMessages": "0", "SqsManagedSseEnabled": "true",
		"QueueArn": "arn:aws:sqs:us-east-1:000000000000:orders",
	})
	if ts, _ := strconv.ParseInt(attrs["CreatedTimestamp"], 10, 64); ts < time.Now().Add(-time.Minute).Unix() {
		t.Errorf("CreatedTimestamp %q", attrs["CreatedTimestamp"])
	}

	dlq = createQueue(t, c, "orders-dlq", nil)
	redrive := fmt.Sprintf(`{"deadLetterTargetArn":"%s","maxReceiveCount":"3"}`, queueArn(t, c, dlq))
	if _, err := c.SetQueueAttributes(ctx, &awssqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{
		"RedrivePolicy": redrive, "KmsMasterKeyId": "alias/aws/sqs", "SqsManagedSseEnabled": "false"}}); err != nil {
		t.Fatal(err)
	}
	attrs = queueAttributes(t, c, url, "RedrivePolicy", "KmsMasterKeyId")
	if attrs["RedrivePolicy"] != fmt.Sprintf(`{"deadLetterTargetArn":"%s","maxReceiveCount":3}`, queueArn(t, c, dlq)) || attrs["KmsMasterKeyId"] != "alias/aws/sqs" {
		t.Fatalf("attributes after set: %v", attrs)
	}
	_, err := c.SetQueueAttributes(ctx, &awssqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{"VisibilityTimeout": "50000"}})
	localawstest.WantError[*types.InvalidAttributeValue](t, err, "out of range")
	_, err = c.SetQueueAttributes(ctx, &awssqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{"Bogus": "1"}})
	localawstest.WantError[*types.InvalidAttributeName](t, err, "unknown attribute")
	return dlq
}

func testSendReceiveDelete(t *testing.T, p protocol) {
	_, _, c := start(t, p)
	ctx := context.Background()
	url := createQueue(t, c, "q", nil)
	sent, err := c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(`{"hello":"world"}`),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"kind":  {DataType: aws.String("String"), StringValue: aws.String("order")},
			"count": {DataType: aws.String("Number"), StringValue: aws.String("3")},
			"blob":  {DataType: aws.String("Binary"), BinaryValue: []byte{1, 2, 3}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	// md5 of the body, as md5sum computes it.
	if *sent.MD5OfMessageBody != "fbc24bcc7a1794758fc1327fcfebdaf6" {
		t.Fatalf("MD5OfMessageBody %s", *sent.MD5OfMessageBody)
	}
	if sent.MD5OfMessageAttributes == nil || len(*sent.MD5OfMessageAttributes) != 32 {
		t.Fatalf("MD5OfMessageAttributes %v", sent.MD5OfMessageAttributes)
	}
	got, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}, MessageAttributeNames: []string{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 {
		t.Fatalf("received %d messages", len(got.Messages))
	}
	m := got.Messages[0]
	if *m.MessageId != *sent.MessageId || *m.Body != `{"hello":"world"}` || m.Attributes["ApproximateReceiveCount"] != "1" {
		t.Fatalf("message %+v", m)
	}
	if ts, _ := strconv.ParseInt(m.Attributes["SentTimestamp"], 10, 64); ts < time.Now().Add(-time.Minute).UnixMilli() {
		t.Fatalf("SentTimestamp %q", m.Attributes["SentTimestamp"])
	}
	if *m.MD5OfMessageAttributes != *sent.MD5OfMessageAttributes || string(m.MessageAttributes["blob"].BinaryValue) != "\x01\x02\x03" ||
		*m.MessageAttributes["count"].StringValue != "3" {
		t.Fatalf("attributes %+v", m.MessageAttributes)
	}
	// In flight: not received again; counted as not visible.
	again, _ := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url)})
	if len(again.Messages) != 0 {
		t.Fatal("an in-flight message was received again")
	}
	wantQueueAttributes(t, c, url, "in flight", map[string]string{"ApproximateNumberOfMessagesNotVisible": "1", "ApproximateNumberOfMessages": "0"})
	if _, err := c.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String("garbage")})
	localawstest.WantError[*types.ReceiptHandleIsInvalid](t, err, "bad handle")
	wantQueueAttributes(t, c, url, "after delete", map[string]string{"ApproximateNumberOfMessagesNotVisible": "0"})
}

func testBatches(t *testing.T, p protocol) {
	_, _, c := start(t, p)
	ctx := context.Background()
	url := createQueue(t, c, "batch", nil)
	out, err := c.SendMessageBatch(ctx, &awssqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("one")},
		{Id: aws.String("b"), MessageBody: aws.String("two"), DelaySeconds: 5},
		{Id: aws.String("c"), MessageBody: aws.String("bad \u0000 char")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Successful) != 2 || len(out.Failed) != 1 || *out.Failed[0].Id != "c" || *out.Failed[0].Code != "InvalidMessageContents" || !out.Failed[0].SenderFault {
		t.Fatalf("batch result %+v", out)
	}
	_, err = c.SendMessageBatch(ctx, &awssqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("one")}, {Id: aws.String("a"), MessageBody: aws.String("two")}}})
	localawstest.WantError[*types.BatchEntryIdsNotDistinct](t, err, "duplicate ids")
	entries := make([]types.SendMessageBatchRequestEntry, 11)
	for i := range entries {
		entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String("x")}
	}
	_, err = c.SendMessageBatch(ctx, &awssqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
	localawstest.WantError[*types.TooManyEntriesInBatchRequest](t, err, "11 entries")
	wantQueueAttributes(t, c, url, "after batch", map[string]string{"ApproximateNumberOfMessages": "1", "ApproximateNumberOfMessagesDelayed": "1"})
	got, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
	if err != nil || len(got.Messages) != 1 || *got.Messages[0].Body != "one" {
		t.Fatalf("receive %+v %v", got, err)
	}
	vis, err := c.ChangeMessageVisibilityBatch(ctx, &awssqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(url), Entries: []types.ChangeMessageVisibilityBatchRequestEntry{
		{Id: aws.String("v"), ReceiptHandle: got.Messages[0].ReceiptHandle, VisibilityTimeout: 0}, {Id: aws.String("w"), ReceiptHandle: aws.String("nope")}}})
	if err != nil || len(vis.Successful) != 1 || *vis.Successful[0].Id != "v" || len(vis.Failed) != 1 || *vis.Failed[0].Id != "w" || *vis.Failed[0].Code != "ReceiptHandleIsInvalid" {
		t.Fatalf("visibility batch %+v %v", vis, err)
	}
	// Visible again at once: a new receive gets it with a new handle.
	got, err = c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10})
	if err != nil || len(got.Messages) != 1 || *got.Messages[0].Body != "one" {
		t.Fatalf("receive after visibility 0 %+v %v", got, err)
	}
	del, err := c.DeleteMessageBatch(ctx, &awssqs.DeleteMessageBatchInput{QueueUrl: aws.String(url), Entries: []types.DeleteMessageBatchRequestEntry{
		{Id: aws.String("x"), ReceiptHandle: got.Messages[0].ReceiptHandle}, {Id: aws.String("y"), ReceiptHandle: aws.String("nope")}}})
	if err != nil || len(del.Successful) != 1 || len(del.Failed) != 1 || *del.Failed[0].Code != "ReceiptHandleIsInvalid" {
		t.Fatalf("delete batch %+v %v", del, err)
	}
	_, err = c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 11})
	localawstest.WantCode(t, err, "InvalidParameterValue", "MaxNumberOfMessages 11")
	if _, err := c.PurgeQueue(ctx, &awssqs.PurgeQueueInput{QueueUrl: aws.String(url)}); err != nil {
		t.Fatal(err)
	}
	_, err = c.PurgeQueue(ctx, &awssqs.PurgeQueueInput{QueueUrl: aws.String(url)})
	localawstest.WantError[*types.PurgeQueueInProgress](t, err, "second purge")
	wantQueueAttributes(t, c, url, "after purge", map[string]string{"ApproximateNumberOfMessagesDelayed": "0"})
}

func testLongPollingReturnsEarly(t *testing.T, p protocol) {
	_, _, c := start(t, p)
	ctx := context.Background()
	url := createQueue(t, c, "poll", nil)
	type result struct {
		out     *awssqs.ReceiveMessageOutput
		err     error
		elapsed time.Duration
	}
	done := make(chan result, 1)
	began := time.Now()
	go func() {
		out, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), WaitTimeSeconds: 20})
		done <- result{out, err, time.Since(began)}
	}()
	// Send once the poll has had a chance to start; the poll must see the
	// message whether it started before or after.
	time.AfterFunc(200*time.Millisecond, func() {
		_, _ = c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("wake")})
	})
	select {
	case r := <-done:
		if r.err != nil || len(r.out.Messages) != 1 || *r.out.Messages[0].Body != "wake" {
			t.Fatalf("long poll %+v %v", r.out, r.err)
		}
		if r.elapsed > 10*time.Second {
			t.Fatalf("long poll returned after %v, not as soon as the message arrived", r.elapsed)
		}
	case <-time.After(25 * time.Second):
		t.Fatal("long poll did not return")
	}
	// An empty long poll waits about WaitTimeSeconds.
	began = time.Now()
	out, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), WaitTimeSeconds: 1})
	if err != nil || len(out.Messages) != 0 || time.Since(began) < 900*time.Millisecond {
		t.Fatalf("empty long poll: %v messages after %v, %v", len(out.Messages), time.Since(began), err)
	}
}

func testVisibilityTimeoutAndRedrive(t *testing.T, p protocol) {
	_, _, c := start(t, p)
	ctx := context.Background()
	dlq := createQueue(t, c, "dlq", nil)
	url := createQueue(t, c, "work", map[string]string{
		"RedrivePolicy": fmt.Sprintf(`{"deadLetterTargetArn":"%s","maxReceiveCount":2}`, queueArn(t, c, dlq))})
	sent, err := c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("job")})
	if err != nil {
		t.Fatal(err)
	}
	recv := func(vis int32, wait int32) *awssqs.ReceiveMessageOutput {
		t.Helper()
		out, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), VisibilityTimeout: vis, WaitTimeSeconds: wait,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount}})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	first := recv(1, 0)
	if len(first.Messages) != 1 {
		t.Fatal("first receive empty")
	}
	if len(recv(1, 0).Messages) != 0 {
		t.Fatal("received during the visibility timeout")
	}
	// After the timeout the message is visible again (a long poll wakes
	// for it).
	second := recv(30, 10)
	if len(second.Messages) != 1 || second.Messages[0].Attributes["ApproximateReceiveCount"] != "2" {
		t.Fatalf("second receive %+v", second.Messages)
	}
	// Make it visible now; the next receive exceeds maxReceiveCount and
	// moves it to the DLQ.
	if _, err := c.ChangeMessageVisibility(ctx, &awssqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url),
		ReceiptHandle: second.Messages[0].ReceiptHandle, VisibilityTimeout: 0}); err != nil {
		t.Fatal(err)
	}
	if got := recv(30, 0); len(got.Messages) != 0 {
		t.Fatalf("received past maxReceiveCount: %+v", got.Messages)
	}
	out, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(dlq), WaitTimeSeconds: 5})
	if err != nil || len(out.Messages) != 1 || *out.Messages[0].MessageId != *sent.MessageId || *out.Messages[0].Body != "job" {
		t.Fatalf("DLQ receive %+v %v", out, err)
	}
	// The old receipt handle no longer refers to an in-flight message.
	_, err = c.ChangeMessageVisibility(ctx, &awssqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url),
		ReceiptHandle: first.Messages[0].ReceiptHandle, VisibilityTimeout: 10})
	localawstest.WantError[*types.MessageNotInflight](t, err, "change visibility of a moved message")
	srcs, err := c.ListDeadLetterSourceQueues(ctx, &awssqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(dlq)})
	if err != nil || len(srcs.QueueUrls) != 1 || srcs.QueueUrls[0] != url {
		t.Fatalf("ListDeadLetterSourceQueues %v %v", srcs, err)
	}
}

func TestRetentionExpiry(t *testing.T) {
	t.Parallel()
	_, c, clk := startWithClock(t, protocols[0])
	ctx := context.Background()
	url := createQueue(t, c, "short", map[string]string{"MessageRetentionPeriod": "60"})
	if _, err := c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("old")}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(61 * time.Second)
	out, err := c.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url)})
	if err != nil || len(out.Messages) != 0 {
		t.Fatalf("expired message received: %+v %v", out, err)
	}
}

func testRolePrincipalsAndDeliver(t *testing.T, p protocol) {
	stack, svc, admin := start(t, p)
	ctx := context.Background()
	stack.Env().SetAuthorizer(localawstest.AdminsOnly{})
	url := createQueue(t, admin, "guarded", nil)
	arn := queueArn(t, admin, url)
	role := awssqs.NewFromConfig(localawstest.RoleConfig(stack, "arn:aws:iam::000000000000:role/sender"))

	_, err := role.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x")})
	localawstest.WantCode(t, err, "AccessDenied", "send without permission")
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::000000000000:role/sender"},"Action":"sqs:SendMessage","Resource":"%s"}]}`, arn)
	if _, err := admin.SetQueueAttributes(ctx, &awssqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{"Policy": policy}}); err != nil {
		t.Fatal(err)
	}
	if _, err := role.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x")}); err != nil {
		t.Fatalf("send allowed by the queue policy: %v", err)
	}
	if _, err := role.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url)}); err == nil {
		t.Fatal("receive allowed though only SendMessage is granted")
	}

	got, ok := svc.QueuePolicy(arn)
	if !ok || got != policy {
		t.Fatalf("QueuePolicy %q %v", got, ok)
	}
	if _, ok := svc.QueuePolicy(arn + "-nope"); ok {
		t.Fatal("QueuePolicy of a missing queue")
	}
	id, err := svc.Deliver(arn, "delivered", map[string]string{"source": "test"})
	if err != nil || id == "" {
		t.Fatalf("Deliver: %q %v", id, err)
	}
	if _, err := svc.Deliver(arn+"-nope", "x", nil); err == nil {
		t.Fatal("Deliver to a missing queue succeeded")
	}
	out, err := admin.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, MessageAttributeNames: []string{"All"}})
	if err != nil || len(out.Messages) != 2 {
		t.Fatalf("receive %+v %v", out, err)
	}
	found := false
	for _, m := range out.Messages {
		if *m.MessageId == id && *m.Body == "delivered" && *m.MessageAttributes["source"].StringValue == "test" {
			found = true
		}
	}
	if !found {
		t.Fatalf("delivered message missing: %+v", out.Messages)
	}
}

func TestMD5OfMessageAttributes(t *testing.T) {
	t.Parallel()
	// Bytes 00000001 "a" 00000006 "String" 01 00000001 "b", through md5sum.
	got := sqs.MD5OfMessageAttributes(map[string]sqs.MessageAttribute{"a": {DataType: "String", StringValue: "b"}})
	if got != "bef8bf215374a0a228d67533b1a488be" {
		t.Fatalf("digest %s", got)
	}
	if sqs.MD5OfMessageAttributes(nil) != "" {
		t.Fatal("digest of no attributes")
	}
}

func TestMessageSizes(t *testing.T) { eachProtocol(t, testMessageSizes) }

// testMessageSizes: a new queue takes messages and batches of up to
// 1 MiB, SQS's default since 2025; a queue made with 256 KiB, as older
// queues were, refuses more; MaximumMessageSize stops at 1 MiB.
func testMessageSizes(t *testing.T, p protocol) {
	ctx := context.Background()
	_, _, c := start(t, p)
	url := createQueue(t, c, "large", nil)
	body := strings.Repeat("x", 900*1024)
	if _, err := c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body)}); err != nil {
		t.Fatalf("a 900 KB message: %v", err)
	}
	_, err := c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(strings.Repeat("x", sqs.DefaultMaximumMessageSize+1))})
	localawstest.WantCode(t, err, "InvalidParameterValue", "over 1 MiB")
	small := createQueue(t, c, "small", map[string]string{"MaximumMessageSize": "262144"})
	_, err = c.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(small), MessageBody: aws.String(strings.Repeat("x", 300*1024))})
	localawstest.WantCode(t, err, "InvalidParameterValue", "300 KB to a queue of 256 KiB")
	_, err = c.SendMessageBatch(ctx, &awssqs.SendMessageBatchInput{QueueUrl: aws.String(small), Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String(strings.Repeat("x", 200*1024))}, {Id: aws.String("b"), MessageBody: aws.String(strings.Repeat("x", 200*1024))}}})
	localawstest.WantError[*types.BatchRequestTooLong](t, err, "a batch over the queue's size")
	_, err = c.SetQueueAttributes(ctx, &awssqs.SetQueueAttributesInput{QueueUrl: aws.String(small), Attributes: map[string]string{"MaximumMessageSize": "1048577"}})
	localawstest.WantCode(t, err, "InvalidAttributeValue", "MaximumMessageSize over 1 MiB")
}
