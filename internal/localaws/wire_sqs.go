package localaws

import (
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sqs"
)

func init() {
	registerService("sqs", func(s *Stack) ([]awsapi.Service, error) {
		return []awsapi.Service{sqs.New(s.Env())}, nil
	})
}
