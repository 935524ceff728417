package awsapi

import (
	"net/http"
	"testing"
)

func TestParseARN(t *testing.T) {
	t.Parallel()
	a, err := ParseARN("arn:aws:dynamodb:us-east-1:000000000000:table/orders/stream/2026-01-01T00:00:00.000")
	if err != nil {
		t.Fatal(err)
	}
	if a.Service != "dynamodb" || a.Resource != "table/orders/stream/2026-01-01T00:00:00.000" {
		t.Fatalf("%+v", a)
	}
	if a.String() != "arn:aws:dynamodb:us-east-1:000000000000:table/orders/stream/2026-01-01T00:00:00.000" {
		t.Fatal(a.String())
	}
	for in, want := range map[string]string{
		"arn:aws:lambda:us-east-1:000000000000:function:f": "f",
		"arn:aws:sqs:us-east-1:000000000000:q":             "q",
		"orders":                                           "orders",
	} {
		if got := ResourceName(in); got != want {
			t.Errorf("ResourceName(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := ParseARN("nope"); err == nil {
		t.Fatal("nope parsed")
	}
}

func TestCredentialScope(t *testing.T) {
	t.Parallel()
	r, _ := http.NewRequest(http.MethodPost, "http://x/", nil)
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDX/20260101/eu-west-1/lambda/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc")
	akid, region, svc := CredentialScope(r)
	if akid != "AKIDX" || region != "eu-west-1" || svc != "lambda" {
		t.Fatalf("%s %s %s", akid, region, svc)
	}
	r, _ = http.NewRequest(http.MethodGet, "http://x/?X-Amz-Credential=AKIDY%2F20260101%2Fus-east-1%2Fs3%2Faws4_request", nil)
	akid, _, svc = CredentialScope(r)
	if akid != "AKIDY" || svc != "s3" {
		t.Fatalf("presigned: %s %s", akid, svc)
	}
}

func TestFaultMatching(t *testing.T) {
	t.Parallel()
	f := NewFaults()
	f.Add(FaultRule{Service: "sqs", Code: "X"})
	if _, err := f.Request("sns", "Publish"); err != nil {
		t.Fatal("wrong service matched")
	}
	if _, err := f.Request("sqs", "SendMessage"); err == nil || err.Code != "X" || err.Status() != 400 {
		t.Fatalf("err = %v", err)
	}
	f.Clear()
	f.Add(FaultRule{Code: "ServiceUnavailable"})
	if _, err := f.Request("any", "Op"); err == nil || err.Status() != 500 || err.Sender {
		t.Fatalf("err = %+v", err)
	}
}

func TestNewUUID(t *testing.T) {
	t.Parallel()
	u := NewUUID()
	if len(u) != 36 || u[14] != '4' || u == NewUUID() {
		t.Fatal(u)
	}
}
