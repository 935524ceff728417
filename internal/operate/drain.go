package operate

import (
	"context"
	"time"
)

// DrainOptions configure Drain.
type DrainOptions struct {
	// Timeout bounds the wait; default 10 minutes.
	Timeout time.Duration
	// Interval is the pause between two counts; default 2 seconds.
	Interval time.Duration
	// Progress, when not nil, receives every count.
	Progress func(DrainProgress)
	// Origins selects, on a multi-Region pipeline, the Regions whose
	// pending events are waited for; by default the one Drain runs
	// against.
	Origins Origins
}

// DrainProgress is one count of the pending events.
type DrainProgress struct {
	Pending int
	// Rate is the number of events leaving the outbox per second, over the
	// last RateWindow; negative when writers add faster than the relay
	// publishes.
	Rate float64
	// Left is the estimated time until the outbox is empty; 0 when unknown.
	Left time.Duration
	// Elapsed is the time since the first count (0 at the first count).
	Elapsed time.Duration
}

// RateWindow is the span over which Drain measures the rate.
const RateWindow = 30 * time.Second

// DrainResult is the last count of Drain.
type DrainResult struct {
	Drained bool
	DrainProgress
	// Origins counts, on a multi-Region pipeline, the events of other
	// Regions left out at the last count; nil for a single-Region one.
	Origins *OriginsOutput
}

// Drain waits until no event of p is pending, or the timeout passes. It does
// not stop the application's writers.
func (c *Clients) Drain(ctx context.Context, p *Pipeline, o DrainOptions) (DrainResult, error) {
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.Interval <= 0 {
		o.Interval = 2 * time.Second
	}
	scope, err := p.originScope(o.Origins)
	if err != nil {
		return DrainResult{}, err
	}
	start := time.Now()
	deadline := start.Add(o.Timeout)
	type sample struct {
		at    time.Time
		count int
	}
	var samples []sample
	for {
		now := time.Now()
		n, others, err := c.pendingIn(ctx, p.pending(), scope, farFuture(now))
		if err != nil {
			return DrainResult{}, err
		}
		samples = append(samples, sample{now, n})
		for len(samples) > 2 && now.Sub(samples[1].at) >= RateWindow {
			samples = samples[1:]
		}
		pr := DrainProgress{Pending: n}
		if len(samples) > 1 {
			pr.Elapsed = now.Sub(start)
		}
		if first := samples[0]; now.Sub(first.at) > 0 {
			pr.Rate = float64(first.count-n) / now.Sub(first.at).Seconds()
			if pr.Rate > 0 {
				pr.Left = time.Duration(float64(n) / pr.Rate * float64(time.Second))
			}
		}
		if o.Progress != nil {
			o.Progress(pr)
		}
		if n == 0 {
			return DrainResult{Drained: true, DrainProgress: pr, Origins: others}, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			// The result's elapsed time is the whole wait, not the time of
			// its last count, which a slow count leaves short of the timeout.
			pr.Elapsed = time.Since(start)
			return DrainResult{DrainProgress: pr, Origins: others}, nil
		}
		select {
		case <-ctx.Done():
			return DrainResult{DrainProgress: pr, Origins: others}, ctx.Err()
		case <-time.After(min(o.Interval, left)):
		}
	}
}
