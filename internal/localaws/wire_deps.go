package localaws

import "fmt"

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

// dependency is the lookup of the service name as T, for a service's
// dependencies, resolved at use time.
func dependency[T any](s *Stack, name string) func() (T, error) {
	return func() (T, error) { return lookupService[T](s, name) }
}

// optionalDependency is dependency for a service the caller can do
// without (see optionalService).
func optionalDependency[T any](s *Stack, name string) func() T {
	return func() T { return optionalService[T](s, name) }
}
