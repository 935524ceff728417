package subscription

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// TestSubscriptionLocalLargeEvents: the queue and its dead-letter queue
// take 1 MiB messages, so that an event of 900 KB, which a bus accepts
// since 2026, arrives whole; a queue lowered to SQS's former default is
// drift, and Update raises it again.
func TestSubscriptionLocalLargeEvents(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t)
	if _, err := c.Events.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String("orders")}); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Name: "large", EventBus: "orders", Sources: []string{"com.example.orders"}}
	st := must.Create(t, ctx, c, spec)
	for _, url := range []string{st.QueueURL, st.DeadLetterQueueURL} {
		attrs, err := c.queue(ctx, url)
		if err != nil || attrs[attrMaxMessageSize] != "1048576" {
			t.Errorf("%s: MaximumMessageSize %q (%v), want 1048576", url, attrs[attrMaxMessageSize], err)
		}
	}
	if _, err := c.SQS.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(st.QueueURL), Attributes: map[string]string{attrMaxMessageSize: "262144"}}); err != nil {
		t.Fatal(err)
	}
	observed, d := must.Read(t, ctx, c, spec, st)
	if len(d.Changed) != 1 || d.Changed[0].Component != ComponentQueue {
		t.Fatalf("drift of a queue of 256 KiB: %s", d)
	}
	st = must.Update(t, ctx, c, spec, observed, "Update raising MaximumMessageSize")

	detail := `{"blob":"` + strings.Repeat("x", 900*1024) + `"}`
	out, err := c.Events.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{
		{EventBusName: aws.String("orders"), Source: aws.String("com.example.orders"), DetailType: aws.String("Large"), Detail: aws.String(detail)}}})
	if err != nil || out.FailedEntryCount != 0 {
		t.Fatalf("PutEvents of 900 KB: %v (%+v)", err, out)
	}
	for end := time.Now().Add(deadline); ; {
		got, err := c.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(st.QueueURL), WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) == 1 {
			if body := aws.ToString(got.Messages[0].Body); len(body) < len(detail) || !strings.Contains(body, detail) {
				t.Errorf("received %d bytes, not the whole event of %d", len(body), len(detail))
			}
			return
		}
		if time.Now().After(end) {
			t.Fatalf("no event of 900 KB within %s", deadline)
		}
	}
}
