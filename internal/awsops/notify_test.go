package awsops

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// CreateQueue says once why it waits when SQS refuses a recently deleted
// queue's name, then creates the queue.
func TestCreateQueueNotifiesTheWait(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		if calls.Add(1) <= 3 {
			w.Header().Set("x-amzn-query-error", "AWS.SimpleQueueService.QueueDeletedRecently;Sender")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"__type":"com.amazonaws.sqs#QueueDeletedRecently","message":"You must wait 60 seconds after deleting a queue before you can create another with the same name."}`))
			return
		}
		_, _ = w.Write([]byte(`{"QueueUrl":"` + "http://" + r.Host + `/000000000000/orders-relay-dlq"}`))
	}))
	defer srv.Close()
	client := sqs.New(sqs.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: aws.AnonymousCredentials{},
	})
	var msgs []string
	ctx := WithNotifier(context.Background(), func(_ context.Context, msg string) { msgs = append(msgs, msg) })
	out, err := CreateQueue(ctx, client, Waiter{Timeout: 30 * time.Second, MaxDelay: 200 * time.Millisecond}, &sqs.CreateQueueInput{QueueName: aws.String("orders-relay-dlq")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(aws.ToString(out.QueueUrl), "/orders-relay-dlq") {
		t.Errorf("queue URL %q", aws.ToString(out.QueueUrl))
	}
	if len(msgs) != 1 || !strings.Contains(msgs[0], "60 seconds") || !strings.Contains(msgs[0], "orders-relay-dlq") {
		t.Errorf("notified %q, want one message with the reason", msgs)
	}
}
