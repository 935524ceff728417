package awsapi

import (
	"net/url"
	"sync"

	"github.com/aws/smithy-go"
)

// Operation is one operation of a service: its handler; for a service
// the router transcodes (Spec.Protocols), the Smithy schemas of its input
// and output (nil Output: the unit shape); for a REST service, its Route.
type Operation struct {
	Handle        func(*Request) (any, error)
	Input, Output *smithy.Schema
	// Route is the method and path pattern of a REST operation, as the
	// service's Smithy model has it: "GET /2015-03-31/functions/{FunctionName}".
	// A label matches one non-empty path segment, a greedy label
	// ({ResourceArn...}) the rest of the path; the handler reads them with
	// Request.PathValue. A query after the path ("?tagging",
	// "?list-type=2") names parameters the request must carry; the route
	// with the most literals and query parameters wins. See Routes.
	Route string
}

// Operations is a service's table of operations, by name: one entry says
// how an operation is decoded, handled and encoded.
type Operations map[string]Operation

// Handle dispatches req to its operation; an operation not in the table is
// UnknownOperationException (InvalidAction in awsQuery).
func (o Operations) Handle(req *Request) (any, error) {
	op, ok := o[req.Operation]
	if !ok || op.Handle == nil {
		return nil, unknownOperation(req.Wire, req.Operation)
	}
	return op.Handle(req)
}

// Shapes returns the schemas of the operations, for Spec.Shapes.
func (o Operations) Shapes() Shapes {
	out := make(Shapes, len(o))
	for name, op := range o {
		if op.Input != nil {
			out[name] = OperationShapes{Input: op.Input, Output: op.Output}
		}
	}
	return out
}

// Decoded returns a handler that decodes the request's JSON form into a new
// In (SerializationException when it is malformed) and calls h with it: the
// opening every JSON operation shares.
func Decoded[In any](h func(req *Request, in *In) (any, error)) func(*Request) (any, error) {
	return func(req *Request) (any, error) {
		in := new(In)
		if err := req.DecodeJSON(in); err != nil {
			return nil, err
		}
		return h(req, in)
	}
}

// Locked is Decoded with mu held while h runs: the opening of the
// operations that read or change a service's state under its one lock.
func Locked[In any](mu sync.Locker, h func(req *Request, in *In) (any, error)) func(*Request) (any, error) {
	return Decoded(func(req *Request, in *In) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		return h(req, in)
	})
}

// FromForm returns a handler that reads the request's awsQuery parameters
// and calls h with them: the opening every awsQuery operation shares.
func FromForm(h func(req *Request, form url.Values) (any, error)) func(*Request) (any, error) {
	return func(req *Request) (any, error) { return h(req, req.Form()) }
}
