package lambdatest

import (
	"context"
	"slices"
	"sync"
)

// Invocation is an asynchronous invocation of a function with a payload.
type Invocation struct {
	Function string
	Payload  string
}

// RecordingInvoker stands in for the Lambda service of a service that
// invokes functions (EventBridge, the scheduler): it records each
// asynchronous invocation and answers every function's resource policy
// with the one set by SetPolicy (none until then).
type RecordingInvoker struct {
	mu     sync.Mutex
	policy string
	calls  []Invocation
}

// InvokeAsync records the invocation.
func (r *RecordingInvoker) InvokeAsync(_ context.Context, function string, payload []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, Invocation{Function: function, Payload: string(payload)})
	return nil
}

// FunctionPolicy is the policy set by SetPolicy, for any function.
func (r *RecordingInvoker) FunctionPolicy(string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.policy, r.policy != ""
}

// SetPolicy sets the resource policy of every function.
func (r *RecordingInvoker) SetPolicy(policy string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.policy = policy
}

// Invocations returns the invocations recorded so far, in order.
func (r *RecordingInvoker) Invocations() []Invocation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}
