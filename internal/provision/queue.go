package provision

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// queueAttributes are the attributes that the pipeline sets on the DLQ.
func queueAttributes(q QueueSpec) map[string]string {
	attrs := map[string]string{
		string(types.QueueAttributeNameMessageRetentionPeriod): strconv.Itoa(int(q.MessageRetentionSeconds)),
	}
	if q.KMSMasterKeyID != "" {
		attrs[string(types.QueueAttributeNameKmsMasterKeyId)] = q.KMSMasterKeyID
		attrs[string(types.QueueAttributeNameSqsManagedSseEnabled)] = "false"
	} else {
		attrs[string(types.QueueAttributeNameSqsManagedSseEnabled)] = "true"
	}
	return attrs
}

// queue returns the attributes of the queue at url, or nil when it does not
// exist.
func (c *Provisioner) queue(ctx context.Context, url string) (map[string]string, error) {
	return awsops.QueueAttributes(ctx, c.SQS, url)
}

func (c *Provisioner) ensureQueue(ctx context.Context, s Spec, st *State) error {
	name := NamesFor(s.Name).DeadLetterQueue
	want := queueAttributes(s.DeadLetterQueue)
	if st.QueueURL != "" {
		have, err := c.queue(ctx, st.QueueURL)
		if err != nil && !errors.Is(err, awsops.ErrNotFound) {
			return fmt.Errorf("reading dead-letter queue (%s): %w", name, err)
		}
		if err == nil {
			changed := map[string]string{}
			for k, v := range want {
				if have[k] != v {
					changed[k] = v
				}
			}
			if len(changed) > 0 {
				if _, err := c.SQS.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(st.QueueURL), Attributes: changed}); err != nil {
					return fmt.Errorf("updating dead-letter queue (%s): %w", name, err)
				}
			}
			if err := awsops.SyncQueueTags(ctx, c.SQS, st.QueueURL, s.tags()); err != nil {
				return fmt.Errorf("tagging dead-letter queue (%s): %w", name, err)
			}
			st.QueueARN = have[string(types.QueueAttributeNameQueueArn)]
			return nil
		}
		st.QueueURL, st.QueueARN = "", ""
	}
	if out, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)}); err == nil {
		return fmt.Errorf("creating dead-letter queue (%s): a queue of that name already exists (%s): delete it or choose another pipeline name", name, aws.ToString(out.QueueUrl))
	} else if !awsops.IsNotFound(err) {
		return fmt.Errorf("creating dead-letter queue (%s): %w", name, err)
	}
	out, err := awsops.CreateQueue(ctx, c.SQS, c.waiter(), &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: want, Tags: s.tags()})
	if err != nil {
		return fmt.Errorf("creating dead-letter queue (%s): %w", name, err)
	}
	st.QueueURL = aws.ToString(out.QueueUrl)
	attrs, err := c.queue(ctx, st.QueueURL)
	if err != nil {
		return fmt.Errorf("reading dead-letter queue (%s) after creating it: %w", name, err)
	}
	st.QueueARN = attrs[string(types.QueueAttributeNameQueueArn)]
	return nil
}

func (c *Provisioner) deleteQueue(ctx context.Context, st *State) error {
	err := awsops.Delete(ctx, "dead-letter queue", st.QueueURL, func(ctx context.Context, url string) error {
		_, err := c.SQS.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)})
		return err
	})
	if err == nil {
		st.QueueURL, st.QueueARN = "", ""
	}
	return err
}

var queueComponent = componentDef{
	Name: ComponentDeadLetterQueue, Recorded: func(st State) bool { return st.QueueURL != "" },
	Ensure: func(c *Provisioner, ctx context.Context, p *pass) error {
		if err := c.ensureQueue(ctx, p.s, p.st); err != nil {
			return err
		}
		p.res = p.s.resources(p.st.account(), p.st.TableARN, p.st.QueueARN)
		return nil
	},
	Read: (*Provisioner).readQueue, Remove: (*Provisioner).deleteQueue, Lookup: (*Provisioner).lookupQueue,
}

func (c *Provisioner) readQueue(ctx context.Context, p *pass) error {
	st := p.st
	return readRecorded(p, ComponentDeadLetterQueue, "dead-letter queue", st.QueueURL,
		func() (map[string]string, error) { return c.queue(ctx, st.QueueURL) },
		func() { st.QueueURL, st.QueueARN = "", "" },
		func(attrs map[string]string) []string {
			var fields []string
			for k, v := range queueAttributes(p.s.DeadLetterQueue) {
				if attrs[k] != v && (k != string(types.QueueAttributeNameSqsManagedSseEnabled) || v != "false" || attrs[k] != "") {
					fields = append(fields, k)
				}
			}
			return sortedStrings(fields)
		})
}

func (c *Provisioner) lookupQueue(ctx context.Context, p *pass) error {
	// A queue that cannot be read is left out of the import.
	q, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(p.names().DeadLetterQueue)})
	if err != nil {
		return nil //nolint:nilerr // see above
	}
	p.st.QueueURL = aws.ToString(q.QueueUrl)
	if attrs, err := c.queue(ctx, p.st.QueueURL); err == nil {
		p.st.QueueARN = attrs[string(types.QueueAttributeNameQueueArn)]
		if v, err := strconv.Atoi(attrs[string(types.QueueAttributeNameMessageRetentionPeriod)]); err == nil {
			p.s.DeadLetterQueue.MessageRetentionSeconds = int32(v)
		}
		p.s.DeadLetterQueue.KMSMasterKeyID = attrs[string(types.QueueAttributeNameKmsMasterKeyId)]
	}
	return nil
}

func sortedStrings(s []string) []string {
	m := map[string]string{}
	for _, e := range s {
		m[e] = ""
	}
	return awsops.SortedKeys(m)
}
