package differential_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// TestDifferentialSizes: the payload limits of 2026: SQS and EventBridge
// take 1 MiB (a message, a batch, a PutEvents call), SNS 256 KiB.
func TestDifferentialSizes(t *testing.T) {
	compare(t, "sizes", func(r *run) {
		c := r.sqs()
		url, _ := r.queue("diff-sizes")
		big := strings.Repeat("x", 900*1024)
		_, err := c.SendMessage(r.ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(big)})
		r.rec("SendMessage 900 KB", nil, err)
		_, err = c.SendMessage(r.ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(strings.Repeat("x", 1024*1024+1))})
		r.rec("SendMessage over 1 MiB", nil, err)
		half := strings.Repeat("x", 600*1024)
		_, err = c.SendMessageBatch(r.ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: []sqstypes.SendMessageBatchRequestEntry{
			{Id: aws.String("a"), MessageBody: aws.String(half)}, {Id: aws.String("b"), MessageBody: aws.String(half)}}})
		r.rec("SendMessageBatch over 1 MiB in all", nil, err)
		small, _ := r.queueWith("diff-sizes-small", map[string]string{"MaximumMessageSize": "262144"})
		_, err = c.SendMessage(r.ctx, &sqs.SendMessageInput{QueueUrl: aws.String(small), MessageBody: aws.String(strings.Repeat("x", 300*1024))})
		r.rec("SendMessage 300 KB to a queue of 256 KiB", nil, err)

		eb := eventbridge.NewFromConfig(r.cfg)
		out, err := eb.PutEvents(r.ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{
			{Source: aws.String("shop"), DetailType: aws.String("Large"), Detail: aws.String(`{"a":"` + big + `"}`)}}})
		var failed int32 = -1
		if out != nil {
			failed = out.FailedEntryCount
		}
		r.rec("PutEvents 900 KB FailedEntryCount", failed, err)
		out, err = eb.PutEvents(r.ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{
			{Source: aws.String("shop"), DetailType: aws.String("Large"), Detail: aws.String(`{"a":"` + strings.Repeat("x", 1024*1024) + `"}`)}}})
		codes := []string{}
		if out != nil {
			for _, e := range out.Entries {
				codes = append(codes, aws.ToString(e.ErrorCode))
			}
		}
		r.rec("PutEvents over 1 MB ErrorCodes", codes, err)

		topic, err := sns.NewFromConfig(r.cfg).CreateTopic(r.ctx, &sns.CreateTopicInput{Name: aws.String("diff-sizes")})
		if err != nil {
			r.rec("CreateTopic", nil, err)
			return
		}
		_, err = sns.NewFromConfig(r.cfg).Publish(r.ctx, &sns.PublishInput{TopicArn: topic.TopicArn, Message: aws.String(strings.Repeat("x", 300*1024))})
		r.rec("Publish 300 KB", nil, err)
	})
}
