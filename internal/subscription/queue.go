package subscription

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// SQS attribute names.
const (
	attrVisibilityTimeout = string(types.QueueAttributeNameVisibilityTimeout)
	attrRetention         = string(types.QueueAttributeNameMessageRetentionPeriod)
	attrReceiveWait       = string(types.QueueAttributeNameReceiveMessageWaitTimeSeconds)
	attrRedrivePolicy     = string(types.QueueAttributeNameRedrivePolicy)
	attrKMSKey            = string(types.QueueAttributeNameKmsMasterKeyId)
	attrSSE               = string(types.QueueAttributeNameSqsManagedSseEnabled)
	attrPolicy            = string(types.QueueAttributeNamePolicy)
	attrQueueARN          = string(types.QueueAttributeNameQueueArn)
	attrFIFO              = string(types.QueueAttributeNameFifoQueue)
)

type queueSpec struct {
	what  string
	name  string
	attrs map[string]string
	tags  map[string]string
}

// encryption sets the attributes of SSE-KMS with key, or SSE-SQS.
func encryption(attrs map[string]string, key string) map[string]string {
	if key != "" {
		attrs[attrKMSKey] = key
		attrs[attrSSE] = "false"
	} else {
		attrs[attrSSE] = "true"
	}
	return attrs
}

// deadLetterAttributes are the attributes of the dead-letter queue; s has
// its defaults.
func deadLetterAttributes(s Spec) map[string]string {
	return fifo(s, encryption(map[string]string{
		attrRetention: strconv.Itoa(int(s.DeadLetter.MessageRetentionSeconds)),
	}, s.Queue.KMSMasterKeyID))
}

// fifo makes both queues of a subscription to a FIFO topic FIFO queues
// (a FIFO queue's dead-letter queue is a FIFO queue too).
func fifo(s Spec, attrs map[string]string) map[string]string {
	if s.FIFO() {
		attrs[attrFIFO] = "true"
	}
	return attrs
}

// queueAttributes are the attributes of the queue, redriving to the
// dead-letter queue dlqARN; s has its defaults.
func queueAttributes(s Spec, dlqARN string) map[string]string {
	return fifo(s, encryption(map[string]string{
		attrVisibilityTimeout: strconv.Itoa(int(*s.Queue.VisibilityTimeoutSeconds)),
		attrRetention:         strconv.Itoa(int(s.Queue.MessageRetentionSeconds)),
		attrReceiveWait:       strconv.Itoa(int(s.Queue.ReceiveWaitTimeSeconds)),
		attrRedrivePolicy:     RedrivePolicy(dlqARN, s.Queue.MaxReceiveCount),
	}, s.Queue.KMSMasterKeyID))
}

// RedrivePolicy is the queue's redrive policy: after maxReceiveCount
// receives, a message moves to the dead-letter queue.
func RedrivePolicy(dlqARN string, maxReceiveCount int32) string {
	b, _ := json.Marshal(map[string]any{"deadLetterTargetArn": dlqARN, "maxReceiveCount": maxReceiveCount})
	return string(b)
}

type redrive struct {
	DeadLetterTargetARN string `json:"deadLetterTargetArn"`
	MaxReceiveCount     int    `json:"maxReceiveCount"`
}

// parseRedrive reads a redrive policy, whose maxReceiveCount SQS may
// report as a number or a string.
func parseRedrive(s string) (redrive, bool) {
	var raw struct {
		DeadLetterTargetARN string          `json:"deadLetterTargetArn"`
		MaxReceiveCount     json.RawMessage `json:"maxReceiveCount"`
	}
	if json.Unmarshal([]byte(s), &raw) != nil {
		return redrive{}, false
	}
	n := string(raw.MaxReceiveCount)
	if uq, err := strconv.Unquote(n); err == nil {
		n = uq
	}
	count, err := strconv.Atoi(n)
	if err != nil {
		return redrive{}, false
	}
	return redrive{DeadLetterTargetARN: raw.DeadLetterTargetARN, MaxReceiveCount: count}, true
}

