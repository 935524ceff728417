package iamdifferential

import (
	"cmp"
	"errors"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/iampolicy"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/logs"
)

// decisionCase is one request evaluated against policies.
type decisionCase struct {
	name string
	// want is the decision the component needs (Allowed for a request it
	// makes, ImplicitlyDenied for one it must not make); "" for the
	// operator matrix.
	want string
	// identity are identity-based policies (a role's); boundary its
	// permissions boundary, if any.
	identity []string
	boundary string
	// resourcePolicy, when set, makes the case resource-based: the policy
	// of the resource (a queue policy, a role's trust policy), with no
	// identity policy.
	resourcePolicy string
	// keyPolicy is given to iam-simulate only: a KMS key is usable through
	// identity policies only when its key policy delegates to IAM, and the
	// stack has no KMS keys to hold one.
	keyPolicy string
	// principal is the caller's ARN, or a service principal.
	principal string
	action    string
	// resource is the resource as AWS names it for the action (the Service
	// Authorization Reference, which iam-simulate checks it against);
	// stackResource, when set, is the one the stack's handler names.
	resource, stackResource string
	// context are single-valued condition keys, sets multivalued ones.
	context map[string]string
	sets    map[string][]string
}

// stackDecision is the stack's decision for c in iam-simulate's words, or
// MalformedPolicyDocument when the stack refuses to store a policy.
func stackDecision(c decisionCase) string {
	for _, doc := range append([]string{c.resourcePolicy, c.boundary}, c.identity...) {
		if doc == "" {
			continue
		}
		if _, err := iampolicy.Parse(doc); err != nil {
			return "MalformedPolicyDocument: " + err.Error()
		}
	}
	req := iampolicy.Request{Action: c.action, Resource: cmp.Or(c.stackResource, c.resource), Context: map[string]string{}, Sets: map[string][]string{}}
	if strings.HasPrefix(c.principal, "arn:") {
		req.PrincipalArn = c.principal
	} else {
		req.PrincipalService = c.principal
	}
	for k, v := range c.context {
		switch strings.ToLower(k) {
		case "aws:sourcearn":
			req.SourceArn = v
		case "aws:sourceaccount":
			req.SourceAccount = v
		default:
			req.Context[strings.ToLower(k)] = v
		}
	}
	for k, v := range c.sets {
		req.Sets[strings.ToLower(k)] = v
	}
	if c.resourcePolicy != "" {
		return simulatorWords(iampolicy.EvaluateResource(c.resourcePolicy, req))
	}
	d := iampolicy.Evaluate(c.identity, req)
	if c.boundary != "" && d != iampolicy.Deny {
		// As the IAM service's AuthorizeContext: the boundary must allow too.
		if b := iampolicy.Evaluate([]string{c.boundary}, req); b != iampolicy.Allow {
			d = b
		}
	}
	return simulatorWords(d)
}

func simulatorWords(d iampolicy.Decision) string {
	switch d {
	case iampolicy.Allow:
		return "Allowed"
	case iampolicy.Deny:
		return "ExplicitlyDenied"
	}
	return "ImplicitlyDenied"
}

// recorder is an Authorizer that records the resource a handler
// authorises on and refuses, so that the handler stops there.
type recorder struct{ action, resource string }

var errRecorded = errors.New("recorded")

func (r *recorder) Authorize(_ awsapi.Principal, action, resource string) error {
	r.action, r.resource = action, resource
	return errRecorded
}

// stackCall is a call to one of the stack's services, in its JSON body.
type stackCall struct {
	service   func(env *awsapi.Env) (awsapi.Service, func())
	operation string
	body      string
}

// logsService and streamsService are the stack's CloudWatch Logs and
// DynamoDB Streams services on env, with their closer.
func logsService(env *awsapi.Env) (awsapi.Service, func()) { return logs.New(env), func() {} }

func streamsService(env *awsapi.Env) (awsapi.Service, func()) {
	d := dynamodb.New(env, dynamodb.Options{})
	return d.StreamsAPI(), func() { _ = d.Close() }
}

// resourceOf is the resource the stack's handler authorises call on, in
// account and region; it fails the test when the handler authorises
// another action or none.
func resourceOf(t *testing.T, call stackCall, action string) string {
	t.Helper()
	env := awsapi.NewEnv(region, account, nil)
	rec := &recorder{}
	env.SetAuthorizer(rec)
	svc, closeSvc := call.service(env)
	defer closeSvc()
	sp := svc.Spec()
	_, _ = svc.Handle(&awsapi.Request{Service: sp.Name, Operation: call.operation, Body: []byte(call.body),
		Protocol: sp.Protocol, Wire: sp.Protocol, Env: env, AccountID: account, Region: region,
		Principal: awsapi.Principal{ARN: relaySession, RoleArn: relayRole}})
	if rec.action != action {
		t.Fatalf("%s %s authorised %q, not %s", sp.Name, call.operation, rec.action, action)
	}
	return rec.resource
}
