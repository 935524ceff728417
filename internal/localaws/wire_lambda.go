package localaws

import (
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambda"
)

func init() {
	registerService("lambda", func(s *Stack) ([]awsapi.Service, error) {
		// Without iam, execution roles are not checked; without logs,
		// function logs go to the stack logger only.
		svc, err := lambda.New(s.Env(), lambda.Options{
			Roles:       func() lambda.RoleChecker { return optionalService[lambda.RoleChecker](s, "iam") },
			Permissions: func() lambda.PermissionChecker { return optionalService[lambda.PermissionChecker](s, "iam") },
			Logs:        func() lambda.LogSink { return optionalService[lambda.LogSink](s, "logs") },
		})
		if err != nil {
			return nil, err
		}
		return []awsapi.Service{svc}, nil
	})
}
