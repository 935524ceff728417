package localaws

import (
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sqs"
)

func init() {
	registerService("sqs", func(s *Stack) ([]awsapi.Service, error) {
		svc := sqs.New(s.Env())
		if w := s.Options().DeduplicationWindow; w > 0 {
			svc.DeduplicationWindow = w
		}
		return []awsapi.Service{svc}, nil
	})
}
