// Package componenttest holds what the tests of a provisioner (package
// provision, package subscription) share on the local stack: the bounded
// context, the inventory checks and the calls that fail the test on error.
package componenttest

import (
	"context"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// Provisioner creates, updates, reads and deletes one kind of resource
// described by a Spec S and recorded in a State St.
type Provisioner[S, St any] interface {
	Create(ctx context.Context, s S) (St, error)
	Update(ctx context.Context, s S, st St) (St, error)
	Read(ctx context.Context, s S, st St) (St, awsops.Drift, error)
	Delete(ctx context.Context, st St) (St, error)
}

// Timeouts are the waits of a provisioner on the local stack: short, as it
// answers at once, but long enough for a loaded machine.
const (
	WaitTimeout  = 30 * time.Second
	PollInterval = 200 * time.Millisecond
)

// Start starts a local stack that serves services, or skips the test when
// it does not serve them yet, and returns it with the test's context.
func Start(t *testing.T, services ...string) (*localaws.Stack, context.Context) {
	t.Helper()
	stack := localawstest.Start(t)
	localawstest.RequireServices(t, stack, services...)
	return stack, Context(t)
}

// Context is the test's context, which bounds the whole test.
func Context(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// Inventory lists the resources of the stack.
func Inventory(t *testing.T, ctx context.Context, stack *localaws.Stack) map[string][]string {
	t.Helper()
	return localawstest.Inventory(ctx, t, localawstest.Control(stack))
}

// CheckInventory reports a stack whose inventory is no longer want: what
// left or removed resources.
func CheckInventory(t *testing.T, ctx context.Context, stack *localaws.Stack, want map[string][]string, what string) {
	t.Helper()
	localawstest.CheckInventory(ctx, t, localawstest.Control(stack), want, what)
}

// Must makes the calls of a provisioner of S and St, failing the test on
// an error: a package's tests declare one (var must Must[Spec, State]).
type Must[S, St any] struct{}

// Create creates s.
func (Must[S, St]) Create(t *testing.T, ctx context.Context, c Provisioner[S, St], s S) St {
	t.Helper()
	st, err := c.Create(ctx, s)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return st
}

// Update updates st to s; what names the update in the failure.
func (Must[S, St]) Update(t *testing.T, ctx context.Context, c Provisioner[S, St], s S, st St, what string) St {
	t.Helper()
	st, err := c.Update(ctx, s, st)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return st
}

// Read reads st against s.
func (Must[S, St]) Read(t *testing.T, ctx context.Context, c Provisioner[S, St], s S, st St) (St, awsops.Drift) {
	t.Helper()
	got, drift, err := c.Read(ctx, s, st)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return got, drift
}

// Delete deletes what st records; what names the deletion in the failure.
func (Must[S, St]) Delete(t *testing.T, ctx context.Context, c Provisioner[S, St], st St, what string) {
	t.Helper()
	if _, err := c.Delete(ctx, st); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
