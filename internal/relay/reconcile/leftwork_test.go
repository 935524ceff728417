package reconcile

import (
	"context"
	"testing"
	"time"
)

func TestLeftWork(t *testing.T) {
	t.Parallel()
	swept := &sweeper{leased: true, res: sweepResult{complete: true}}
	unswept := &sweeper{leased: true}
	released := &sweeper{leased: false}
	for _, c := range []struct {
		name   string
		held   []*sweeper
		report Report
		want   bool
	}{
		{"every shard swept, nothing waits", []*sweeper{swept, released}, Report{}, false},
		{"a leased shard not swept to its end", []*sweeper{swept, unswept}, Report{}, true},
		{"a shard released to a worker is the worker's", []*sweeper{swept, released}, Report{}, false},
		{"ordered events wait for events that are not FAILED", []*sweeper{swept}, Report{Waiting: 40, Blocked: 3}, true},
		{"every waiting event is behind a FAILED one", []*sweeper{swept}, Report{Waiting: 3, Blocked: 3}, false},
	} {
		if got := leftWork(c.held, &c.report); got != c.want {
			t.Errorf("%s: leftWork = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestLeaseEnd: a lease lasts LeaseDuration, or until the run's deadline
// when that comes first, so that a killed run keeps no shard past it.
func TestLeaseEnd(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	soon, cancel := context.WithDeadline(context.Background(), now.Add(20*time.Second))
	defer cancel()
	late, cancelLate := context.WithDeadline(context.Background(), now.Add(10*time.Minute))
	defer cancelLate()
	for _, tt := range []struct {
		name string
		ctx  context.Context
		want time.Time
	}{
		{"deadline first", soon, now.Add(20 * time.Second)},
		{"deadline after", late, now.Add(LeaseDuration)},
		{"no deadline", context.Background(), now.Add(LeaseDuration)},
	} {
		if got := leaseEnd(tt.ctx, now); !got.Equal(tt.want) {
			t.Errorf("%s: lease ends %s after now, want %s", tt.name, got.Sub(now), tt.want.Sub(now))
		}
	}
}
