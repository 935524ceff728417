package awsclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsclient/awsclienttest"
)

// isolate gives the test an AWS environment of its own.
func isolate(t *testing.T) {
	t.Helper()
	awsclienttest.Isolate(t, nil)
}

func TestPerServiceEndpointsOverrideTheGlobalOne(t *testing.T) {
	isolate(t)
	cfg, _, err := Load(context.Background(), Settings{
		Region:                    "eu-west-1",
		EndpointURL:               "http://127.0.0.1:4566",
		Endpoints:                 map[string]string{"lambda": "http://127.0.0.1:9001"},
		SkipCredentialsValidation: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(lambda.NewFromConfig(cfg).Options().BaseEndpoint); got != "http://127.0.0.1:9001" {
		t.Errorf("lambda endpoint = %q", got)
	}
	if got := aws.ToString(dynamodb.NewFromConfig(cfg).Options().BaseEndpoint); got != "http://127.0.0.1:4566" {
		t.Errorf("dynamodb endpoint = %q", got)
	}
	if got := aws.ToString(sqs.NewFromConfig(cfg).Options().BaseEndpoint); got != "http://127.0.0.1:4566" {
		t.Errorf("sqs endpoint = %q", got)
	}
}

func TestEnvironmentEndpointURLIsHonoured(t *testing.T) {
	isolate(t)
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4999")
	t.Setenv("AWS_REGION", "ap-south-1")
	cfg, _, err := Load(context.Background(), Settings{SkipCredentialsValidation: true})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != "ap-south-1" || aws.ToString(cfg.BaseEndpoint) != "http://127.0.0.1:4999" {
		t.Errorf("region %q endpoint %q", cfg.Region, aws.ToString(cfg.BaseEndpoint))
	}
}

func TestInvalidSettingsNameTheField(t *testing.T) {
	isolate(t)
	tests := []struct {
		settings Settings
		want     string
	}{
		{Settings{Region: "us-east-1", EndpointURL: "localhost:4566"}, "endpoint_url"},
		{Settings{Region: "us-east-1", Endpoints: map[string]string{"dynamo": "http://x"}}, `endpoints: "dynamo" is not a known service`},
		{Settings{Region: "us-east-1", Endpoints: map[string]string{"sqs": "ftp://x"}}, "endpoints.sqs"},
		{Settings{Region: "us-east-1", AssumeRole: &AssumeRole{RoleARN: "deployer"}}, "assume_role.role_arn"},
		{Settings{SkipCredentialsValidation: true}, "no AWS region is set"},
	}
	for _, tt := range tests {
		_, _, err := Load(context.Background(), tt.settings)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Load(%+v) = %v, want an error containing %q", tt.settings, err, tt.want)
		}
	}
}

func TestCredentialsAreValidatedWithSTS(t *testing.T) {
	isolate(t)
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		_ = r.ParseForm()
		if r.Form.Get("Action") != "GetCallerIdentity" {
			t.Errorf("unexpected STS action %q", r.Form.Get("Action"))
		}
		if strings.Contains(r.Header.Get("Authorization"), "Credential=AKIDBAD/") {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`<ErrorResponse><Error><Type>Sender</Type><Code>InvalidClientTokenId</Code><Message>The security token included in the request is invalid.</Message></Error><RequestId>1</RequestId></ErrorResponse>`))
			return
		}
		_, _ = w.Write([]byte(`<GetCallerIdentityResponse><GetCallerIdentityResult><Arn>arn:aws:iam::123456789012:user/ci</Arn><UserId>AIDA</UserId><Account>123456789012</Account></GetCallerIdentityResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetCallerIdentityResponse>`))
	}))
	defer srv.Close()

	_, id, err := Load(context.Background(), Settings{Region: "us-east-1", Endpoints: map[string]string{"sts": srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	if id.AccountID != "123456789012" || id.ARN != "arn:aws:iam::123456789012:user/ci" {
		t.Errorf("identity = %+v", id)
	}

	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDBAD")
	_, _, err = Load(context.Background(), Settings{Region: "us-east-1", Endpoints: map[string]string{"sts": srv.URL}})
	if err == nil || !strings.Contains(err.Error(), "InvalidClientTokenId") || !strings.Contains(err.Error(), "skip_credentials_validation") {
		t.Errorf("err = %v, want the STS error and the remedy", err)
	}
	before := calls
	if _, _, err := Load(context.Background(), Settings{Region: "us-east-1", Endpoints: map[string]string{"sts": srv.URL}, SkipCredentialsValidation: true}); err != nil {
		t.Fatal(err)
	}
	if calls != before {
		t.Errorf("skip_credentials_validation still called STS")
	}
}
