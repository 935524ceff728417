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
