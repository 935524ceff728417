package consumertest_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// deliveries is a local stack with SNS, EventBridge and SQS, delivering
// events as the relay publishes them to the queues a consumer reads.
type deliveries struct {
	t      testing.TB
	queues *sqs.Client
	topics *sns.Client
	bus    *eventbridge.Client
	cfg    aws.Config
}

func newDeliveries(t testing.TB) *deliveries {
	t.Helper()
	cfg := localawstest.Config(localawstest.Start(t))
	return &deliveries{t: t, queues: sqs.NewFromConfig(cfg), topics: sns.NewFromConfig(cfg), bus: eventbridge.NewFromConfig(cfg), cfg: cfg}
}

// engine creates the inbox and ledger tables in the stack's DynamoDB and
// returns an engine of them, its clock at the present.
func (d *deliveries) engine(ctx context.Context) *engine {
	d.t.Helper()
	return newEngineOn(ctx, d.t, d.cfg, time.Now())
}

// queue creates a queue that SNS and EventBridge may send to and returns
// its URL and ARN.
func (d *deliveries) queue(name string) (string, string) {
	d.t.Helper()
	arn := "arn:aws:sqs:us-east-1:000000000000:" + name
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":["sns.amazonaws.com","events.amazonaws.com"]},"Action":"sqs:SendMessage","Resource":%q}]}`, arn)
	attrs := map[string]string{"Policy": policy}
	if len(name) > 5 && name[len(name)-5:] == ".fifo" {
		attrs["FifoQueue"] = "true"
	}
	out, err := d.queues.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		d.t.Fatal(err)
	}
	return *out.QueueUrl, arn
}

// targetQueue is a queue that a relay's publisher publishes to.
type targetQueue struct {
	d        *deliveries
	url, arn string
	pub      publish.Publisher
}

// targetQueue creates a queue and a publisher to it of the envelope f (the
// target's default when ""), with o and the stack's SQS client.
func (d *deliveries) targetQueue(name string, f outbox.Format, o targetkind.PublisherOptions) *targetQueue {
	d.t.Helper()
	url, arn := d.queue(name)
	o.Client = d.queues
	pub, err := targetkind.NewPublisher(aws.Config{}, targetkind.Settings{Type: targetkind.SQS, QueueARN: arn, Envelope: f}, o)
	if err != nil {
		d.t.Fatal(err)
	}
	return &targetQueue{d: d, url: url, arn: arn, pub: pub}
}

// publish publishes the records and fails unless each was published.
func (q *targetQueue) publish(ctx context.Context, records []outbox.Record) {
	q.d.t.Helper()
	for _, res := range q.pub.Publish(ctx, records) {
		if res.Status != publish.Published {
			q.d.t.Fatalf("publishing: %+v", res)
		}
	}
}

// receive receives n messages from the queue, as a Lambda SQS event.
func (q *targetQueue) receive(n int) events.SQSEvent {
	q.d.t.Helper()
	return q.d.receive(q.url, q.arn, n)
}

// topic creates a topic, a FIFO one when its name ends in .fifo, and
// returns its ARN.
func (d *deliveries) topic(name string) string {
	d.t.Helper()
	attrs := map[string]string{}
	if strings.HasSuffix(name, ".fifo") {
		attrs["FifoTopic"] = "true"
	}
	out, err := d.topics.CreateTopic(context.Background(), &sns.CreateTopicInput{Name: aws.String(name), Attributes: attrs})
	if err != nil {
		d.t.Fatal(err)
	}
	return *out.TopicArn
}

// subscribe subscribes a queue to a topic, with raw message delivery or
// with SNS's envelope around each message.
func (d *deliveries) subscribe(topicARN, queueARN string, raw bool) {
	d.t.Helper()
	if _, err := d.topics.Subscribe(context.Background(), &sns.SubscribeInput{TopicArn: aws.String(topicARN), Protocol: aws.String("sqs"),
		Endpoint: aws.String(queueARN), Attributes: map[string]string{"RawMessageDelivery": strconv.FormatBool(raw)}}); err != nil {
		d.t.Fatal(err)
	}
}

// receive receives n messages from a queue, as a Lambda SQS event. It
// first waits for all n to arrive: a FIFO queue returns none of a group's
// later messages while an earlier one is in flight, so receiving before
// the last delivery would hold that group until the visibility timeout.
func (d *deliveries) receive(url, arn string, n int) events.SQSEvent {
	d.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	d.awaitVisible(url, n, deadline)
	var ev events.SQSEvent
	for len(ev.Records) < n && time.Now().Before(deadline) {
		out, err := d.queues.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url),
			MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			d.t.Fatal(err)
		}
		for _, m := range out.Messages {
			ev.Records = append(ev.Records, events.SQSMessage{MessageId: *m.MessageId, ReceiptHandle: *m.ReceiptHandle,
				Body: *m.Body, Attributes: m.Attributes, EventSourceARN: arn, EventSource: "aws:sqs"})
		}
	}
	if len(ev.Records) != n {
		d.t.Fatalf("received %d messages from %s, want %d", len(ev.Records), url, n)
	}
	return ev
}

