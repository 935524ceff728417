package localaws

import (
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/scheduler"
)

func init() {
	registerService("scheduler", func(s *Stack) ([]awsapi.Service, error) {
		return []awsapi.Service{scheduler.New(s.Env(), scheduler.Deps{
			Functions: dependency[scheduler.FunctionInvoker](s, "lambda"),
			Queues:    dependency[scheduler.QueueSink](s, "sqs"),
			Roles:     optionalDependency[scheduler.RoleChecker](s, "iam"),
		}, scheduler.Options{})}, nil
	})
}

// Scheduler returns the stack's EventBridge Scheduler service, or nil when
// disabled.
func (s *Stack) Scheduler() *scheduler.Service {
	sc, _ := lookupService[*scheduler.Service](s, scheduler.ServiceName)
	return sc
}
