package lambda

import "github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"

func (s *Service) invokeAPI(req *awsapi.Request, ref string) (any, error) {
	return nil, awsapi.NewServerError("ServiceException", "invocation is not available yet")
}
