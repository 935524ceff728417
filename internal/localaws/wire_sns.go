package localaws

import (
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sns"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sqs"
)

func init() {
	registerService("sns", func(s *Stack) ([]awsapi.Service, error) {
		return []awsapi.Service{sns.New(s.Env(), sns.Deps{
			Queues: func() (sns.QueueSink, error) {
				q, err := lookupService[*sqs.Service](s, "sqs")
				if err != nil {
					return nil, err
				}
				return snsQueues{q}, nil
			},
			Functions: dependency[sns.FunctionInvoker](s, "lambda"),
		})}, nil
	})
}

// snsQueues adapts the SQS service to the typed message attributes SNS
// raw delivery carries.
type snsQueues struct{ q *sqs.Service }

func (a snsQueues) DeliverAttributes(queueArn, body string, attributes map[string]sns.Attribute) (string, error) {
	attrs := make(map[string]sqs.MessageAttribute, len(attributes))
	for k, v := range attributes {
		attrs[k] = sqs.MessageAttribute{DataType: v.DataType, StringValue: v.StringValue, BinaryValue: v.BinaryValue}
	}
	return a.q.DeliverMessage(queueArn, body, attrs)
}

func (a snsQueues) QueuePolicy(queueArn string) (string, bool) { return a.q.QueuePolicy(queueArn) }
