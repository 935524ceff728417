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

// optionalService is lookupService for a service the caller can do
// without: the zero T when the service is not running, and an error in the
// stack's log when it runs without providing T.
func optionalService[T any](s *Stack, name string) T {
	var zero T
	svc, ok := s.Service(name)
	if !ok {
		return zero
	}
	t, ok := svc.(T)
	if !ok {
		s.Env().Logger.Error("the service does not provide what another needs", "service", name, "needs", fmt.Sprintf("%T", (*T)(nil)))
	}
	return t
}
