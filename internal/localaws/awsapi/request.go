package awsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Request is one decoded AWS API call handed to a service.
type Request struct {
	// Service is the Spec.Name of the service.
	Service string
	// Operation is the API operation ("PutItem", "Invoke").
	Operation string
	// RequestID is sent back in the protocol's request id header/element.
	RequestID string
	// Region and AccountID are the stack's.
	Region    string
	AccountID string
	// Principal is the caller.
	Principal Principal
	// Body is the raw request body.
	Body []byte
	// HTTP is the underlying request (path, query, headers). Its body has
	// been read into Body.
	HTTP *http.Request
	// Protocol is the protocol of the body the handler reads and of the
	// value it returns: the service's Spec.Protocol.
	Protocol Protocol
	// Wire is the protocol the caller speaks, in which the result and
	// errors are written; it differs from Protocol when the router
	// transcodes (see Spec.Protocols).
	Wire Protocol
	// Env is the stack environment.
	Env *Env
	// Received is when the request arrived.
	Received time.Time

	form   url.Values
	labels map[string]string
}

// PathValue returns the path label name of a REST operation's route
// ("FunctionName" of "/2015-03-31/functions/{FunctionName}"), unescaped;
// "" when the route has no such label.
func (r *Request) PathValue(name string) string { return r.labels[name] }

// Query returns the URL query parameters of the request.
func (r *Request) Query() url.Values {
	if r.HTTP == nil {
		return url.Values{}
	}
	return r.HTTP.URL.Query()
}

// Context returns the request's context.
func (r *Request) Context() context.Context {
	if r.HTTP == nil {
		return context.Background()
	}
	return r.HTTP.Context()
}

// Authorize asks the installed Authorizer whether the caller may perform
// action (e.g. "dynamodb:PutItem") on resourceArn. It returns nil when
// allowed or when no authorizer is installed. The error is an *Error ready
// to return from Handle: an *Error from the authorizer as is, otherwise
// AccessDenied (awsQuery services) or AccessDeniedException (the others)
// with AWS's message "User: <arn> is not authorized to perform: <action> on
// resource: <arn> <reason>", where the reason is the authorizer's error
// text ("with an explicit deny in an identity-based policy"), prefixed with
// "because " unless it starts with "because " or "with ".
func (r *Request) Authorize(action, resourceArn string) error {
	return r.AuthorizeContext(action, resourceArn, nil)
}

// AuthorizeContext is Authorize with the request's condition keys (by
// lower-case name), which the identity-based policies' conditions may test
// (see ContextAuthorizer).
func (r *Request) AuthorizeContext(action, resourceArn string, keys map[string]string) error {
	if r.Env == nil {
		return nil
	}
	a := r.Env.Authorizer()
	if a == nil {
		return nil
	}
	return denied(authorizeWith(a, r.Principal, action, resourceArn, keys), r.Principal, action, resourceArn, r.Protocol == Query || r.Wire == Query)
}

// denied turns an authorizer's answer for p into the error a service
// returns: nil when allowed, an *Error as is, any other error as
// AccessDeniedException (AccessDenied for the Query protocol) naming the
// principal, action and resource.
func denied(err error, p Principal, action, resourceArn string, query bool) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	reason := err.Error()
	if !strings.HasPrefix(reason, "because ") && !strings.HasPrefix(reason, "with ") {
		reason = "because " + reason
	}
	msg := fmt.Sprintf("User: %s is not authorized to perform: %s on resource: %s %s", p.ARN, action, resourceArn, reason)
	if query {
		return AccessDenied("%s", msg)
	}
	return AccessDeniedException("%s", msg)
}

// DecodeJSON decodes the JSON body into v. An empty body decodes as {}.
// A malformed body gives SerializationException.
func (r *Request) DecodeJSON(v any) error {
	body := bytes.TrimSpace(r.Body)
	if len(body) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return SerializationException("%s", err.Error())
	}
	return nil
}

// Form returns the awsQuery parameters (form body merged with the URL
// query).
func (r *Request) Form() url.Values {
	if r.form != nil {
		return r.form
	}
	form, err := url.ParseQuery(string(r.Body))
	if err != nil {
		form = url.Values{}
	}
	if r.HTTP != nil {
		for k, vs := range r.HTTP.URL.Query() {
			if _, ok := form[k]; !ok {
				form[k] = vs
			}
		}
	}
	r.form = form
	return form
}

// IntParam reads the optional integer parameter name of q (MaxItems,
// Marker): def when it is absent or empty, ok false when it is not an
// integer between lo and hi.
func IntParam(q url.Values, name string, def, lo, hi int) (n int, ok bool) {
	v := q.Get(name)
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, false
	}
	return n, true
}

// ARN formats an ARN in the request's region and account.
func (r *Request) ARN(service, resource string) string {
	return ARN(service, r.Region, r.AccountID, resource)
}

// Raw is a handler result written as is: status (200 when 0), headers and
// body. REST services use it for non-JSON payloads and custom statuses.
type Raw struct {
	Status int
	Header http.Header
	Body   []byte
}
