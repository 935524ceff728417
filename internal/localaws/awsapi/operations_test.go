package awsapi

import (
	"errors"
	"net/url"
	"sync"
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

func TestLocked(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	type in struct{ N int }
	h := Locked(&mu, func(_ *Request, in *in) (any, error) {
		if mu.TryLock() {
			mu.Unlock()
			return nil, errors.New("the lock is not held while the handler runs")
		}
		return in.N, nil
	})
	out, err := h(&Request{Body: []byte(`{"N":3}`)})
	if err != nil || out != 3 {
		t.Fatalf("Locked = %v, %v", out, err)
	}
	if !mu.TryLock() {
		t.Fatal("the lock is still held after the handler returned")
	}
	mu.Unlock()
	if _, err := h(&Request{Body: []byte(`{`)}); err == nil {
		t.Fatal("a malformed body reached the handler")
	}
}

func TestBackgroundClose(t *testing.T) {
	t.Parallel()
	b := NewBackground()
	returned := make(chan struct{})
	b.Go(func() {
		<-b.Context().Done()
		close(returned)
	})
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-returned:
	default:
		t.Fatal("Close returned before the work in flight")
	}
}

func TestFromForm(t *testing.T) {
	t.Parallel()
	h := FromForm(func(_ *Request, f url.Values) (any, error) { return f.Get("TopicArn"), nil })
	out, err := h(&Request{Body: []byte("Action=GetTopicAttributes&TopicArn=arn%3Aaws%3Asns%3Aus-east-1%3A000000000000%3At")})
	if err != nil || out != "arn:aws:sns:us-east-1:000000000000:t" {
		t.Fatalf("FromForm = %v, %v", out, err)
	}
}
