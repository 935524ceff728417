package localaws

import (
	"context"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sns"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sqs"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/targets"
)

func init() {
	registerService("sns", func(s *Stack) ([]awsapi.Service, error) {
		svc := sns.New(s.Env(), sns.Deps{
			// SNS delivers to queues and functions of any Region, by ARN.
			Queues: func() (sns.QueueSink, error) {
				if _, err := lookupService[*sqs.Service](s, "sqs"); err != nil {
					return nil, err
				}
				return snsQueues{s}, nil
			},
			Functions: func() (sns.FunctionInvoker, error) {
				if _, err := lookupService[sns.FunctionInvoker](s, "lambda"); err != nil {
					return nil, err
				}
				return regionalFunctions{s}, nil
			},
		})
		if w := s.Options().DeduplicationWindow; w > 0 {
			svc.DeduplicationWindow = w
		}
		return []awsapi.Service{svc}, nil
	})
}

// snsQueues adapts the SQS service of the queue's Region to the typed
// message attributes SNS raw delivery carries.
type snsQueues struct{ s *Stack }

func (a snsQueues) queues(queueArn string) (*sqs.Service, error) {
	return lookupService[*sqs.Service](a.s.arnRegion(queueArn), "sqs")
}

func (a snsQueues) DeliverAttributes(queueArn string, m sns.QueueMessage) (string, error) {
	q, err := a.queues(queueArn)
	if err != nil {
		return "", err
	}
	return q.DeliverTo(queueArn, sqsDelivery(m))
}

// sqsDelivery is the SQS delivery of a message SNS delivers to a queue.
func sqsDelivery(m sns.QueueMessage) sqs.Delivery {
	attrs := make(map[string]sqs.MessageAttribute, len(m.Attributes))
	for k, v := range m.Attributes {
		attrs[k] = sqs.MessageAttribute{DataType: v.DataType, StringValue: v.StringValue, BinaryValue: v.BinaryValue}
	}
	return sqs.Delivery{Body: m.Body, Attributes: attrs, GroupID: m.GroupID, DeduplicationID: m.DeduplicationID}
}

func (a snsQueues) QueuePolicy(queueArn string) (string, bool) {
	q, err := a.queues(queueArn)
	if err != nil {
		return "", false
	}
	return q.QueuePolicy(queueArn)
}

// regionalFunctions invokes a function in the Region its ARN names (in the
// caller's Region for a name).
type regionalFunctions struct{ s *Stack }

func (f regionalFunctions) functions(function string) (targets.FunctionInvoker, error) {
	return lookupService[targets.FunctionInvoker](f.s.arnRegion(function), "lambda")
}

func (f regionalFunctions) InvokeAsync(ctx context.Context, function string, payload []byte) error {
	l, err := f.functions(function)
	if err != nil {
		return err
	}
	return l.InvokeAsync(ctx, function, payload)
}

func (f regionalFunctions) FunctionPolicy(function string) (string, bool) {
	l, err := f.functions(function)
	if err != nil {
		return "", false
	}
	return l.FunctionPolicy(function)
}
