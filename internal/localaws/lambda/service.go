// Package lambda is the Lambda service of the local AWS stack: functions
// from zip packages (runtimes provided.al2023 and provided.al2), their
// configuration, tags, reserved concurrency and resource policies, and their
// invocation.
//
// Each function runs as child processes of the stack: the bootstrap of its
// zip is extracted into a temporary directory and started with the
// documented Lambda environment, speaking the Lambda Runtime API
// (/2018-06-01/runtime/...) served by this package on a loopback listener
// per process. Processes are reused between invocations, started as load
// requires up to the reserved concurrency, killed on timeout and replaced
// after a crash. arm64 functions run through qemu-aarch64 on amd64 hosts.
//
// Event source mappings live in the sub-package esm; this service routes
// their requests to the delegate installed with SetEventSourceMappings.
//
// In-process API for other services of the stack: InvokeSync, InvokeAsync,
// FunctionInfo and FunctionPolicy.
package lambda

import (
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// ServiceName is the Spec.Name of the service.
const ServiceName = "lambda"

// RoleChecker tells whether a role can be assumed by a service principal
// (the IAM service implements it).
type RoleChecker interface {
	RoleAssumableBy(roleArn, servicePrincipal string) error
}

// PermissionChecker tells whether a role's policies (and permissions
// boundary) allow an action (the IAM service implements it).
type PermissionChecker interface {
	RoleAllows(roleArn, action, resource string) bool
}

// LogSink receives function log lines (the CloudWatch Logs service
// implements it).
type LogSink interface {
	AppendLog(group, stream string, at time.Time, message string)
}

// EventSourceMappings serves the requests under
// /2015-03-31/event-source-mappings (the esm sub-package implements it).
type EventSourceMappings interface {
	ResolveOperation(r *http.Request) string
	Handle(req *awsapi.Request) (any, error)
}

// Options configure the service. The zero value is usable.
type Options struct {
	// Roles returns the role checker, or nil when there is none; it is
	// called at use time. With none, any role is accepted.
	Roles func() RoleChecker
	// Permissions returns the permission checker, or nil when there is
	// none; with none, a VPC attachment is not checked against the role.
	Permissions func() PermissionChecker
	// Logs returns the log sink, or nil when there is none; it is called at
	// use time.
	Logs func() LogSink
	// StateDelay is how long a function stays Pending after creation and
	// InProgress after an update; default 200ms.
	StateDelay time.Duration
	// AsyncRetryDelays are the waits before the two retries of an
	// asynchronous invocation that failed; default 1s and 2s (AWS waits
	// about 1 and 2 minutes).
	AsyncRetryDelays []time.Duration
	// AccountConcurrency is the account's concurrency limit; default 1000.
	AccountConcurrency int
	// InitTimeout bounds a process's initialisation (until its first
	// request for an invocation); default 10s as in AWS.
	InitTimeout time.Duration
	// TempDir is where function code is extracted; default os.TempDir().
	TempDir string
}

func (o *Options) defaults() {
	if o.StateDelay <= 0 {
		o.StateDelay = 200 * time.Millisecond
	}
	if len(o.AsyncRetryDelays) == 0 {
		o.AsyncRetryDelays = []time.Duration{time.Second, 2 * time.Second}
	}
	if o.AccountConcurrency <= 0 {
		o.AccountConcurrency = 1000
	}
	if o.InitTimeout <= 0 {
		o.InitTimeout = 10 * time.Second
	}
	if o.TempDir == "" {
		o.TempDir = os.TempDir()
	}
}

// Service is the Lambda service.
type Service struct {
	*awsapi.Lifecycle
	env    *awsapi.Env
	opts   Options
	dir    string
	routes *awsapi.Routes
	esm    atomic.Pointer[EventSourceMappings]

	mu        sync.Mutex
	functions map[string]*function
	closed    bool
}

// The embedded Lifecycle makes it an awsapi.Inventory and awsapi.Closer.
var (
	_ awsapi.Service           = (*Service)(nil)
	_ awsapi.OperationResolver = (*Service)(nil)
	_ awsapi.ControlRegistrar  = (*Service)(nil)
)

// New returns the service.
func New(env *awsapi.Env, opts Options) (*Service, error) {
	opts.defaults()
	dir, err := os.MkdirTemp(opts.TempDir, "localaws-lambda-")
	if err != nil {
		return nil, err
	}
	// The Lifecycle's Background runs the asynchronous invocations and
	// the state timers.
	s := &Service{Lifecycle: awsapi.NewLifecycle(), env: env, opts: opts, dir: dir, functions: map[string]*function{}}
	s.routes = awsapi.NewRoutes(s.operations())
	s.Lists(&s.mu, s.inventory)
	// Every function process stops when the service closes.
	s.OnStop(awsapi.StopEach(&s.mu, &s.closed, s.functions, func(f *function) { f.pool.shutdown() }))
	s.OnCleanup(func() error { return os.RemoveAll(s.dir) })
	return s, nil
}

// Spec implements awsapi.Service.
func (s *Service) Spec() awsapi.Spec {
	return awsapi.Spec{
		Name:         ServiceName,
		Protocol:     awsapi.RESTJSON,
		SigningName:  "lambda",
		PathPrefixes: []string{"/2015-03-31/", "/2017-03-31/", "/2017-10-31/", "/2019-09-30/", "/2014-11-13/"},
	}
}

// SetEventSourceMappings installs the delegate that serves every request
// whose path starts with /2015-03-31/event-source-mappings.
func (s *Service) SetEventSourceMappings(h EventSourceMappings) { s.esm.Store(&h) }

func (s *Service) eventSourceMappings() EventSourceMappings {
	if h := s.esm.Load(); h != nil {
		return *h
	}
	return nil
}

const esmPrefix = "/2015-03-31/event-source-mappings"

func isESMPath(p string) bool {
	return p == esmPrefix || strings.HasPrefix(p, esmPrefix+"/")
}

// operations is the table of the functions API, routed by method and
// path as the Lambda model has them.
func (s *Service) operations() awsapi.Operations {
	const fn = "/2015-03-31/functions/{FunctionName}"
	return awsapi.Operations{
		"CreateFunction":              {Route: "POST /2015-03-31/functions", Handle: awsapi.Decoded(s.createFunction)},
		"ListFunctions":               {Route: "GET /2015-03-31/functions", Handle: s.listFunctions},
		"GetFunction":                 {Route: "GET " + fn, Handle: s.getFunction},
		"DeleteFunction":              {Route: "DELETE " + fn, Handle: s.deleteFunction},
		"GetFunctionConfiguration":    {Route: "GET " + fn + "/configuration", Handle: s.getFunctionConfiguration},
		"UpdateFunctionConfiguration": {Route: "PUT " + fn + "/configuration", Handle: awsapi.Decoded(s.updateFunctionConfiguration)},
		"UpdateFunctionCode":          {Route: "PUT " + fn + "/code", Handle: awsapi.Decoded(s.updateFunctionCode)},
		"Invoke":                      {Route: "POST " + fn + "/invocations", Handle: s.invokeAPI},
		"AddPermission":               {Route: "POST " + fn + "/policy", Handle: awsapi.Decoded(s.addPermission)},
		"GetPolicy":                   {Route: "GET " + fn + "/policy", Handle: s.getPolicy},
		"RemovePermission":            {Route: "DELETE " + fn + "/policy/{StatementId}", Handle: s.removePermission},
		"ListTags":                    {Route: "GET /2017-03-31/tags/{Resource}", Handle: s.listTags},
		"TagResource":                 {Route: "POST /2017-03-31/tags/{Resource}", Handle: awsapi.Decoded(s.tagResource)},
		"UntagResource":               {Route: "DELETE /2017-03-31/tags/{Resource}", Handle: s.untagResource},
		"PutFunctionConcurrency":      {Route: "PUT /2017-10-31/functions/{FunctionName}/concurrency", Handle: awsapi.Decoded(s.putFunctionConcurrency)},
		"DeleteFunctionConcurrency":   {Route: "DELETE /2017-10-31/functions/{FunctionName}/concurrency", Handle: s.deleteFunctionConcurrency},
		"GetFunctionConcurrency":      {Route: "GET /2019-09-30/functions/{FunctionName}/concurrency", Handle: s.getFunctionConcurrency},
	}
}

// ResolveOperation implements awsapi.OperationResolver.
func (s *Service) ResolveOperation(r *http.Request) string {
	if isESMPath(r.URL.Path) {
		if h := s.eventSourceMappings(); h != nil {
			return h.ResolveOperation(r)
		}
		return "EventSourceMapping"
	}
	return s.routes.ResolveOperation(r)
}

// Handle implements awsapi.Service: the event source mapping paths go to
// their delegate, the others to the functions API.
func (s *Service) Handle(req *awsapi.Request) (any, error) {
	if isESMPath(req.HTTP.URL.Path) {
		h := s.eventSourceMappings()
		if h == nil {
			return nil, awsapi.NewServerError("ServiceException", "event source mappings are not available in this stack")
		}
		return h.Handle(req)
	}
	return s.routes.Handle(req)
}

// inventory lists the function ARNs.
func (s *Service) inventory(add func(string)) {
	for _, f := range s.functions {
		add(f.arn)
	}
}
