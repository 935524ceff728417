package localaws

import (
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/logs"
)

func init() {
	registerService("logs", func(s *Stack) ([]awsapi.Service, error) {
		return []awsapi.Service{logs.New(s.Env())}, nil
	})
}
