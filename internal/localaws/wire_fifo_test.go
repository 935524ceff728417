package localaws_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// TestDeduplicationWindowOption publishes one deduplication id to an SNS
// FIFO topic subscribed by an SQS FIFO queue, inside and after the
// stack's DeduplicationWindow: SNS and SQS both forget it after the
// window, and the delivery carries the group and deduplication ids.
func TestDeduplicationWindowOption(t *testing.T) {
	t.Parallel()
	var offset atomic.Int64
	stack := localawstest.Start(t, func(o *localaws.Options) { o.DeduplicationWindow = time.Minute })
	stack.Env().Now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	ctx := context.Background()
	cfg := localawstest.Config(stack)
	topics, queues := sns.NewFromConfig(cfg), sqs.NewFromConfig(cfg)
	topic, err := topics.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("t.fifo"), Attributes: map[string]string{"FifoTopic": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	arn := "arn:aws:sqs:us-east-1:000000000000:q.fifo"
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"sns.amazonaws.com"},"Action":"sqs:SendMessage","Resource":%q}]}`, arn)
	q, err := queues.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("q.fifo"), Attributes: map[string]string{"FifoQueue": "true", "Policy": policy}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := topics.Subscribe(ctx, &sns.SubscribeInput{TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(arn),
		Attributes: map[string]string{"RawMessageDelivery": "true"}}); err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Duration{0, 30 * time.Second, 61 * time.Second} {
		offset.Store(int64(at))
		if _, err := topics.Publish(ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String("m"), MessageGroupId: aws.String("g"),
			MessageDeduplicationId: aws.String("d")}); err != nil {
			t.Fatal(err)
		}
		if at == 30*time.Second {
			continue // a duplicate: nothing to receive
		}
		out, err := queues.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, WaitTimeSeconds: 10,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil || len(out.Messages) != 1 {
			t.Fatalf("publish at %v: received %+v %v, want the message", at, out, err)
		}
		if a := out.Messages[0].Attributes; a["MessageGroupId"] != "g" || a["MessageDeduplicationId"] != "d" {
			t.Fatalf("delivered attributes %v", a)
		}
		if _, err := queues.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: out.Messages[0].ReceiptHandle}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := queues.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl})
	if err != nil || len(out.Messages) != 0 {
		t.Fatalf("the duplicate was delivered: %+v %v", out, err)
	}
}
