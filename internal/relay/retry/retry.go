// Package retry decides which AWS errors are worth retrying and spaces the
// retries with jittered exponential backoff inside the invocation's deadline.
//
// The AWS SDK already retries whole calls a few times; this package adds the
// retries the SDK cannot do (entries that failed inside a successful batch
// call, unprocessed batch items) and a last round for calls the SDK gave up
// on, bounded by the time the invocation has left.
package retry

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	awsretry "github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"
)

// Policy bounds retries. The zero value is not useful; start from Default.
type Policy struct {
	// Attempts is the total number of attempts, the first included.
	Attempts int
	// Base is the backoff before the first retry; it doubles on each retry.
	Base time.Duration
	// Max caps one backoff.
	Max time.Duration
	// Margin is kept free before the context's deadline: no backoff ends
	// within it, so the invocation has time to record what failed.
	Margin time.Duration
	// Sleep waits for d or until ctx is done; nil means a timer. Tests
	// replace it.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Default is the policy of the relay: 5 attempts, 50 ms doubling to 1 s,
// full jitter, stopping 2 s before the deadline.
var Default = Policy{Attempts: 5, Base: 50 * time.Millisecond, Max: time.Second, Margin: 2 * time.Second}

// Backoff waits before retry number retry (1 for the first retry) and reports
// whether the caller may make that attempt: false when the attempts are used
// up, the context is done, or the wait would run into the deadline margin.
func (p Policy) Backoff(ctx context.Context, retry int) bool {
	if retry >= p.Attempts || ctx.Err() != nil {
		return false
	}
	d := p.delay(retry)
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline)-p.Margin < d {
		return false
	}
	sleep := p.Sleep
	if sleep == nil {
		sleep = timerSleep
	}
	return sleep(ctx, d) == nil
}

// delay is a full-jitter backoff: uniform in [0, min(Max, Base*2^(retry-1))].
func (p Policy) delay(retry int) time.Duration {
	ceiling := p.Base << (retry - 1)
	if ceiling > p.Max || ceiling <= 0 {
		ceiling = p.Max
	}
	if ceiling <= 0 {
		return 0
	}
	return rand.N(ceiling + 1)
}

func timerSleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// TimeLeft reports whether ctx has more than margin left before its
// deadline; a context without a deadline always has.
func TimeLeft(ctx context.Context, margin time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	deadline, ok := ctx.Deadline()
	return !ok || time.Until(deadline) > margin
}

// ByDeadline returns t, or ctx's deadline when that comes first: the
// latest an invocation that ends at its deadline can still act, and so the
// latest a hold or lease it takes needs to last.
func ByDeadline(ctx context.Context, t time.Time) time.Time {
	if deadline, ok := ctx.Deadline(); ok && deadline.Before(t) {
		return deadline
	}
	return t
}

// transientCodes are error codes that mean "slow down" or "try again" across
// the services the relay calls, in addition to the SDK's own list.
var transientCodes = map[string]struct{}{
	"InternalFailure":      {},
	"InternalError":        {},
	"InternalServerError":  {},
	"ServiceUnavailable":   {},
	"Throttled":            {},
	"KMSThrottling":        {},
	"ThrottlingException":  {},
	"RequestLimitExceeded": {},
}

// IsTransientCode reports whether an error code returned for one entry of a
// batch (PutEvents, PublishBatch) is worth retrying.
func IsTransientCode(code string) bool {
	_, ok := transientCodes[code]
	if !ok {
		_, ok = awsretry.DefaultThrottleErrorCodes[code]
	}
	return ok
}

// IsTransient reports whether a failed call is worth retrying: throttling,
// server errors (5xx), timeouts and connection errors. Cancellation of the
// caller's context is not.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && IsTransientCode(apiErr.ErrorCode()) {
		return true
	}
	var quota ratelimit.QuotaExceededError
	if errors.As(err, &quota) {
		return true
	}
	return awsretry.IsErrorRetryables(awsretry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary
}

// Class is the kind of a failure, for logs and the PublishErrors metric.
type Class string

// Failure classes.
const (
	// ClassEnvironment: a fact about the environment that a person fixes (a
	// missing permission, bus, topic or key, an unknown error); the event
	// stays pending and goes out once it is fixed.
	ClassEnvironment Class = "environment"
	// ClassThrottling: the service asked to slow down.
	ClassThrottling Class = "throttling"
	// ClassPoison: the event itself can never be accepted.
	ClassPoison Class = "poison"
	// ClassTransient: a server error, timeout or broken connection.
	ClassTransient Class = "transient"
)

// Classes lists every Class, in the order they are reported.
var Classes = []Class{ClassEnvironment, ClassThrottling, ClassPoison, ClassTransient}

// extraThrottleCodes are throttling codes of the services the relay calls
// that the SDK's list lacks.
var extraThrottleCodes = map[string]struct{}{
	"Throttled":     {},
	"KMSThrottling": {},
	// SQS: its own throttling, and KMS's of the queue's key.
	"RequestThrottled": {},
	"KmsThrottled":     {},
}

// IsThrottleCode reports whether an error code asks the caller to slow down.
func IsThrottleCode(code string) bool {
	if _, ok := extraThrottleCodes[code]; ok {
		return true
	}
	_, ok := awsretry.DefaultThrottleErrorCodes[code]
	return ok
}

// ClassifyCode classifies the error code of one entry of a batch call.
// poison holds the codes that the target uses for a fault of the entry's own
// content. Every code that is neither poison nor transient, unknown codes
// included, is an environment failure: the event stays pending.
func ClassifyCode(code string, poison map[string]struct{}) Class {
	switch _, isPoison := poison[code]; {
	case isPoison:
		return ClassPoison
	case IsThrottleCode(code):
		return ClassThrottling
	case IsTransientCode(code):
		return ClassTransient
	}
	return ClassEnvironment
}

// ClassifyError classifies an error of a whole call. No call error is
// poison: a call fails for reasons of the environment or the service, never
// of one event.
func ClassifyError(err error) Class {
	var apiErr smithy.APIError
	switch {
	case errors.As(err, &apiErr) && IsThrottleCode(apiErr.ErrorCode()):
		return ClassThrottling
	case IsTransient(err), errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return ClassTransient
	}
	return ClassEnvironment
}

// ErrorCode returns the AWS error code of err, or "" when it has none.
func ErrorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}
