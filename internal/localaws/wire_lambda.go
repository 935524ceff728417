package localaws

import (
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambda"
)

func init() {
	registerService("lambda", func(s *Stack) ([]awsapi.Service, error) {
		env := s.Env()
		svc, err := lambda.New(env, lambda.Options{
			Roles: func() lambda.RoleChecker {
				iam, ok := s.Service("iam")
				if !ok {
					return nil
				}
				rc, ok := iam.(lambda.RoleChecker)
				if !ok {
					env.Logger.Error("lambda: the iam service has no RoleAssumableBy; execution roles are not checked")
					return nil
				}
				return rc
			},
			Permissions: func() lambda.PermissionChecker {
				iam, ok := s.Service("iam")
				if !ok {
					return nil
				}
				pc, _ := iam.(lambda.PermissionChecker)
				return pc
			},
			Logs: func() lambda.LogSink {
				logs, ok := s.Service("logs")
				if !ok {
					return nil
				}
				sink, ok := logs.(lambda.LogSink)
				if !ok {
					env.Logger.Error("lambda: the logs service has no AppendLog; function logs go to the stack logger only")
					return nil
				}
				return sink
			},
		})
		if err != nil {
			return nil, err
		}
		return []awsapi.Service{svc}, nil
	})
}
