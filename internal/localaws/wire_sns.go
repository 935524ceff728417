package localaws

import (
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sns"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sqs"
)

func init() {
	registerService("sns", func(s *Stack) ([]awsapi.Service, error) {
		svc := sns.New(s.Env(), sns.Deps{
			Queues: func() (sns.QueueSink, error) {
				q, err := lookupService[*sqs.Service](s, "sqs")
				if err != nil {
					return nil, err
				}
				return snsQueues{q}, nil
			},
			Functions: dependency[sns.FunctionInvoker](s, "lambda"),
		})
		if w := s.Options().DeduplicationWindow; w > 0 {
			svc.DeduplicationWindow = w
		}
		return []awsapi.Service{svc}, nil
	})
}

// snsQueues adapts the SQS service to the typed message attributes SNS
// raw delivery carries.
type snsQueues struct{ q *sqs.Service }

func (a snsQueues) DeliverAttributes(queueArn string, m sns.QueueMessage) (string, error) {
	return a.q.DeliverTo(queueArn, sqsDelivery(m))
}

// sqsDelivery is the SQS delivery of a message SNS delivers to a queue.
func sqsDelivery(m sns.QueueMessage) sqs.Delivery {
	attrs := make(map[string]sqs.MessageAttribute, len(m.Attributes))
	for k, v := range m.Attributes {
		attrs[k] = sqs.MessageAttribute{DataType: v.DataType, StringValue: v.StringValue, BinaryValue: v.BinaryValue}
	}
	return sqs.Delivery{Body: m.Body, Attributes: attrs, GroupID: m.GroupID, DeduplicationID: m.DeduplicationID}
}

func (a snsQueues) QueuePolicy(queueArn string) (string, bool) { return a.q.QueuePolicy(queueArn) }
