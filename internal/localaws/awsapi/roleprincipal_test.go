package awsapi

import (
	"errors"
	"testing"
)

type denyAll struct{ err error }

func (d denyAll) Authorize(Principal, string, string) error { return d.err }

func TestRolePrincipal(t *testing.T) {
	env := NewEnv("", "123456789012", nil)
	p := env.RolePrincipal("arn:aws:iam::123456789012:role/service/exec", "s1")
	want := Principal{RoleArn: "arn:aws:iam::123456789012:role/service/exec", SessionName: "s1", ARN: "arn:aws:sts::123456789012:assumed-role/exec/s1"}
	if p != want {
		t.Fatalf("RolePrincipal = %+v, want %+v", p, want)
	}
}

func TestAuthorizeAs(t *testing.T) {
	env := NewEnv("", "123456789012", nil)
	p := env.RolePrincipal("arn:aws:iam::123456789012:role/exec", "s1")
	if err := env.AuthorizeAs(p, "sqs:SendMessage", "arn:aws:sqs:us-east-1:123456789012:q"); err != nil {
		t.Fatalf("AuthorizeAs without an authorizer = %v", err)
	}
	env.SetAuthorizer(denyAll{errors.New("no identity-based policy allows the sqs:SendMessage action")})
	err := env.AuthorizeAs(p, "sqs:SendMessage", "arn:aws:sqs:us-east-1:123456789012:q")
	var e *Error
	if !errors.As(err, &e) || e.Code != "AccessDeniedException" ||
		e.Message != "User: arn:aws:sts::123456789012:assumed-role/exec/s1 is not authorized to perform: sqs:SendMessage on resource: arn:aws:sqs:us-east-1:123456789012:q because no identity-based policy allows the sqs:SendMessage action" {
		t.Fatalf("AuthorizeAs = %v", err)
	}
	own := ValidationException("refused")
	env.SetAuthorizer(denyAll{own})
	if err := env.AuthorizeAs(p, "sqs:SendMessage", "q"); !errors.Is(err, own) {
		t.Fatalf("AuthorizeAs = %v, want the authorizer's own error", err)
	}
}
