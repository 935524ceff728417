package awsapi

import (
	"errors"
	"testing"
)

func TestOperations(t *testing.T) {
	t.Parallel()
	type echoInput struct{ Name string }
	ops := Operations{"Echo": {Handle: Decoded(func(_ *Request, in *echoInput) (any, error) { return in.Name, nil })}}
	out, err := ops.Handle(&Request{Operation: "Echo", Body: []byte(`{"Name":"a"}`), Wire: JSON10})
	if err != nil || out != "a" {
		t.Fatalf("Echo = %v, %v", out, err)
	}
	var e *Error
	if _, err := ops.Handle(&Request{Operation: "Echo", Body: []byte(`{"Name":`), Wire: JSON10}); !errors.As(err, &e) || e.Code != "SerializationException" {
		t.Fatalf("malformed body: %v", err)
	}
	if _, err := ops.Handle(&Request{Operation: "Nope", Wire: JSON10}); !errors.As(err, &e) || e.Code != "UnknownOperationException" {
		t.Fatalf("unknown operation: %v", err)
	}
	if _, err := ops.Handle(&Request{Operation: "Nope", Wire: Query}); !errors.As(err, &e) || e.Code != "InvalidAction" {
		t.Fatalf("unknown awsQuery action: %v", err)
	}
	if len(ops.Shapes()) != 0 {
		t.Fatalf("an operation without schemas has shapes: %v", ops.Shapes())
	}
}
