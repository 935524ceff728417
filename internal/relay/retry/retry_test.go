package retry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

func TestIsTransient(t *testing.T) {
	t.Parallel()
	serverError := &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: 503}}, Err: errors.New("unavailable")}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"throttling", &smithy.GenericAPIError{Code: "ThrottlingException"}, true},
		{"internal failure", &smithy.GenericAPIError{Code: "InternalFailure"}, true},
		{"sns throttled", &smithy.GenericAPIError{Code: "Throttled"}, true},
		{"provisioned throughput", &types.ProvisionedThroughputExceededException{}, true},
		{"request limit", &types.RequestLimitExceeded{}, true},
		{"wrapped", fmt.Errorf("marking: %w", &smithy.GenericAPIError{Code: "ThrottlingException"}), true},
		{"5xx", serverError, true},
		{"connection reset", &net.OpError{Op: "read", Err: errors.New("connection reset by peer")}, true},
		{"access denied", &smithy.GenericAPIError{Code: "AccessDeniedException"}, false},
		{"validation", &smithy.GenericAPIError{Code: "ValidationException"}, false},
		{"conditional check", &types.ConditionalCheckFailedException{}, false},
		{"canceled", context.Canceled, false},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := IsTransient(tt.err); got != tt.want {
				t.Errorf("IsTransient(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	var slept []time.Duration
	p := Policy{Attempts: 4, Base: 100 * time.Millisecond, Max: 250 * time.Millisecond, Margin: time.Second,
		Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }}
	ctx := context.Background()
	for retry := 1; retry <= 3; retry++ {
		if !p.Backoff(ctx, retry) {
			t.Fatalf("retry %d refused", retry)
		}
	}
	if p.Backoff(ctx, 4) {
		t.Error("retry 4 allowed with 4 attempts")
	}
	for i, d := range slept {
		ceiling := min(p.Max, p.Base<<i)
		if d < 0 || d > ceiling {
			t.Errorf("sleep %d = %v, want within [0, %v]", i, d, ceiling)
		}
	}

	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if p.Backoff(short, 1) {
		t.Error("backoff allowed inside the deadline margin")
	}
	done, cancel2 := context.WithCancel(ctx)
	cancel2()
	if p.Backoff(done, 1) {
		t.Error("backoff allowed on a cancelled context")
	}
}

func TestTimeLeft(t *testing.T) {
	t.Parallel()
	if !TimeLeft(context.Background(), time.Hour) {
		t.Error("no deadline: want time left")
	}
	// An hour away: the margins either side of it hold however slow the
	// machine.
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if TimeLeft(ctx, 2*time.Hour) || !TimeLeft(ctx, time.Minute) {
		t.Error("TimeLeft ignores the deadline")
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	poison := map[string]struct{}{"MalformedDetail": {}}
	for code, want := range map[string]Class{
		"MalformedDetail": ClassPoison, "ThrottlingException": ClassThrottling, "Throttled": ClassThrottling,
		"KMSThrottling": ClassThrottling, "InternalFailure": ClassTransient, "AccessDeniedException": ClassEnvironment,
		"KMSDisabled": ClassEnvironment, "": ClassEnvironment, "NeverSeenBefore": ClassEnvironment,
	} {
		if got := ClassifyCode(code, poison); got != want {
			t.Errorf("ClassifyCode(%q) = %s, want %s", code, got, want)
		}
	}
	serverError := &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: 500}}, Err: errors.New("boom")}
	for _, tt := range []struct {
		err  error
		want Class
	}{
		{&smithy.GenericAPIError{Code: "ThrottlingException"}, ClassThrottling},
		{&types.ProvisionedThroughputExceededException{}, ClassThrottling},
		{serverError, ClassTransient},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), ClassTransient},
		{&smithy.GenericAPIError{Code: "AccessDeniedException"}, ClassEnvironment},
		{&smithy.GenericAPIError{Code: "ResourceNotFoundException"}, ClassEnvironment},
		{&smithy.GenericAPIError{Code: "MalformedDetail"}, ClassEnvironment}, // a call error is never poison
	} {
		if got := ClassifyError(tt.err); got != tt.want {
			t.Errorf("ClassifyError(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}
