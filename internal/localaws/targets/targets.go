// Package targets is how a service of the local stack (SNS, EventBridge)
// hands a message to an SQS queue or a Lambda function on behalf of its
// service principal: it resolves the receiving service at delivery time and
// checks the receiver's resource policy, as AWS does.
package targets

import (
	"context"
	"fmt"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/iampolicy"
)

// QueuePolicies reads SQS queue policies.
type QueuePolicies interface {
	QueuePolicy(queueArn string) (policyJSON string, exists bool)
}

// FunctionInvoker invokes Lambda functions (the lambda service).
type FunctionInvoker interface {
	InvokeAsync(ctx context.Context, function string, payload []byte) error
	FunctionPolicy(function string) (policyJSON string, ok bool)
}

// Deps resolves the services delivered to, at delivery time; Q is the
// queue interface the delivering service consumes.
type Deps[Q QueuePolicies] struct {
	Queues    func() (Q, error)
	Functions func() (FunctionInvoker, error)
}

// Grant is the identity a delivery is authorised as: the service principal
// (e.g. sns.amazonaws.com) acting for a source (a topic or rule ARN) of an
// account. Denied is the error of a delivery the receiver's resource policy
// does not allow.
type Grant struct {
	Principal, SourceArn, SourceAccount string
	Denied                              error
}

// Queue resolves the SQS service and checks that the policy of queueArn
// allows the grant sqs:SendMessage.
func (d Deps[Q]) Queue(g Grant, queueArn string) (Q, error) {
	return resolve(g, receiver{"SQS", "sqs:SendMessage", "queue %s does not exist"}, d.Queues,
		func(q Q) (string, bool) { return q.QueuePolicy(queueArn) }, queueArn)
}

// Function resolves the Lambda service and checks that the resource policy
// of function allows the grant lambda:InvokeFunction.
func (d Deps[Q]) Function(g Grant, function string) (FunctionInvoker, error) {
	return resolve(g, receiver{"Lambda", "lambda:InvokeFunction", "function %s does not exist or has no resource policy"}, d.Functions,
		func(f FunctionInvoker) (string, bool) { return f.FunctionPolicy(function) }, function)
}

// receiver is a kind of delivery target: the service that receives, the
// action its resource policy must allow, and the error format of a
// resource it does not have.
type receiver struct{ service, action, missing string }

// resolve resolves the receiving service with get, reads the resource
// policy of resource with policyOf, and checks that it allows the grant
// r.action.
func resolve[T any](g Grant, r receiver, get func() (T, error), policyOf func(T) (string, bool), resource string) (T, error) {
	var zero T
	if get == nil {
		return zero, fmt.Errorf("no %s service in the stack", r.service)
	}
	svc, err := get()
	if err != nil {
		return zero, err
	}
	policy, ok := policyOf(svc)
	if !ok {
		return zero, fmt.Errorf(r.missing, resource)
	}
	if err := g.check(policy, r.action, resource); err != nil {
		return zero, err
	}
	return svc, nil
}

func (g Grant) check(policy, action, resource string) error {
	req := iampolicy.Request{Action: action, Resource: resource, PrincipalService: g.Principal, SourceArn: g.SourceArn, SourceAccount: g.SourceAccount}
	if iampolicy.EvaluateResource(policy, req) != iampolicy.Allow {
		return g.Denied
	}
	return nil
}
