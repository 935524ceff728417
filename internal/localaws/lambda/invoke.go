package lambda

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/iampolicy"
)

// target resolves a function for invocation and snapshots what its
// processes are started with.
func (s *Service) target(ref, qualifier string) (*function, runSpec, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.lookupLocked(ref, qualifier)
	if err != nil {
		return nil, runSpec{}, err
	}
	if f.state != StateActive {
		return nil, runSpec{}, awsapi.ResourceConflictException("The operation cannot be performed at this time. The function is currently in the following state: %s", f.state)
	}
	spec := runSpec{
		name: f.name, arn: f.arn, codeDir: f.cfg.CodeDir, arch: f.cfg.Arch, handler: f.cfg.Handler,
		role: f.cfg.Role, logGroup: f.cfg.LogGroup, timeout: time.Duration(f.cfg.Timeout) * time.Second,
		memory: f.cfg.MemorySize, env: maps.Clone(f.cfg.Env), reserved: -1,
		accountCap: s.opts.AccountConcurrency - s.reservedTotalLocked(f.name),
	}
	if f.reserved != nil {
		spec.reserved = *f.reserved
	}
	return f, spec, nil
}

func throttled(spec runSpec) *awsapi.Error {
	e := awsapi.NewError("TooManyRequestsException", "Rate Exceeded.")
	e.HTTPStatus = http.StatusTooManyRequests
	reason := "ConcurrentInvocationLimitExceeded"
	if spec.reserved >= 0 {
		reason = "ReservedFunctionConcurrentInvocationLimitExceeded"
	}
	return e.With("Reason", reason)
}

// invoke runs one synchronous invocation.
func (s *Service) invoke(ctx context.Context, ref, qualifier string, payload []byte) (result, error) {
	f, spec, err := s.target(ref, qualifier)
	if err != nil {
		return result{}, err
	}
	if spec.reserved == 0 {
		return result{}, throttled(spec)
	}
	res, err := s.run(ctx, f, spec, payload)
	if errors.Is(err, errThrottled) {
		return result{}, throttled(spec)
	}
	return res, err
}

func (s *Service) invokeAPI(req *awsapi.Request) (any, error) {
	q := req.Query().Get("Qualifier")
	s.mu.Lock()
	f, err := s.lookupLocked(req.PathValue("FunctionName"), q)
	var policy string
	if err == nil && len(f.policy) > 0 {
		policy = policyDocument(f)
	}
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if aerr := req.Authorize("lambda:InvokeFunction", f.arn); aerr != nil {
		// Within an account, a resource-based policy may grant what the
		// identity's policies do not.
		if policy == "" || iampolicy.EvaluateResource(policy, iampolicy.Request{
			Action: "lambda:InvokeFunction", Resource: f.arn, PrincipalArn: req.Principal.ARN,
		}) != iampolicy.Allow {
			return nil, aerr
		}
	}
	typ := req.HTTP.Header.Get("X-Amz-Invocation-Type")
	if typ == "" {
		typ = "RequestResponse"
	}
	payload := req.Body
	if len(bytes.TrimSpace(payload)) == 0 {
		payload = []byte("{}")
	}
	if !json.Valid(payload) {
		return nil, awsapi.NewError("InvalidRequestContentException", "Could not parse request body into json: Could not parse payload into json: Unexpected character: was expecting a JSON value")
	}
	header := http.Header{"X-Amz-Executed-Version": {"$LATEST"}}
	switch typ {
	case "DryRun":
		return &awsapi.Raw{Status: http.StatusNoContent, Header: header}, nil
	case "Event":
		if len(payload) > maxAsyncPayload {
			return nil, tooLarge(maxAsyncPayload)
		}
		if err := s.InvokeAsync(req.Context(), f.arn, payload); err != nil {
			return nil, err
		}
		return &awsapi.Raw{Status: http.StatusAccepted, Header: header}, nil
	case "RequestResponse":
	default:
		return nil, invalidParameter("1 validation error detected: Value '%s' at 'invocationType' failed to satisfy constraint: Member must satisfy enum value set: [Event, RequestResponse, DryRun]", typ)
	}
	if len(payload) > maxSyncPayload {
		return nil, tooLarge(maxSyncPayload)
	}
	res, ierr := s.invoke(req.Context(), f.arn, q, payload)
	if ierr != nil {
		return nil, ierr
	}
	header.Set("Content-Type", "application/json")
	if res.functionError != "" {
		header.Set("X-Amz-Function-Error", res.functionError)
	}
	if strings.EqualFold(req.HTTP.Header.Get("X-Amz-Log-Type"), "Tail") {
		logs := []byte(strings.Join(res.logs, "\n") + "\n")
		if len(logs) > 4096 {
			logs = logs[len(logs)-4096:]
		}
		header.Set("X-Amz-Log-Result", base64.StdEncoding.EncodeToString(logs))
	}
	return &awsapi.Raw{Status: http.StatusOK, Header: header, Body: res.payload}, nil
}

