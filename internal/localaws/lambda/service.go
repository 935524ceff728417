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
	"context"
	"errors"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
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
	env  *awsapi.Env
	opts Options
	dir  string

	mu        sync.Mutex
	functions map[string]*function
	esm       EventSourceMappings
	closed    bool

	wg     sync.WaitGroup // background work: async invocations, state timers
	ctx    context.Context
	cancel context.CancelFunc
}

var (
	_ awsapi.Service           = (*Service)(nil)
	_ awsapi.OperationResolver = (*Service)(nil)
	_ awsapi.Inventory         = (*Service)(nil)
	_ awsapi.ControlRegistrar  = (*Service)(nil)
	_ awsapi.Closer            = (*Service)(nil)
)

// New returns the service.
func New(env *awsapi.Env, opts Options) (*Service, error) {
	opts.defaults()
	dir, err := os.MkdirTemp(opts.TempDir, "localaws-lambda-")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Service{env: env, opts: opts, dir: dir, functions: map[string]*function{}, ctx: ctx, cancel: cancel}, nil
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
func (s *Service) SetEventSourceMappings(h EventSourceMappings) {
	s.mu.Lock()
	s.esm = h
	s.mu.Unlock()
}

func (s *Service) eventSourceMappings() EventSourceMappings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.esm
}

const esmPrefix = "/2015-03-31/event-source-mappings"

func isESMPath(p string) bool {
	return p == esmPrefix || strings.HasPrefix(p, esmPrefix+"/")
}

// route is a resolved operation with its path parameters.
type route struct {
	op       string
	function string // FunctionName label
	resource string // Resource label (tags) or StatementId
}

func splitPath(p string) []string {
	return strings.Split(strings.Trim(p, "/"), "/")
}

func resolve(r *http.Request) route {
	parts := splitPath(r.URL.Path)
	m := r.Method
	if len(parts) < 2 {
		return route{}
	}
	ver, kind := parts[0], parts[1]
	switch {
	case ver == "2015-03-31" && kind == "functions":
		switch len(parts) {
		case 2:
			switch m {
			case http.MethodPost:
				return route{op: "CreateFunction"}
			case http.MethodGet:
				return route{op: "ListFunctions"}
			}
		case 3:
			switch m {
			case http.MethodGet:
				return route{op: "GetFunction", function: parts[2]}
			case http.MethodDelete:
				return route{op: "DeleteFunction", function: parts[2]}
			}
		case 4:
			fn := parts[2]
			switch {
			case parts[3] == "configuration" && m == http.MethodGet:
				return route{op: "GetFunctionConfiguration", function: fn}
			case parts[3] == "configuration" && m == http.MethodPut:
				return route{op: "UpdateFunctionConfiguration", function: fn}
			case parts[3] == "code" && m == http.MethodPut:
				return route{op: "UpdateFunctionCode", function: fn}
			case parts[3] == "invocations" && m == http.MethodPost:
				return route{op: "Invoke", function: fn}
			case parts[3] == "policy" && m == http.MethodPost:
				return route{op: "AddPermission", function: fn}
			case parts[3] == "policy" && m == http.MethodGet:
				return route{op: "GetPolicy", function: fn}
			}
		case 5:
			if parts[3] == "policy" && m == http.MethodDelete {
				return route{op: "RemovePermission", function: parts[2], resource: parts[4]}
			}
		}
	case ver == "2017-03-31" && kind == "tags" && len(parts) == 3:
		switch m {
		case http.MethodGet:
			return route{op: "ListTags", resource: parts[2]}
		case http.MethodPost:
			return route{op: "TagResource", resource: parts[2]}
		case http.MethodDelete:
			return route{op: "UntagResource", resource: parts[2]}
		}
	case ver == "2017-10-31" && kind == "functions" && len(parts) == 4 && parts[3] == "concurrency":
		switch m {
		case http.MethodPut:
			return route{op: "PutFunctionConcurrency", function: parts[2]}
		case http.MethodDelete:
			return route{op: "DeleteFunctionConcurrency", function: parts[2]}
		}
	case ver == "2019-09-30" && kind == "functions" && len(parts) == 4 && parts[3] == "concurrency" && m == http.MethodGet:
		return route{op: "GetFunctionConcurrency", function: parts[2]}
	}
	return route{}
}

// ResolveOperation implements awsapi.OperationResolver.
func (s *Service) ResolveOperation(r *http.Request) string {
	if isESMPath(r.URL.Path) {
		if h := s.eventSourceMappings(); h != nil {
			return h.ResolveOperation(r)
		}
		return "EventSourceMapping"
	}
	return resolve(r).op
}

// Handle implements awsapi.Service.
func (s *Service) Handle(req *awsapi.Request) (any, error) {
	if isESMPath(req.HTTP.URL.Path) {
		h := s.eventSourceMappings()
		if h == nil {
			return nil, awsapi.NewServerError("ServiceException", "event source mappings are not available in this stack")
		}
		return h.Handle(req)
	}
	rt := resolve(req.HTTP)
	switch rt.op {
	case "CreateFunction":
		return s.createFunction(req)
	case "ListFunctions":
		return s.listFunctions(req)
	case "GetFunction":
		return s.getFunction(req, rt.function)
	case "GetFunctionConfiguration":
		return s.getFunctionConfiguration(req, rt.function)
	case "DeleteFunction":
		return s.deleteFunction(req, rt.function)
	case "UpdateFunctionCode":
		return s.updateFunctionCode(req, rt.function)
	case "UpdateFunctionConfiguration":
		return s.updateFunctionConfiguration(req, rt.function)
	case "Invoke":
		return s.invokeAPI(req, rt.function)
	case "AddPermission":
		return s.addPermission(req, rt.function)
	case "GetPolicy":
		return s.getPolicy(req, rt.function)
	case "RemovePermission":
		return s.removePermission(req, rt.function, rt.resource)
	case "ListTags":
		return s.listTags(req, rt.resource)
	case "TagResource":
		return s.tagResource(req, rt.resource)
	case "UntagResource":
		return s.untagResource(req, rt.resource)
	case "PutFunctionConcurrency":
		return s.putFunctionConcurrency(req, rt.function)
	case "GetFunctionConcurrency":
		return s.getFunctionConcurrency(req, rt.function)
	case "DeleteFunctionConcurrency":
		return s.deleteFunctionConcurrency(req, rt.function)
	}
	return nil, awsapi.UnknownOperationException(req.Operation)
}

// Inventory implements awsapi.Inventory: the function ARNs.
func (s *Service) Inventory() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.functions))
	for _, f := range s.functions {
		out = append(out, f.arn)
	}
	sort.Strings(out)
	return out
}

// Close stops every function process and background work and removes the
// extracted code.
func (s *Service) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	fns := make([]*function, 0, len(s.functions))
	for _, f := range s.functions {
		fns = append(fns, f)
	}
	s.mu.Unlock()
	s.cancel()
	for _, f := range fns {
		f.pool.shutdown()
	}
	s.wg.Wait()
	return errors.Join(os.RemoveAll(s.dir))
}
