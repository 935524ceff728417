package lambda_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambda"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambdatest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

const roleArn = "arn:aws:iam::000000000000:role/fn-role"

// bootstrapZip builds testdata/fn for goarch (once per test binary run) and
// returns a zip with it as bootstrap.
func bootstrapZip(t testing.TB, goarch string) []byte {
	t.Helper()
	return lambdatest.Zip(t, "./testdata/fn", goarch)
}

// logSink collects function log lines.
type logSink struct {
	mu    sync.Mutex
	lines []logLine
}

type logLine struct{ group, stream, message string }

func (l *logSink) AppendLog(group, stream string, _ time.Time, message string) {
	l.mu.Lock()
	l.lines = append(l.lines, logLine{group, stream, message})
	l.mu.Unlock()
}

func (l *logSink) matching(substr string) []logLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []logLine
	for _, ln := range l.lines {
		if strings.Contains(ln.message, substr) {
			out = append(out, ln)
		}
	}
	return out
}

// roles is a RoleChecker that knows one role.
type roles struct{}

func (roles) RoleAssumableBy(role, principal string) error {
	if role == roleArn && principal == "lambda.amazonaws.com" {
		return nil
	}
	return awsapi.NewError("InvalidParameterValueException", "The role defined for the function cannot be assumed by Lambda.")
}

type harness struct {
	env    *awsapi.Env
	svc    *lambda.Service
	client *awslambda.Client
	ctl    *control.Client
	logs   *logSink
	url    string
}

func newHarness(t testing.TB, mod ...func(*lambda.Options)) *harness {
	t.Helper()
	env := awsapi.NewEnv("", "", nil)
	router := awsapi.NewRouter(env)
	srv := httptest.NewServer(router)
	env.Endpoint = srv.URL
	sink := &logSink{}
	opts := lambda.Options{
		Roles:            func() lambda.RoleChecker { return roles{} },
		Logs:             func() lambda.LogSink { return sink },
		StateDelay:       50 * time.Millisecond,
		AsyncRetryDelays: []time.Duration{20 * time.Millisecond, 40 * time.Millisecond},
	}
	for _, fn := range mod {
		fn(&opts)
	}
	svc, err := lambda.New(env, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := router.Register(svc); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := svc.Close(); err != nil {
			t.Errorf("closing: %v", err)
		}
		srv.Close()
	})
	return &harness{env: env, svc: svc, client: clientFor(srv.URL, "AKIDADMIN", "secret", ""), ctl: control.New(srv.URL, nil), logs: sink, url: srv.URL}
}

func clientFor(url, akid, secret, token string) *awslambda.Client {
	return awslambda.NewFromConfig(aws.Config{
		Region:       awsapi.DefaultRegion,
		Credentials:  credentials.NewStaticCredentialsProvider(akid, secret, token),
		BaseEndpoint: aws.String(url),
	}, func(o *awslambda.Options) { o.RetryMaxAttempts = 1 })
}

// create creates a function from the test bootstrap and waits until it is
// Active.
func (h *harness) create(t testing.TB, name string, mod func(*awslambda.CreateFunctionInput)) *awslambda.CreateFunctionOutput {
	t.Helper()
	in := &awslambda.CreateFunctionInput{
		FunctionName:  aws.String(name),
		Runtime:       types.RuntimeProvidedal2023,
		Role:          aws.String(roleArn),
		Handler:       aws.String("bootstrap"),
		Code:          &types.FunctionCode{ZipFile: bootstrapZip(t, runtime.GOARCH)},
		Architectures: []types.Architecture{lambdatest.HostArchitecture()},
		Timeout:       aws.Int32(10),
	}
	if mod != nil {
		mod(in)
	}
	ctx := context.Background()
	out, err := h.client.CreateFunction(ctx, in)
	if err != nil {
		t.Fatalf("CreateFunction: %v", err)
	}
	h.waitActive(t, name)
	return out
}

func (h *harness) waitActive(t testing.TB, name string) {
	t.Helper()
	localawstest.EventuallyState(t, 20*time.Second, "function "+name+" to be Active", func() (bool, string) {
		out, err := h.client.GetFunctionConfiguration(context.Background(), &awslambda.GetFunctionConfigurationInput{FunctionName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		return out.State == types.StateActive && out.LastUpdateStatus == types.LastUpdateStatusSuccessful, fmt.Sprintf("%s/%s", out.State, out.LastUpdateStatus)
	})
}

type fnResponse struct {
	Data        json.RawMessage   `json:"data"`
	Env         map[string]string `json:"env"`
	RequestID   string            `json:"requestId"`
	FunctionArn string            `json:"functionArn"`
	DeadlineMS  int64             `json:"deadlineMs"`
	PID         int               `json:"pid"`
}

type fnError struct {
	ErrorMessage string `json:"errorMessage"`
	ErrorType    string `json:"errorType"`
}

func (h *harness) invoke(t testing.TB, name string, event any) *awslambda.InvokeOutput {
	t.Helper()
	b, err := json.Marshal(event)
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.client.Invoke(context.Background(), &awslambda.InvokeInput{FunctionName: aws.String(name), Payload: b})
	if err != nil {
		t.Fatalf("Invoke %s: %v", name, err)
	}
	return out
}

func decode[T any](t testing.TB, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return v
}
