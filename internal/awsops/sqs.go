package awsops

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/internal/validation"
)

// QueueRetentions is how long SQS can keep a message
// (MessageRetentionPeriod), in every queue: the pipeline's dead-letter
// queue and the subscription's queues alike.
var QueueRetentions = validation.Range{Min: 60, Max: 1209600, Unit: "seconds", Hint: " (14 days)"}

// QueueAttributes returns the attributes of the queue at url, or a
// NotFoundError when it does not exist.
func QueueAttributes(ctx context.Context, client *sqs.Client, url string) (map[string]string, error) {
	out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll},
	})
	if err != nil {
		return nil, NotFound("queue", url, err)
	}
	return out.Attributes, nil
}

// CreateQueue creates the queue described by in. SQS refuses a name for 60
// seconds after its queue was deleted, which a replacement or a re-creation
// after destroy runs into: CreateQueue waits it out, within w.
func CreateQueue(ctx context.Context, client *sqs.Client, w Waiter, in *sqs.CreateQueueInput) (*sqs.CreateQueueOutput, error) {
	var out *sqs.CreateQueueOutput
	notified := false
	err := w.For(ctx, fmt.Sprintf("SQS to accept the name %s again, 60 seconds after its deletion", aws.ToString(in.QueueName)), func(ctx context.Context) (bool, error) {
		var err error
		out, err = client.CreateQueue(ctx, in)
		if isQueueDeletedRecently(err) {
			if !notified {
				notified = true
				Notify(ctx, fmt.Sprintf("Waiting up to 60 seconds to create queue %s: SQS refuses to reuse the name of a queue deleted less than 60 seconds ago (QueueDeletedRecently), as when a dead-letter queue is replaced.", aws.ToString(in.QueueName)))
			}
			return false, nil
		}
		return err == nil, err
	})
	return out, err
}

// isQueueDeletedRecently reports SQS's refusal to reuse the name of a queue
// deleted less than 60 seconds ago.
func isQueueDeletedRecently(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && strings.Contains(ae.ErrorCode(), "QueueDeletedRecently")
}

// SyncQueueTags brings the tags of the queue at url to want.
func SyncQueueTags(ctx context.Context, client *sqs.Client, url string, want map[string]string) error {
	out, err := client.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(url)})
	if err != nil {
		return err
	}
	return SyncTags(ctx, out.Tags, want, func(ctx context.Context, keys []string) error {
		_, err := client.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: aws.String(url), TagKeys: keys})
		return err
	}, func(ctx context.Context, set map[string]string) error {
		_, err := client.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: aws.String(url), Tags: set})
		return err
	})
}
