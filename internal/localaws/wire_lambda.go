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
			Roles:       optionalDependency[lambda.RoleChecker](s, "iam"),
			Permissions: optionalDependency[lambda.PermissionChecker](s, "iam"),
			Logs:        optionalDependency[lambda.LogSink](s, "logs"),
		})
		if err != nil {
			return nil, err
		}
		return []awsapi.Service{svc}, nil
	})
}
