package acctest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Sink is an SQS queue that receives what the pipeline publishes: through
// an EventBridge rule, or an SNS subscription.
type Sink struct {
	Env      *Env
	QueueURL string
	QueueARN string
}

// NewQueue creates a queue, deleted when the test ends, with the policy
// that policy builds from its ARN (none when nil).
func (e *Env) NewQueue(name string, policy func(arn string) string) Sink {
	e.T.Helper()
	return e.newQueue(name, nil, policy)
}

// NewFIFOQueue creates a FIFO queue called name, which ends in ".fifo",
// deleted when the test ends, with the policy that policy builds (none
// when nil). Messages are deduplicated by their deduplication id.
func (e *Env) NewFIFOQueue(name string, policy func(arn string) string) Sink {
	e.T.Helper()
	return e.newQueue(name, map[string]string{"FifoQueue": "true"}, policy)
}

func (e *Env) newQueue(name string, queueAttrs map[string]string, policy func(arn string) string) Sink {
	e.T.Helper()
	c := sqs.NewFromConfig(e.Cfg)
	out, err := c.CreateQueue(e.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: queueAttrs})
	if err != nil {
		e.T.Fatalf("creating queue %s: %v", name, err)
	}
	url := aws.ToString(out.QueueUrl)
	e.T.Cleanup(func() { _, _ = c.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(url)}) })
	attrs, err := c.GetQueueAttributes(e.Ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		e.T.Fatal(err)
	}
	s := Sink{Env: e, QueueURL: url, QueueARN: attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]}
	if policy != nil {
		if _, err := c.SetQueueAttributes(e.Ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{"Policy": policy(s.QueueARN)}}); err != nil {
			e.T.Fatalf("setting the policy of %s: %v", name, err)
		}
	}
	return s
}

// QueuePolicy builds a queue policy that lets service send messages on
// behalf of sourceARN.
func QueuePolicy(service, sourceARN string) func(string) string {
	return func(queueARN string) string {
		b, _ := json.Marshal(map[string]any{
			"Version": "2012-10-17",
			"Statement": []any{map[string]any{
				"Effect": "Allow", "Principal": map[string]any{"Service": service},
				"Action": "sqs:SendMessage", "Resource": queueARN,
				"Condition": map[string]any{"ArnEquals": map[string]any{"aws:SourceArn": sourceARN}},
			}},
		})
		return string(b)
	}
}

// NewBusSink creates a queue and a rule on the default bus that sends it
// every event of source.
func (e *Env) NewBusSink(source string) Sink {
	e.T.Helper()
	eb := eventbridge.NewFromConfig(e.Cfg)
	rule := e.Name("acc-sink")
	pattern, _ := json.Marshal(map[string]any{"source": []string{source}})
	out, err := eb.PutRule(e.Ctx, &eventbridge.PutRuleInput{Name: aws.String(rule), EventPattern: aws.String(string(pattern))})
	if err != nil {
		e.T.Fatalf("creating rule: %v", err)
	}
	s := e.NewQueue(e.Name("acc-bus-sink"), QueuePolicy("events.amazonaws.com", aws.ToString(out.RuleArn)))
	if _, err := eb.PutTargets(e.Ctx, &eventbridge.PutTargetsInput{Rule: aws.String(rule), Targets: []ebtypes.Target{{Id: aws.String("sink"), Arn: aws.String(s.QueueARN)}}}); err != nil {
		e.T.Fatalf("adding the rule's target: %v", err)
	}
	e.T.Cleanup(func() {
		ctx := context.Background()
		_, _ = eb.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String(rule), Ids: []string{"sink"}})
		_, _ = eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String(rule)})
	})
	return s
}

// NewTopicSink creates a topic and a queue subscribed to it; it returns
// the topic's ARN.
func (e *Env) NewTopicSink() (Sink, string) {
	e.T.Helper()
	c := sns.NewFromConfig(e.Cfg)
	out, err := c.CreateTopic(e.Ctx, &sns.CreateTopicInput{Name: aws.String(e.Name("acc-topic"))})
	if err != nil {
		e.T.Fatalf("creating topic: %v", err)
	}
	topic := aws.ToString(out.TopicArn)
	e.T.Cleanup(func() { _, _ = c.DeleteTopic(context.Background(), &sns.DeleteTopicInput{TopicArn: aws.String(topic)}) })
	s := e.NewQueue(e.Name("acc-topic-sink"), QueuePolicy("sns.amazonaws.com", topic))
	if _, err := c.Subscribe(e.Ctx, &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"), Endpoint: aws.String(s.QueueARN)}); err != nil {
		e.T.Fatalf("subscribing the queue: %v", err)
	}
	return s, topic
}

// NewFIFOTopicSink creates a FIFO topic and a FIFO queue subscribed to it
// with raw message delivery; it returns the topic's ARN.
func (e *Env) NewFIFOTopicSink() (Sink, string) {
	e.T.Helper()
	c := sns.NewFromConfig(e.Cfg)
	out, err := c.CreateTopic(e.Ctx, &sns.CreateTopicInput{Name: aws.String(e.Name("acc-topic") + ".fifo"), Attributes: map[string]string{"FifoTopic": "true"}})
	if err != nil {
		e.T.Fatalf("creating FIFO topic: %v", err)
	}
	topic := aws.ToString(out.TopicArn)
	e.T.Cleanup(func() { _, _ = c.DeleteTopic(context.Background(), &sns.DeleteTopicInput{TopicArn: aws.String(topic)}) })
	s := e.NewFIFOQueue(e.Name("acc-topic-sink")+".fifo", QueuePolicy("sns.amazonaws.com", topic))
	if _, err := c.Subscribe(e.Ctx, &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"), Endpoint: aws.String(s.QueueARN),
		Attributes: map[string]string{"RawMessageDelivery": "true"}}); err != nil {
		e.T.Fatalf("subscribing the FIFO queue: %v", err)
	}
	return s, topic
}

