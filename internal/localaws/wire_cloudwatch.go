package localaws

import (
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/cloudwatch"
)

func init() {
	registerService("cloudwatch", func(s *Stack) ([]awsapi.Service, error) {
		return []awsapi.Service{cloudwatch.New(s.Env())}, nil
	})
}
