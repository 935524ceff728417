// Package iam is the local stack's IAM and STS: roles with trust policies,
// inline and managed policies, and the authorizer that evaluates a role
// session's identity-based policies for every other service.
//
// IAM is global: its ARNs carry no region (arn:aws:iam::123456789012:role/R).
// Changes become visible to the authorizer and to RoleAssumableBy only after
// Options.PropagationDelay, like IAM's eventual consistency.
package iam

import (
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/iampolicy"
)

// Options configure the service.
type Options struct {
	// PropagationDelay is how long after a role or its policies change
	// the change stays invisible: RoleAssumableBy reports the role cannot
	// be assumed and the authorizer keeps evaluating the previous
	// policies (none for a new role). Default 0.
	PropagationDelay time.Duration
}

// Service is IAM. It implements awsapi.Authorizer; STS returns the STS
// service sharing its state.
type Service struct {
	*awsapi.Lifecycle
	env  *awsapi.Env
	opts Options
	ops  awsapi.Operations

	mu       sync.RWMutex
	roles    map[string]*role // by name
	policies map[string]*managedPolicy
}

type tag = awsapi.Tag

type role struct {
	name, path, id, arn string
	created             time.Time
	trust               string
	description         string
	maxSession          int
	tags                []tag
	inline              map[string]string
	attached            []string // policy ARNs in attachment order
	// boundary is the ARN of the permissions boundary policy, or "".
	boundary string
	// changed is when the role or its policies last changed.
	changed time.Time
	// snapshots are the role's identity policies over time, oldest
	// first; the authorizer uses the newest that has propagated.
	snapshots []snapshot
	// trustSnapshots are the trust policies over time.
	trustSnapshots []snapshot
}

type snapshot struct {
	at   time.Time
	docs []string
	// boundary is the permissions boundary's document; nil without one.
	boundary []string
}

type managedPolicy struct {
	name, path, id, arn string
	description         string
	document            string
	created, updated    time.Time
	awsManaged          bool
	tags                []tag
}

// New returns an empty IAM with the AWS managed policies the stack knows.
func New(env *awsapi.Env, opts Options) *Service {
	s := &Service{Lifecycle: awsapi.NewLifecycle(), env: env, opts: opts, roles: map[string]*role{}, policies: map[string]*managedPolicy{}}
	s.ops = s.operations()
	s.Lists(s.mu.RLocker(), s.inventory)
	created := time.Date(2015, 4, 9, 15, 3, 43, 0, time.UTC)
	for _, p := range awsManagedPolicies {
		arn := "arn:aws:iam::aws:policy" + p.path + p.name
		s.policies[arn] = &managedPolicy{name: p.name, path: p.path, id: p.id, arn: arn, document: p.document,
			description: p.description, created: created, updated: created, awsManaged: true}
	}
	return s
}

// Spec implements awsapi.Service.
func (s *Service) Spec() awsapi.Spec {
	return awsapi.Spec{Name: "iam", Protocol: awsapi.Query, SigningName: "iam", XMLNamespace: "https://iam.amazonaws.com/doc/2010-05-08/"}
}

// inventory lists role and customer managed policy ARNs.
func (s *Service) inventory(add func(string)) {
	for _, r := range s.roles {
		add(r.arn)
	}
	for _, p := range s.policies {
		if !p.awsManaged {
			add(p.arn)
		}
	}
}

// Errors as IAM returns them.
func noSuchEntity(format string, args ...any) *awsapi.Error {
	return awsapi.NewError("NoSuchEntity", format, args...).WithStatus(http.StatusNotFound)
}

func entityAlreadyExists(format string, args ...any) *awsapi.Error {
	return awsapi.NewError("EntityAlreadyExists", format, args...).WithStatus(http.StatusConflict)
}

func deleteConflict(format string, args ...any) *awsapi.Error {
	return awsapi.NewError("DeleteConflict", format, args...).WithStatus(http.StatusConflict)
}

func malformedPolicy(format string, args ...any) *awsapi.Error {
	return awsapi.NewError("MalformedPolicyDocument", format, args...)
}

func validationError(format string, args ...any) *awsapi.Error {
	return awsapi.NewError("ValidationError", format, args...)
}

func invalidInput(format string, args ...any) *awsapi.Error {
	return awsapi.NewError("InvalidInput", format, args...)
}

func (s *Service) now() time.Time { return s.env.Time().UTC() }

// newID returns an IAM unique id: a prefix and 17 upper-case alphanumerics.
func newID(prefix string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	b := make([]byte, 17)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + string(b)
}

// encodeDocument URL-encodes a policy document as IAM returns it.
func encodeDocument(doc string) string {
	return strings.ReplaceAll(url.QueryEscape(doc), "+", "%20")
}

// roleByARN finds a role by its ARN. Callers hold s.mu.
func (s *Service) roleByARN(arn string) *role {
	name := arn
	if i := strings.LastIndex(arn, "/"); i >= 0 {
		name = arn[i+1:]
	}
	r := s.roles[name]
	if r == nil || r.arn != arn {
		return nil
	}
	return r
}

// currentDocs are the identity policies of a role now. Callers hold s.mu.
func (s *Service) currentDocs(r *role) []string {
	names := slices.Sorted(maps.Keys(r.inline))
	docs := make([]string, 0, len(names)+len(r.attached))
	for _, n := range names {
		docs = append(docs, r.inline[n])
	}
	for _, a := range r.attached {
		if p := s.policies[a]; p != nil {
			docs = append(docs, p.document)
		}
	}
	return docs
}

