package localaws

import (
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/events"
)

func init() {
	registerService("events", func(s *Stack) ([]awsapi.Service, error) {
		return []awsapi.Service{events.New(s.Env(), events.Deps{
			Queues:    dependency[events.QueueSink](s, "sqs"),
			Functions: dependency[events.FunctionInvoker](s, "lambda"),
		})}, nil
	})
}