// attributeDiff returns the attributes of want that have differs from, by
// name, sorted.
func attributeDiff(have, want map[string]string) []string {
	var out []string
	for k, v := range want {
		h := have[k]
		switch {
		case h == v:
		case k == attrSSE && v == "false" && h == "":
		case k == attrRedrivePolicy:
			a, aok := parseRedrive(h)
			b, bok := parseRedrive(v)
			if !aok || !bok || a != b {
				out = append(out, k)
			}
		default:
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// queue returns the attributes of the queue at url, or nil when it does not
// exist.
func (c *Provisioner) queue(ctx context.Context, url string) (map[string]string, error) {
	return awsops.QueueAttributes(ctx, c.SQS, url)
}

// ensureQueue updates the queue recorded in url, or creates it when there
// is none (or it was deleted out of band).
func (c *Provisioner) ensureQueue(ctx context.Context, q queueSpec, url, arn *string) error {
	if *url != "" {
		have, err := c.queue(ctx, *url)
		if err != nil {
			return fmt.Errorf("reading %s (%s): %w", q.what, q.name, err)
		}
		if have != nil {
			changed := map[string]string{}
			for _, k := range attributeDiff(have, q.attrs) {
				changed[k] = q.attrs[k]
			}
			if q.attrs[attrSSE] == "true" && have[attrKMSKey] != "" {
				// Back from SSE-KMS to SSE-SQS.
				changed[attrKMSKey] = ""
				changed[attrSSE] = "true"
			}
			if len(changed) > 0 {
				if _, err := c.SQS.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(*url), Attributes: changed}); err != nil {
					return fmt.Errorf("updating %s (%s): %w", q.what, q.name, err)
				}
			}
			if err := awsops.SyncQueueTags(ctx, c.SQS, *url, q.tags); err != nil {
				return fmt.Errorf("tagging %s (%s): %w", q.what, q.name, err)
			}
			*arn = have[attrQueueARN]
			return nil
		}
		*url, *arn = "", ""
	}
	if out, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(q.name)}); err == nil {
		return fmt.Errorf("creating %s (%s): a queue of that name already exists (%s): delete it, import it, or choose another subscription name", q.what, q.name, aws.ToString(out.QueueUrl))
	} else if !awsops.IsNotFound(err) {
		return fmt.Errorf("creating %s (%s): %w", q.what, q.name, err)
	}
	out, err := awsops.CreateQueue(ctx, c.SQS, c.waiter(), &sqs.CreateQueueInput{QueueName: aws.String(q.name), Attributes: q.attrs, Tags: q.tags})
	if err != nil {
		return fmt.Errorf("creating %s (%s): %w", q.what, q.name, err)
	}
	*url = aws.ToString(out.QueueUrl)
	attrs, err := c.queue(ctx, *url)
	if err == nil && attrs == nil {
		err = errors.New("the queue is not found")
	}
	if err != nil {
		return fmt.Errorf("reading %s (%s) after creating it: %w", q.what, q.name, err)
	}
	*arn = attrs[attrQueueARN]
	return nil
}

// ensurePolicy sets the queue's policy unless it already means doc.
func (c *Provisioner) ensurePolicy(ctx context.Context, url string, doc PolicyDocument) error {
	have, err := c.queue(ctx, url)
	if err != nil {
		return err
	}
	if have != nil && awsops.SamePolicy(have[attrPolicy], doc.JSON()) {
		return nil
	}
	_, err = c.SQS.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{attrPolicy: doc.JSON()}})
	return err
}

func (c *Provisioner) deleteQueue(ctx context.Context, what, url string) error {
	return awsops.Delete(ctx, what, url, func(ctx context.Context, url string) error {
		_, err := c.SQS.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)})
		return err
	})
}
