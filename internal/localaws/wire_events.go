package localaws

import (
	"fmt"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/events"
)

func init() {
	registerService("events", func(s *Stack) ([]awsapi.Service, error) {
		return []awsapi.Service{events.New(s.Env(), events.Deps{
			Queues:    func() (events.QueueSink, error) { return lookupService[events.QueueSink](s, "sqs") },
			Functions: func() (events.FunctionInvoker, error) { return lookupService[events.FunctionInvoker](s, "lambda") },
		})}, nil
	})
}

// lookupService finds a service of the running stack by name and asserts the
// interface a caller consumes; it is called at use time, so build order does
// not matter.
func lookupService[T any](s *Stack, name string) (T, error) {
	var zero T
	svc, ok := s.Service(name)
	if !ok {
		return zero, fmt.Errorf("the %s service is not running in this stack", name)
	}
	t, ok := svc.(T)
	if !ok {
		return zero, fmt.Errorf("the %s service does not provide %T", name, (*T)(nil))
	}
	return t, nil
}