func tooLarge(limit int) *awsapi.Error {
	return awsapi.NewError("RequestTooLargeException", "Request must be smaller than %d bytes for the InvokeFunction operation", limit).WithStatus(http.StatusRequestEntityTooLarge)
}

// InvokeSync invokes a function (name or ARN) synchronously, as an
// invocation of type RequestResponse. functionError is "Unhandled" when the
// function failed, timed out or crashed (out is then the error payload
// {"errorMessage","errorType"}), empty on success. err is for problems that
// prevented the invocation: a missing or pending function, throttling
// (TooManyRequestsException), a missing emulator. No authorisation: the
// caller checks.
func (s *Service) InvokeSync(ctx context.Context, function string, payload []byte) (out []byte, functionError string, err error) {
	res, err := s.invoke(ctx, function, "", payload)
	if err != nil {
		return nil, "", err
	}
	return res.payload, res.functionError, nil
}

// InvokeAsync queues an invocation of type Event and returns. The event is
// run in the background; a function error is retried twice (after
// Options.AsyncRetryDelays), throttling and a pending function are retried
// with backoff for up to six hours, as Lambda does.
func (s *Service) InvokeAsync(ctx context.Context, function string, payload []byte) error {
	s.mu.Lock()
	f, err := s.lookupLocked(function, "")
	closed := s.closed
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if closed {
		return awsapi.ServiceUnavailable("the stack is closing")
	}
	arn := f.arn
	payload = bytes.Clone(payload)
	s.Go(func() { s.runAsync(arn, payload) })
	return nil
}

const maxEventAge = 6 * time.Hour

func (s *Service) runAsync(arn string, payload []byte) {
	queued := time.Now()
	backoff := 50 * time.Millisecond
	failures := 0
	for {
		var wait time.Duration
		res, err := s.invoke(s.Context(), arn, "", payload)
		switch {
		case err == nil && res.functionError == "":
			return
		case err == nil:
			if failures >= len(s.opts.AsyncRetryDelays) {
				s.env.Logger.Info("lambda: asynchronous invocation failed after retries", "function", arn, "errorType", res.errorType)
				return
			}
			wait = s.opts.AsyncRetryDelays[failures]
			failures++
		default:
			var e *awsapi.Error
			if !errors.As(err, &e) || (e.Code != "TooManyRequestsException" && e.Code != "ResourceConflictException") {
				s.env.Logger.Info("lambda: asynchronous invocation dropped", "function", arn, "error", err)
				return
			}
			wait = backoff
			backoff = min(backoff*2, 5*time.Second)
		}
		if time.Since(queued)+wait > maxEventAge {
			s.env.Logger.Info("lambda: asynchronous invocation expired", "function", arn)
			return
		}
		if !awsapi.Sleep(s.Context(), wait) {
			return
		}
	}
}