// touch records a change of the role's policies. Callers hold s.mu for
// writing.
func (s *Service) touch(r *role) {
	now := s.now()
	r.changed = now
	r.snapshots = append(r.snapshots, snapshot{at: now, docs: s.currentDocs(r), boundary: s.boundaryDocs(r)})
	r.trustSnapshots = append(r.trustSnapshots, snapshot{at: now, docs: []string{r.trust}})
	r.snapshots = prune(r.snapshots, now, s.opts.PropagationDelay)
	r.trustSnapshots = prune(r.trustSnapshots, now, s.opts.PropagationDelay)
}

// prune drops snapshots superseded by a newer propagated one.
func prune(snaps []snapshot, now time.Time, delay time.Duration) []snapshot {
	keep := 0
	for i := range snaps {
		if !snaps[i].at.Add(delay).After(now) {
			keep = i
		}
	}
	return snaps[keep:]
}

// effective returns the newest propagated snapshot's documents, or nil and
// false when nothing has propagated yet.
func effective(snaps []snapshot, now time.Time, delay time.Duration) ([]string, bool) {
	snap, ok := effectiveSnapshot(snaps, now, delay)
	return snap.docs, ok
}

func effectiveSnapshot(snaps []snapshot, now time.Time, delay time.Duration) (snapshot, bool) {
	for i := len(snaps) - 1; i >= 0; i-- {
		if !snaps[i].at.Add(delay).After(now) {
			return snaps[i], true
		}
	}
	return snapshot{}, false
}

// Authorize implements awsapi.Authorizer: administrators pass, role
// sessions are evaluated against their role's identity-based policies as
// propagated. A denial is an error whose message is AWS's reason ("because
// no identity-based policy allows the X action", "with an explicit deny in
// an identity-based policy").
func (s *Service) Authorize(p awsapi.Principal, action, resourceArn string) error {
	return s.AuthorizeContext(p, action, resourceArn, nil)
}

// AuthorizeContext implements awsapi.ContextAuthorizer: Authorize, with
// the request's condition keys for the policies' conditions.
func (s *Service) AuthorizeContext(p awsapi.Principal, action, resourceArn string, keys map[string]string) error {
	if p.Admin {
		return nil
	}
	var snap snapshot
	if p.RoleArn != "" {
		s.mu.RLock()
		if r := s.roleByARN(p.RoleArn); r != nil {
			snap, _ = effectiveSnapshot(r.snapshots, s.now(), s.opts.PropagationDelay)
		}
		s.mu.RUnlock()
	}
	req := iampolicy.Request{Action: action, Resource: resourceArn, PrincipalArn: p.ARN, Context: keys}
	identity := iampolicy.Evaluate(snap.docs, req)
	boundary, bounded := boundaryDecision(snap.boundary, req)
	switch {
	case identity == iampolicy.Deny:
		return errors.New("with an explicit deny in an identity-based policy")
	case bounded && boundary == iampolicy.Deny:
		return errors.New("with an explicit deny in a permissions boundary")
	case identity != iampolicy.Allow:
		return fmt.Errorf("because no identity-based policy allows the %s action", action)
	case bounded && boundary != iampolicy.Allow:
		return fmt.Errorf("because no permissions boundary allows the %s action", action)
	}
	return nil
}

// RoleAllows reports whether the role's policies, as propagated, allow the
// action on the resource: what a service checks before acting with the
// role (Lambda attaching a function to a VPC).
func (s *Service) RoleAllows(roleArn, action, resource string) bool {
	return s.Authorize(awsapi.Principal{RoleArn: roleArn, ARN: roleArn}, action, resource) == nil
}

// RoleAssumableBy reports whether the role exists and its trust policy (as
// propagated) allows servicePrincipal ("lambda.amazonaws.com") to assume it.
// A service assumes a role on behalf of a resource of this account, so
// aws:SourceAccount is the stack's account, as the confused-deputy
// conditions AWS recommends expect. The error is the one the calling
// service returns to its client.
func (s *Service) RoleAssumableBy(roleArn, servicePrincipal string) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.roleByARN(roleArn)
	ok := false
	if r != nil {
		now := s.now()
		if !r.changed.Add(s.opts.PropagationDelay).After(now) {
			if docs, found := effective(r.trustSnapshots, now, s.opts.PropagationDelay); found && len(docs) == 1 {
				ok = iampolicy.EvaluateResource(docs[0], iampolicy.Request{Action: "sts:AssumeRole", Resource: roleArn, PrincipalService: servicePrincipal, SourceAccount: s.env.AccountID}) == iampolicy.Allow
			}
		}
	}
	if ok {
		return nil
	}
	return cannotAssume(roleArn, servicePrincipal)
}

func cannotAssume(roleArn, servicePrincipal string) *awsapi.Error {
	switch servicePrincipal {
	case "lambda.amazonaws.com":
		return awsapi.NewError("InvalidParameterValueException", "The role defined for the function cannot be assumed by Lambda.")
	case "scheduler.amazonaws.com":
		return awsapi.ValidationException("The execution role you provide must allow AWS EventBridge Scheduler to assume the role.")
	case "pipes.amazonaws.com":
		return awsapi.ValidationException("Role %s cannot be assumed by pipes.amazonaws.com.", roleArn)
	}
	return awsapi.ValidationException("Role %s cannot be assumed by %s.", roleArn, servicePrincipal)
}
