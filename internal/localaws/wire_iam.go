package localaws

import (
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/iam"
)

func init() {
	registerService("iam", func(s *Stack) ([]awsapi.Service, error) {
		svc := iam.New(s.Env(), iam.Options{PropagationDelay: s.Options().IAMPropagationDelay})
		s.Env().SetAuthorizer(svc)
		return []awsapi.Service{svc, svc.STS()}, nil
	})
}
