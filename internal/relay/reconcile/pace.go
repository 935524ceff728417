package reconcile

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/batch"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
)

// Publishing within the target's quota (DESIGN.md): a run publishes at
// most MaxEventsPerSecond / MaxWorkers events a second, waited for before
// each publish call (publish.Paced): what a run finds but does not publish
// (an ordered event that waits for its key) costs none of it. A throttled publish
// halves the rate, down to its floor; each page without throttling raises
// it by a tenth of the share, back up to it.

// runRate is the publishing rate of one run. An unordered relay's runs
// split MaxEventsPerSecond among MaxWorkers. An ordered relay's run starts
// no workers: a key's events are on every shard, so that a worker sweeping
// some shards would find each hot key's events with gaps, and publish
// little of them; one run sweeps every shard, finds each key's events
// together and publishes them in order, many keys at once, at the whole
// rate. Its successor starts when it ends, and a scheduled run that comes
// meanwhile finds the shards leased, so one run publishes at a time.
func (r *Reconciler) runRate() float64 {
	if r.Ordered != nil {
		return r.MaxEventsPerSecond
	}
	return r.MaxEventsPerSecond / float64(max(r.MaxWorkers, 1))
}

// MinEventsPerSecond is the least rate a run slows down to, unless its
// share is lower: a page of DefaultPageSize events then takes 20 s, a
// lease's time, through which the run renews its leases (keepAlive); below
// it, pages are smaller (pageSize).
const MinEventsPerSecond = 5

// paceBurst is the most events taken at once: a publish call's entries.
const paceBurst = 10

// pacer limits a run's publishing rate; a nil pacer does not.
type pacer struct {
	mu    sync.Mutex
	lim   *rate.Limiter
	share rate.Limit
	floor rate.Limit
	// stopBy, when set, is the time after which the pacer lets nothing
	// through: the run's stop margin before its deadline, kept for marking
	// what it published.
	stopBy time.Time
}

// newPacer returns the pacer of a run that may publish perSecond events a
// second; nil when perSecond is not positive.
func newPacer(perSecond float64) *pacer {
	if perSecond <= 0 {
		return nil
	}
	share := rate.Limit(perSecond)
	return &pacer{lim: rate.NewLimiter(share, paceBurst), share: share, floor: min(share, max(share/8, MinEventsPerSecond))}
}

// Wait takes n tokens, and reports false when ctx ends first, or when
// they would come after stopBy (publish.Pace).
func (p *pacer) Wait(ctx context.Context, n int) bool {
	if p == nil {
		return true
	}
	for n > 0 {
		take := min(n, paceBurst)
		now := time.Now()
		res := p.lim.ReserveN(now, take)
		delay := res.DelayFrom(now)
		if !res.OK() || !p.stopBy.IsZero() && now.Add(delay).After(p.stopBy) {
			res.CancelAt(now)
			return false
		}
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				t.Stop()
				res.Cancel()
				return false
			case <-t.C:
			}
		}
		n -= take
	}
	return true
}

// observe adapts the rate to the outcomes of a page.
func (p *pacer) observe(outcomes []batch.Outcome) {
	if p == nil {
		return
	}
	throttled := false
	for _, o := range outcomes {
		throttled = throttled || o.Class == retry.ClassThrottling
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.lim.Limit()
	if throttled {
		p.lim.SetLimit(max(l/2, p.floor))
	} else {
		p.lim.SetLimit(min(l+p.share/10, p.share))
	}
}

// maxPageTime bounds the publishing time of a page at the run's rate: a
// lease's time (LeaseDuration), renewed before each page and in the
// background while it goes on.
const maxPageTime = 20 * time.Second

// pageSize is size, or fewer events when publishing size at the current
// rate would take longer than maxPageTime.
func (p *pacer) pageSize(size int32) int32 {
	if p == nil {
		return size
	}
	return int32(max(1, min(float64(size), p.limit()*maxPageTime.Seconds())))
}

// limit is the current rate, in events a second; 0 for no pacer.
func (p *pacer) limit() float64 {
	if p == nil {
		return 0
	}
	return float64(p.lim.Limit())
}
