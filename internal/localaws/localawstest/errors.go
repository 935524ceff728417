package localawstest

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/smithy-go"
)

// ErrorCode is the code of the AWS API error in err's chain, or "" when
// there is none.
func ErrorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// WantCode fails t unless err is an AWS API error with code; what names
// the call.
func WantCode(t testing.TB, err error, code, what string) {
	t.Helper()
	if got := ErrorCode(err); got != code {
		t.Fatalf("%s: error %v (code %q), want code %s", what, err, got, code)
	}
}

// WantError fails t unless err is, or wraps, an error of type E (such as
// *types.QueueDoesNotExist); what names the call.
func WantError[E error](t testing.TB, err error, what string) {
	t.Helper()
	_ = ErrorAs[E](t, err, what)
}

// WantErrorMessage is WantError for an error whose text also contains
// fragment.
func WantErrorMessage[E error](t testing.TB, err error, what, fragment string) {
	t.Helper()
	WantError[E](t, err, what)
	if !strings.Contains(err.Error(), fragment) {
		t.Fatalf("%s: %v, want a message containing %q", what, err, fragment)
	}
}

// ErrorAs is WantError that returns the error of type E.
func ErrorAs[E error](t testing.TB, err error, what string) E {
	t.Helper()
	var target E
	if !errors.As(err, &target) {
		t.Fatalf("%s: %v, want %T", what, err, target)
	}
	return target
}
