package awsops

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/smithy-go"
)

func TestNotFoundIsTypedForEveryServicesWord(t *testing.T) {
	for _, code := range []string{"ResourceNotFoundException", "NoSuchEntity", "AWS.SimpleQueueService.NonExistentQueue", "NotFound"} {
		api := &smithy.GenericAPIError{Code: code}
		err := fmt.Errorf("reading: %w", NotFound("queue", "q1", api))
		var nf *NotFoundError
		if !errors.As(err, &nf) || nf.Kind != "queue" || nf.ID != "q1" || !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v is no NotFoundError of queue q1", code, err)
		}
		if !errors.Is(err, api) {
			t.Errorf("%s: the service's error is not kept", code)
		}
	}
}

func TestNotFoundKeepsOtherErrors(t *testing.T) {
	other := &smithy.GenericAPIError{Code: "AccessDeniedException"}
	if err := NotFound("table", "t", other); !errors.Is(err, other) || errors.Is(err, ErrNotFound) || IsNotFound(err) {
		t.Errorf("NotFound(%v) = %v", other, err)
	}
	if err := NotFound("table", "t", nil); err != nil {
		t.Errorf("NotFound(nil) = %v", err)
	}
	if err := IgnoreNotFound(&NotFoundError{Kind: "rule", ID: "r"}); err != nil {
		t.Errorf("IgnoreNotFound kept %v", err)
	}
	if got := (&NotFoundError{Kind: "log group", ID: "/aws/lambda/x"}).Error(); got != "log group /aws/lambda/x does not exist" {
		t.Errorf("text %q", got)
	}
}

func TestIsConflict(t *testing.T) {
	for code, want := range map[string]bool{"ResourceConflictException": true, "ResourceInUseException": true, "ConflictException": true, "ResourceNotFoundException": false} {
		if got := IsConflict(fmt.Errorf("deleting: %w", &smithy.GenericAPIError{Code: code})); got != want {
			t.Errorf("IsConflict(%s) = %t, want %t", code, got, want)
		}
	}
	if IsConflict(errors.New("ConflictException")) {
		t.Error("IsConflict reads an error's text")
	}
}

func TestFoundIsNoneWhenNotFound(t *testing.T) {
	type output struct{ Value *int }
	get := func(o *output) *int { return o.Value }
	n := 7
	if v, err := Found(&output{Value: &n}, nil, get); err != nil || v != &n {
		t.Errorf("Found of an output = %v, %v", v, err)
	}
	if v, err := Found(nil, &smithy.GenericAPIError{Code: "NoSuchLifecycleConfiguration"}, get); err != nil || v != nil {
		t.Errorf("Found of a missing configuration = %v, %v; want none", v, err)
	}
	denied := &smithy.GenericAPIError{Code: "AccessDenied"}
	if v, err := Found(nil, denied, get); !errors.Is(err, denied) || v != nil {
		t.Errorf("Found of a refusal = %v, %v; want the error", v, err)
	}
}