// awaitVisible waits until the queue holds n visible messages.
func (d *deliveries) awaitVisible(url string, n int, deadline time.Time) {
	d.t.Helper()
	want := strconv.Itoa(n)
	for {
		out, err := d.queues.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
		if err != nil {
			d.t.Fatal(err)
		}
		got := out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)]
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("%s holds %s visible messages, want %d", url, got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// publishSNS publishes r as the relay does to a topic: the envelope, with
// the source and detail-type attributes.
func (d *deliveries) publishSNS(topicARN string, r outbox.Record, group string) {
	d.t.Helper()
	in := &sns.PublishInput{TopicArn: aws.String(topicARN), Message: aws.String(string(r.EnvelopeJSON())),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{
			"source":      {DataType: aws.String("String"), StringValue: aws.String(r.Source)},
			"detail-type": {DataType: aws.String("String"), StringValue: aws.String(r.DetailType)},
		}}
	if group != "" {
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(group), aws.String(r.EventID)
	}
	if _, err := d.topics.Publish(context.Background(), in); err != nil {
		d.t.Fatal(err)
	}
}

// The same event through an EventBridge rule, an SNS subscription and an
// SNS raw subscription, each into its queue, and directly: every delivery
// unwraps to the event, whose effect happens once.
func TestDeliveredShapesApplyOnce(t *testing.T) {
	t.Parallel()
	d := newDeliveries(t)
	ctx := context.Background()
	e := d.engine(ctx)
	ebURL, ebARN := d.queue("billing-eventbridge")
	snsURL, snsARN := d.queue("billing-sns")
	rawURL, rawARN := d.queue("billing-sns-raw")
	topic := d.topic("orders")
	d.subscribe(topic, snsARN, false)
	d.subscribe(topic, rawARN, true)
	if _, err := d.bus.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("billing"), EventPattern: aws.String(`{"source":["com.example.orders"]}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.bus.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("billing"),
		Targets: []ebtypes.Target{{Id: aws.String("queue"), Arn: aws.String(ebARN)}}}); err != nil {
		t.Fatal(err)
	}

	r := record("01DELIVERED", `{"orderId":"1234","total":42.5}`)
	d.publishSNS(topic, r, "")
	out, err := d.bus.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
		Source: aws.String(r.Source), DetailType: aws.String(r.DetailType), Detail: aws.String(string(r.DetailJSON())), Time: aws.Time(r.OccurredAt),
	}}})
	if err != nil || out.FailedEntryCount != 0 {
		t.Fatalf("PutEvents: %+v, %v", out, err)
	}

	c := newConsumer(t, e)
	var batch events.SQSEvent
	for _, q := range [][2]string{{ebURL, ebARN}, {snsURL, snsARN}, {rawURL, rawARN}} {
		batch.Records = append(batch.Records, d.receive(q[0], q[1], 1).Records...)
	}
	resp, err := c.HandleSQS(ctx, batch)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("HandleSQS: %+v, %v", resp, err)
	}
	if err := c.HandleEventBridge(ctx, events.EventBridgeEvent{Source: r.Source, DetailType: r.DetailType, Detail: r.DetailJSON()}); err != nil {
		t.Fatal(err)
	}
	if n := e.applied(r.EventID); n != 1 || len(c.seen) != 1 {
		t.Errorf("effect applied %d times, handler ran %d times, want 1 and 1", n, len(c.seen))
	}
}

// An SNS FIFO topic delivers to a FIFO queue; the failure of one message
// stops its group's later messages in the batch, and not the other group.
func TestDeliveredFIFOStopsOnlyTheFailedGroup(t *testing.T) {
	t.Parallel()
	d := newDeliveries(t)
	ctx := context.Background()
	e := d.engine(ctx)
	url, arn := d.queue("billing.fifo")
	topic := d.topic("orders.fifo")
	d.subscribe(topic, arn, true)
	sent := []struct{ id, group, detail string }{
		{"01A1", "customer-a", `{"orderId":"a1"}`}, {"01B1", "customer-b", `{"orderId":"b1"}`},
		{"01A2", "customer-a", `{"orderId":"a2","fail":true}`}, {"01A3", "customer-a", `{"orderId":"a3"}`},
		{"01B2", "customer-b", `{"orderId":"b2"}`},
	}
	for _, s := range sent {
		d.publishSNS(topic, record(s.id, s.detail), s.group)
	}
	batch := d.receive(url, arn, len(sent))
	c := newConsumer(t, e)
	resp, err := c.HandleSQS(ctx, batch)
	if err != nil {
		t.Fatal(err)
	}
	var failedEvents []string
	for _, f := range resp.BatchItemFailures {
		for _, m := range batch.Records {
			if m.MessageId == f.ItemIdentifier {
				failedEvents = append(failedEvents, m.Attributes["MessageDeduplicationId"])
			}
		}
	}
	if !slices.Equal(failedEvents, []string{"01A2", "01A3"}) {
		t.Errorf("failed events %v, want 01A2 and 01A3", failedEvents)
	}
	for id, want := range map[string]int{"01A1": 1, "01B1": 1, "01A2": 0, "01A3": 0, "01B2": 1} {
		if n := e.applied(id); n != want {
			t.Errorf("%s applied %d times, want %d", id, n, want)
		}
	}
}
