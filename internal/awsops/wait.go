// Package awsops holds the AWS orchestration helpers that the pipeline and
// subscription operations share: polling, error classification, policy
// documents, tag diffs, SQS queues and drift reports. It imports no
// Terraform framework.
package awsops

import (
	"context"
	"fmt"
	"time"
)

// Waiter bounds a wait: Timeout for the whole of it, MaxDelay for the
// longest pause between two polls.
type Waiter struct {
	Timeout  time.Duration
	MaxDelay time.Duration
}

// DefaultPollInterval is the longest pause between two polls of a Waiter
// whose owner sets none.
const DefaultPollInterval = 5 * time.Second

// PositiveOr returns d when it is positive, else def: a duration setting
// whose zero (or negative) value means its default.
func PositiveOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// For polls check until it reports done, fails, or the wait times out.
// what describes the condition for the error. The first pause is 100ms and
// each pause doubles, up to MaxDelay.
func (w Waiter) For(ctx context.Context, what string, check func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	delay := 100 * time.Millisecond
	for {
		done, err := check(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(delay*2, w.MaxDelay)
	}
}

// Create runs apply on an empty state. If apply fails, Create deletes what
// apply recorded in the state, even when ctx was cancelled, within cleanup,
// and returns the error with an empty state; if that clean-up fails too, it
// returns what remains so that it is recorded and removed later.
func Create[S any](ctx context.Context, cleanup time.Duration, apply func(context.Context, *S) error, del func(context.Context, S) (S, error)) (S, error) {
	var st S
	err := apply(ctx, &st)
	if err == nil {
		return st, nil
	}
	// Clean up even when ctx was cancelled, within the wait bound.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanup)
	defer cancel()
	rest, derr := del(cctx, st)
	if derr != nil {
		return rest, fmt.Errorf("%w; removing the components it created also failed (they remain recorded): %w", err, derr)
	}
	var empty S
	return empty, err
}
