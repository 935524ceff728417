package localaws_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
)

// Close cuts off requests still in flight after its grace period, such as
// an SQS long poll, and reports no error: the stack did stop.
func TestCloseCutsOffLongPolls(t *testing.T) {
	t.Parallel()
	s, err := localaws.Start(context.Background(), localaws.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	client := sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(s.Endpoint()),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	ctx := context.Background()
	q, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("idle")})
	if err != nil {
		t.Fatal(err)
	}
	polled := make(chan error, 1)
	go func() {
		_, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, WaitTimeSeconds: 20})
		polled <- err
	}()
	// Let the poll reach the stack: for a second, other requests are
	// answered while the poll stays open.
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if _, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl}); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-polled:
			t.Fatalf("the long poll returned early: %v", err)
		default:
		}
	}
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatalf("Close with a long poll in flight: %v", err)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("Close took %v", took)
	}
	select {
	case err := <-polled:
		if err == nil {
			t.Error("the cut-off long poll reported success")
		}
	case <-time.After(10 * time.Second):
		t.Error("the long poll did not end when the stack closed")
	}
}
