package awsapi

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
)

// Error is an AWS API error as a handler returns it. The router writes it in
// the wire shape of the service's protocol.
type Error struct {
	// Code is the error code, the modelled exception name for JSON and
	// REST-JSON protocols (ResourceNotFoundException) or the awsQuery code
	// (NotFound, AWS.SimpleQueueService.NonExistentQueue).
	Code string
	// Message is the human readable message.
	Message string
	// HTTPStatus defaults to 400 for sender faults and 500 otherwise.
	HTTPStatus int
	// Sender marks a client fault (Type Sender / User); false is a server
	// fault (Receiver / Service).
	Sender bool
	// QueryCode is the awsQuery error code of an awsQuery-compatible JSON
	// service (SQS). When set, the JSON error also carries the header
	// x-amzn-query-error: QueryCode;Sender.
	QueryCode string
	// Fields are extra members of the JSON error body, such as DynamoDB's
	// CancellationReasons or Item.
	Fields map[string]any
}

// Error implements error.
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Code + ": " + e.Message
}

// Status is the HTTP status the error is written with.
func (e *Error) Status() int {
	if e.HTTPStatus != 0 {
		return e.HTTPStatus
	}
	if e.Sender {
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// WithStatus sets the HTTP status e is written with and returns e, for
// constructors: NewError(code, msg).WithStatus(http.StatusConflict).
func (e *Error) WithStatus(status int) *Error {
	e.HTTPStatus = status
	return e
}

// With returns a copy of e with an extra JSON body member.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Fields = make(map[string]any, len(e.Fields)+1)
	maps.Copy(c.Fields, e.Fields)
	c.Fields[key] = value
	return &c
}

// AsError converts any error into an *Error: an *Error in the chain is
// returned as is, anything else becomes an InternalFailure.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return InternalFailure("%s", err.Error())
}

// NewError returns a sender (client) fault with status 400.
func NewError(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: sprintf(format, args...), HTTPStatus: http.StatusBadRequest, Sender: true}
}

// NewServerError returns a server fault with status 500.
func NewServerError(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: sprintf(format, args...), HTTPStatus: http.StatusInternalServerError}
}

func sprintf(format string, args ...any) string {
	if len(args) == 0 {
		return format
	}
	return fmt.Sprintf(format, args...)
}

// ValidationException is the common 400 input validation error.
func ValidationException(format string, args ...any) *Error {
	return NewError("ValidationException", format, args...)
}

// ResourceNotFoundException is the common 400 missing resource error of the
// JSON services (DynamoDB, EventBridge, Logs). Lambda and Scheduler return it
// with 404: use NotFound404 there.
func ResourceNotFoundException(format string, args ...any) *Error {
	return NewError("ResourceNotFoundException", format, args...)
}

// NotFound404 is ResourceNotFoundException with HTTP status 404 (Lambda,
// Scheduler).
func NotFound404(format string, args ...any) *Error {
	return ResourceNotFoundException(format, args...).WithStatus(http.StatusNotFound)
}

// ResourceInUseException is the 400 error for a resource that exists or is
// busy (DynamoDB, EventBridge).
func ResourceInUseException(format string, args ...any) *Error {
	return NewError("ResourceInUseException", format, args...)
}

// ResourceConflictException is Lambda's 409 conflict.
func ResourceConflictException(format string, args ...any) *Error {
	return NewError("ResourceConflictException", format, args...).WithStatus(http.StatusConflict)
}

// ConflictException is the 409 conflict of Scheduler and others.
func ConflictException(format string, args ...any) *Error {
	return NewError("ConflictException", format, args...).WithStatus(http.StatusConflict)
}

// AccessDeniedException is the JSON and REST services' authorisation error.
func AccessDeniedException(format string, args ...any) *Error {
	return NewError("AccessDeniedException", format, args...)
}

// AccessDenied is the awsQuery services' (IAM, STS, SNS use AuthorizationError)
// authorisation error, code AccessDenied, status 403.
func AccessDenied(format string, args ...any) *Error {
	return NewError("AccessDenied", format, args...).WithStatus(http.StatusForbidden)
}

// ThrottlingException is the common throttling error.
func ThrottlingException(format string, args ...any) *Error {
	return NewError("ThrottlingException", format, args...)
}

// InternalFailure is the generic 500 server fault.
func InternalFailure(format string, args ...any) *Error {
	return NewServerError("InternalFailure", format, args...)
}

// ServiceUnavailable is the generic 503 server fault.
func ServiceUnavailable(format string, args ...any) *Error {
	return NewServerError("ServiceUnavailable", format, args...).WithStatus(http.StatusServiceUnavailable)
}

// UnknownOperationException is returned for an operation the service does
// not implement.
func UnknownOperationException(op string) *Error {
	if op == "" {
		return NewError("UnknownOperationException", "")
	}
	return NewError("UnknownOperationException", "Unknown operation %s", op)
}

// InvalidAction is the awsQuery error for an unknown Action.
func InvalidAction(action string) *Error {
	return NewError("InvalidAction", "The action %s is not valid for this web service.", action)
}

// SerializationException is returned for a body that cannot be decoded.
func SerializationException(format string, args ...any) *Error {
	return NewError("SerializationException", format, args...)
}

// ExpiredTokenException is returned for expired temporary credentials.
func ExpiredTokenException() *Error {
	return NewError("ExpiredTokenException", "The security token included in the request is expired")
}
