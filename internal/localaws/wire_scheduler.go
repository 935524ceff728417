package localaws

import (
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/scheduler"
)

func init() {
	registerService("scheduler", func(s *Stack) ([]awsapi.Service, error) {
		return []awsapi.Service{scheduler.New(s.Env(), scheduler.Deps{
			Functions: func() (scheduler.FunctionInvoker, error) {
				return lookupService[scheduler.FunctionInvoker](s, "lambda")
			},
			Queues: func() (scheduler.QueueSink, error) { return lookupService[scheduler.QueueSink](s, "sqs") },
			Roles:  func() scheduler.RoleChecker { return optionalService[scheduler.RoleChecker](s, "iam") },
		}, scheduler.Options{})}, nil
	})
}

// Scheduler returns the stack's EventBridge Scheduler service, or nil when
// disabled.
func (s *Stack) Scheduler() *scheduler.Service {
	sc, _ := lookupService[*scheduler.Service](s, scheduler.ServiceName)
	return sc
}
