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
			Roles: func() scheduler.RoleChecker {
				rc, err := lookupService[scheduler.RoleChecker](s, "iam")
				if err != nil {
					return nil
				}
				return rc
			},
		}, scheduler.Options{})}, nil
	})
}

// Scheduler returns the stack's EventBridge Scheduler service, or nil when
// disabled.
func (s *Stack) Scheduler() *scheduler.Service {
	svc, ok := s.Service(scheduler.ServiceName)
	if !ok {
		return nil
	}
	sc, _ := svc.(*scheduler.Service)
	return sc
}
