package publish

import (
	"context"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// A Pace limits how many events a second are published: the reconciler's
// share of the target's quota (DESIGN.md, "Recovery at scale"). It is
// carried by the context of the publishing, so that one processor serves
// the stream path, which is not paced, and the reconciler's runs, each
// with a pace of its own.
type Pace interface {
	// Wait takes n events' worth of the rate, and reports false when ctx
	// ends, or its deadline comes, before the rate allows them.
	Wait(ctx context.Context, n int) bool
}

type paceKey struct{}

// WithPace returns ctx, whose publishing (Paced) waits for pace first.
func WithPace(ctx context.Context, pace Pace) context.Context {
	return context.WithValue(ctx, paceKey{}, pace)
}

// untried is the reason of an event the pace did not let through in time.
const untried = "not tried: the invocation's deadline came before the publishing rate (reconciler.max_events_per_second) allowed it; it is published next time"

// Paced publishes records with pub once the pace of ctx, if it has one,
// allows as many events, taken a batch call's worth at a time. Records the
// pace does not let through before the deadline are not sent: each is
// Failed and Deferred, no fault of the target, so that they stay pending
// for the next run; those it let through are published. A pace is waited
// on for what is sent, not for what is found: an ordered event that waits
// for its key costs nothing of it.
func Paced(ctx context.Context, pub Publisher, records []outbox.Record) []Result {
	return PublishAllowed(ctx, pub, records, Allow(ctx, len(records)))
}

// Allow waits until the pace of ctx, if it has one, allows n events, taken
// a batch call's worth at a time, and returns how many of them it allowed
// before its deadline: all n, unless the deadline comes first.
func Allow(ctx context.Context, n int) int {
	pace, ok := ctx.Value(paceKey{}).(Pace)
	if !ok {
		return n
	}
	allowed := 0
	for allowed < n {
		take := min(MaxBatchEntries, n-allowed)
		if !pace.Wait(ctx, take) {
			break
		}
		allowed += take
	}
	return allowed
}

// PublishAllowed publishes the first allowed records with pub; the others
// are not sent, each Failed and Deferred (see Paced).
func PublishAllowed(ctx context.Context, pub Publisher, records []outbox.Record, allowed int) []Result {
	allowed = min(allowed, len(records))
	out := make([]Result, 0, len(records))
	if allowed > 0 {
		out = append(out, pub.Publish(ctx, records[:allowed])...)
	}
	for range records[allowed:] {
		out = append(out, Result{Status: Failed, Reason: untried, Deferred: true})
	}
	return out
}