// FIFOMessage is what a FIFO queue delivered of one event.
type FIFOMessage struct {
	Event
	GroupID, DeduplicationID string
}

// ReceiveFIFO drains the FIFO queue until every id in want has arrived,
// and returns the messages in the order received.
func (s Sink) ReceiveFIFO(want []outbox.Record) ([]FIFOMessage, error) {
	var got []FIFOMessage
	err := s.Drain("receiving the published events from the FIFO queue", want, func(m sqstypes.Message) (string, error) {
		var ev Event
		if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &ev); err != nil {
			return "", fmt.Errorf("message %q: %w", aws.ToString(m.Body), err)
		}
		got = append(got, FIFOMessage{Event: ev, GroupID: m.Attributes["MessageGroupId"], DeduplicationID: m.Attributes["MessageDeduplicationId"]})
		return ev.Detail.Metadata.EventID, nil
	})
	return got, err
}

// Drain receives the queue's messages (with their system attributes),
// deleting each, until every record in want has arrived; what names the
// wait. take reads a message and returns the event id it carries.
func (s Sink) Drain(what string, want []outbox.Record, take func(m sqstypes.Message) (eventID string, err error)) error {
	c := sqs.NewFromConfig(s.Env.Cfg)
	seen := map[string]bool{}
	return Wait(s.Env.Ctx, what, func() error {
		out, err := c.ReceiveMessage(s.Env.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(s.QueueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			return err
		}
		for _, m := range out.Messages {
			id, err := take(m)
			if err != nil {
				return err
			}
			seen[id] = true
			if _, err := c.DeleteMessage(s.Env.Ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(s.QueueURL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				return err
			}
		}
		if n := missing(want, func(id string) bool { return seen[id] }); n > 0 {
			return fmt.Errorf("%d of %d events missing", n, len(want))
		}
		return nil
	})
}

// CheckFIFO checks what a FIFO queue delivered of want: each event once,
// in its item's partition key's group with its event id as deduplication
// id, and each group's events in the order they were written.
func CheckFIFO(want []outbox.Record, got []FIFOMessage) error {
	written := map[string]int{} // event id: position in want
	for i, r := range want {
		written[r.EventID] = i
	}
	last := map[string]int{} // group: position of its last event received
	for _, m := range got {
		id := m.Detail.Metadata.EventID
		i, ok := written[id]
		if !ok {
			return fmt.Errorf("event %s arrived, or arrived twice, unexpectedly", id)
		}
		r := want[i]
		if m.GroupID != r.PartitionKey || m.DeduplicationID != r.EventID {
			return fmt.Errorf("event %s arrived in group %q with deduplication id %q; want %q and %q", id, m.GroupID, m.DeduplicationID, r.PartitionKey, r.EventID)
		}
		if prev, ok := last[m.GroupID]; ok && i < prev {
			return fmt.Errorf("group %s: event %s arrived after %s, which was written later", m.GroupID, id, want[prev].EventID)
		}
		last[m.GroupID] = i
		delete(written, id)
	}
	return nil
}

// Event is what a consumer sees: the EventBridge envelope (also the SNS
// message body).
type Event struct {
	ID         string `json:"id"`
	Source     string `json:"source"`
	DetailType string `json:"detail-type"`
	Detail     struct {
		Metadata struct {
			EventID    string `json:"eventId"`
			OccurredAt string `json:"occurredAt"`
		} `json:"metadata"`
		Data json.RawMessage `json:"data"`
	} `json:"detail"`
}

// Receive drains the queue until every id in want has arrived, and returns
// the events by event id.
func (s Sink) Receive(want []outbox.Record) (map[string]Event, error) {
	got := map[string]Event{}
	err := s.Drain("receiving the published events", want, func(m sqstypes.Message) (string, error) {
		body := aws.ToString(m.Body)
		var n struct {
			Type    string `json:"Type"`
			Message string `json:"Message"`
		}
		if json.Unmarshal([]byte(body), &n) == nil && n.Type == "Notification" {
			body = n.Message
		}
		var ev Event
		if err := json.Unmarshal([]byte(body), &ev); err != nil {
			return "", fmt.Errorf("message %q: %w", body, err)
		}
		got[ev.Detail.Metadata.EventID] = ev
		return ev.Detail.Metadata.EventID, nil
	})
	return got, err
}

// CheckEvents checks the envelope of every received event against the
// record written.
func CheckEvents(want []outbox.Record, got map[string]Event) error {
	for _, r := range want {
		ev := got[r.EventID]
		if ev.Source != r.Source || ev.DetailType != r.DetailType || ev.Detail.Metadata.EventID != r.EventID || ev.ID == "" {
			return fmt.Errorf("event %s arrived as %+v; want source %q, detail-type %q", r.EventID, ev, r.Source, r.DetailType)
		}
		var wantData, gotData any
		_ = json.Unmarshal(r.Detail, &wantData)
		if err := json.Unmarshal(ev.Detail.Data, &gotData); err != nil || fmt.Sprint(wantData) != fmt.Sprint(gotData) {
			return fmt.Errorf("event %s: detail.data = %s, want %s", r.EventID, ev.Detail.Data, r.Detail)
		}
		if ev.Detail.Metadata.OccurredAt == "" {
			return fmt.Errorf("event %s has no detail.metadata.occurredAt", r.EventID)
		}
	}
	return nil
}
