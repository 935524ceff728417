// Package targets is how a service of the local stack (SNS, EventBridge)
// hands a message to an SQS queue or a Lambda function on behalf of its
// service principal: it resolves the receiving service at delivery time and
// checks the receiver's resource policy, as AWS does.
package targets

import (
	"context"
	"errors"
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
	var zero Q
	if d.Queues == nil {
		return zero, errors.New("no SQS service in the stack")
	}
	q, err := d.Queues()
	if err != nil {
		return zero, err
	}
	policy, exists := q.QueuePolicy(queueArn)
	if !exists {
		return zero, fmt.Errorf("queue %s does not exist", queueArn)
	}
	if err := g.check(policy, "sqs:SendMessage", queueArn); err != nil {
		return zero, err
	}
	return q, nil
}

// Function resolves the Lambda service and checks that the resource policy
// of function allows the grant lambda:InvokeFunction.
func (d Deps[Q]) Function(g Grant, function string) (FunctionInvoker, error) {
	if d.Functions == nil {
		return nil, errors.New("no Lambda service in the stack")
	}
	f, err := d.Functions()
	if err != nil {
		return nil, err
	}
	policy, ok := f.FunctionPolicy(function)
	if !ok {
		return nil, fmt.Errorf("function %s does not exist or has no resource policy", function)
	}
	if err := g.check(policy, "lambda:InvokeFunction", function); err != nil {
		return nil, err
	}
	return f, nil
}

func (g Grant) check(policy, action, resource string) error {
	req := iampolicy.Request{Action: action, Resource: resource, PrincipalService: g.Principal, SourceArn: g.SourceArn, SourceAccount: g.SourceAccount}
	if iampolicy.EvaluateResource(policy, req) != iampolicy.Allow {
		return g.Denied
	}
	return nil
}
