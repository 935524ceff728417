package reconcile

import (
	"context"
	crand "crypto/rand"
	"errors"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Recovery at scale (DESIGN.md): a run sweeps only the shards it leases
// (outbox.Table.AcquireLease). A run of an ordered relay leases every shard
// or none (takeAll). A scheduled run leases every free shard;
// when the first pages of its own share are full (a backlog), or its first
// round leaves shards with more pages, it keeps its share, releases the
// others and starts workers, asynchronous invocations of its own
// function, to sweep them. A run whose deadline comes while its shards
// still hold pending events starts one successor. A worker leases one share,
// and goes on to the shards it has not tried once its own are swept.

// LeaseDuration is how long a lease lasts without renewal. A run renews
// its leases before each page, and in the background every
// DefaultLeaseRenewal while it runs (keepAlive), so that a live run keeps
// its shards through a long page (up to 20 s at the slowest publishing
// rate, MinEventsPerSecond) and through an ordered run's passes after its
// sweep, which publish for most of the run. A crashed run's shards wait
// LeaseDuration at most for another run: an ordered relay's next run needs
// every shard (takeAll), so a run killed mid-recovery stops the whole
// recovery until its leases end.
const LeaseDuration = 20 * time.Second

// DefaultLeaseRenewal is how often a run renews its leases in the
// background: four times a lease, so that a renewal or two may fail.
const DefaultLeaseRenewal = LeaseDuration / 4

// leaseEnd is the expiry of a lease taken or renewed at now by the run of
// ctx: LeaseDuration later, or the run's deadline if that comes first, as
// after it the run sweeps nothing. A run killed by its deadline (or by a
// fault before it) so keeps no shard past it: an ordered relay's next run
// needs every shard (takeAll).
func leaseEnd(ctx context.Context, now time.Time) time.Time {
	return retry.ByDeadline(ctx, now.Add(LeaseDuration))
}

// LeaseAPI is the part of the DynamoDB client that writes lease items.
type LeaseAPI interface {
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

// Invoker starts a worker: an asynchronous invocation of the reconciler's
// own function, marked a worker, with the run's minimum age.
type Invoker interface {
	StartWorker(ctx context.Context, minAge time.Duration) error
}

type workerKey struct{}

// AsWorker marks the run of ctx a worker's: it leases one share of the
// shards and starts no other worker, only a successor.
func AsWorker(ctx context.Context) context.Context { return context.WithValue(ctx, workerKey{}, true) }

func isWorker(ctx context.Context) bool { w, _ := ctx.Value(workerKey{}).(bool); return w }

// leaseRun is a run's leases and the workers it started.
type leaseRun struct {
	r      *Reconciler
	owner  string
	worker bool
	minAge time.Duration
	share  int
	held   []*sweeper
	others map[string]struct{} // the live holders of the leases it could not take
	// mu guards renewing, the held shards not released, which keepAlive
	// renews; it is held through a renewal and through a release, so that
	// a lease released is never renewed after.
	mu       sync.Mutex
	renewing []*sweeper
	workers  int
	cont     bool
}

// share is how many shards of n one worker sweeps.
func (r *Reconciler) share(n int) int {
	w := max(r.MaxWorkers, 1)
	return (n + w - 1) / w
}

// lease takes the leases of the run: every free shard for a scheduled run,
// one share for a worker, starting at a random shard so that workers
// starting together try different ones. Without r.Leases it returns nil and
// every shard is the run's.
func (r *Reconciler) lease(ctx context.Context, sweeps []*sweeper, minAge time.Duration) *leaseRun {
	if r.Leases == nil {
		for _, s := range sweeps {
			s.leased = true
		}
		return nil
	}
	lr := &leaseRun{r: r, owner: invocationID(ctx), worker: isWorker(ctx), minAge: minAge, share: r.share(len(sweeps)), others: map[string]struct{}{}}
	if r.Ordered != nil {
		lr.takeAll(ctx, sweeps)
		return lr
	}
	want := len(sweeps)
	if lr.worker {
		want = lr.share
	}
	first := rand.IntN(max(len(sweeps), 1))
	for i := range sweeps {
		if len(lr.held) == want {
			break
		}
		lr.take(ctx, sweeps[(first+i)%len(sweeps)])
	}
	return lr
}

// takeAll takes, for a run of an ordered relay (its successor too), the
// lease of every shard, in order, or of none. A key's events are on every
// shard: a run holding some would find each key's events with gaps and
// publish little of them, while keeping from the run that could publish
// them the shards it holds. Every run takes the shards in the same order,
// so of runs that start together the one that takes the first shard takes
// them all; a run that finds a shard another run holds gives back those
// it took and sweeps none.
func (lr *leaseRun) takeAll(ctx context.Context, sweeps []*sweeper) {
	for _, s := range sweeps {
		if !lr.take(ctx, s) {
			lr.release(ctx, lr.held)
			lr.held = nil
			lr.r.log().InfoContext(ctx, "another run sweeps this ordered relay's shards; this run sweeps none", "source", s.src.name)
			return
		}
	}
}

// take tries to lease s's shard, and reports whether the run now holds it.
func (lr *leaseRun) take(ctx context.Context, s *sweeper) bool {
	s.lease, s.tried = lr, true
	if !lr.acquire(ctx, s) {
		return false
	}
	s.leased = true
	lr.held = append(lr.held, s)
	lr.mu.Lock()
	lr.renewing = append(lr.renewing, s)
	lr.mu.Unlock()
	return true
}

// refill, for a worker whose leased shards are swept with less than its
// share left active, tries to lease the shards it has not tried yet: a
// worker (or successor) that starts after the shards it tried first were
// swept by another run goes on with those left, rather than ending with
// nothing published while another shard waits for the next schedule.
func (lr *leaseRun) refill(ctx context.Context, sweeps []*sweeper, active []*sweeper) []*sweeper {
	if lr == nil || !lr.worker || lr.r.Ordered != nil {
		return active
	}
	for _, s := range sweeps {
		if len(active) >= lr.share {
			break
		}
		if !s.tried && lr.take(ctx, s) {
			active = append(active, s)
		}
	}
	return active
}

// shard names the lease of s's shard.
func (lr *leaseRun) shard(s *sweeper) outbox.LeaseShard {
	return outbox.LeaseShard{Region: lr.r.LeaseRegion, Shard: s.shard}
}

// acquire takes the lease of s's shard, noting its live holder if another.
func (lr *leaseRun) acquire(ctx context.Context, s *sweeper) bool {
	now := lr.r.now()
	_, err := lr.r.Leases.UpdateItem(ctx, lr.r.Table.AcquireLease(lr.shard(s), lr.owner, now, leaseEnd(ctx, now)))
	var ccf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		return true
	case errors.As(err, &ccf):
		if l, perr := outbox.ParseLease(ccf.Item); perr == nil && l.Live(now) {
			lr.others[l.Owner] = struct{}{}
		}
	default:
		lr.r.log().WarnContext(ctx, "taking the lease of a shard failed; another run sweeps it", "source", s.src.name, "error", err)
	}
	return false
}

// renew extends the lease of s before a page, and reports whether the run
// still holds it. A failed write other than a lost lease keeps the shard:
// the lease lasts LeaseDuration from the last renewal.
func (lr *leaseRun) renew(ctx context.Context, s *sweeper) bool {
	if lr == nil {
		return true
	}
	err := lr.extend(ctx, s)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		lr.r.log().WarnContext(ctx, "the lease of a shard was taken over; another run sweeps it", "source", s.src.name)
		s.leased = false
		return false
	}
	if err != nil {
		lr.r.log().WarnContext(ctx, "renewing the lease of a shard failed", "source", s.src.name, "error", err)
	}
	return true
}

// keepAlive renews the leases the run holds every interval (0 means
// DefaultLeaseRenewal), until the function it returns is called. A renewal
// that fails is left to the next one, and to the sweep's own renewal before
// its next page, which finds a lease taken over.
func (lr *leaseRun) keepAlive(ctx context.Context, interval time.Duration) (stop func()) {
	if lr == nil {
		return func() {}
	}
	if interval <= 0 {
		interval = DefaultLeaseRenewal
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				lr.renewAll(ctx)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// renewAll renews the lease of every shard the run holds and has not
// released.
func (lr *leaseRun) renewAll(ctx context.Context) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	for _, s := range lr.renewing {
		if err := lr.extend(ctx, s); err != nil && ctx.Err() == nil {
			lr.r.log().DebugContext(ctx, "renewing the lease of a shard in the background failed", "source", s.src.name, "error", err)
		}
	}
}

// extend writes the renewal of the run's lease of s's shard: a
// ConditionalCheckFailedException when another run took it over.
func (lr *leaseRun) extend(ctx context.Context, s *sweeper) error {
	_, err := lr.r.Leases.UpdateItem(ctx, lr.r.Table.RenewLease(lr.shard(s), lr.owner, leaseEnd(ctx, lr.r.now())))
	return err
}

// release gives up the leases of sweeps the run still holds.
func (lr *leaseRun) release(ctx context.Context, sweeps []*sweeper) {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	lr.renewing = slices.DeleteFunc(lr.renewing, func(s *sweeper) bool { return slices.Contains(sweeps, s) })
	for _, s := range sweeps {
		if !s.leased {
			continue
		}
		s.leased = false
		if _, err := lr.r.Leases.UpdateItem(ctx, lr.r.Table.ReleaseLease(lr.shard(s), lr.owner)); err != nil {
			lr.r.log().WarnContext(ctx, "releasing the lease of a shard failed; it expires", "source", s.src.name, "error", err)
		}
	}
}

// scaling reports whether the run may start workers: leases, an invoker,
// more than one worker allowed, and something published, without which
// more runs would not publish more (a permission or target fault).
func (lr *leaseRun) scaling(published *eventSet) bool {
	return lr != nil && lr.r.Invoker != nil && lr.r.MaxWorkers > 1 && published.size() > 0
}

// mayFanOut reports whether a run with n leased shards may hand some of
// them to workers: a scheduled run (not a worker) of an unordered relay
// that may start workers and holds more than its share. An ordered relay's
// run keeps every shard (runRate).
func (lr *leaseRun) mayFanOut(n int) bool {
	return lr != nil && !lr.worker && lr.r.Ordered == nil && lr.r.Invoker != nil && lr.r.MaxWorkers > 1 && n > lr.share
}

// fanOut, once a scheduled run found a backlog (sweepInTurns), keeps one
// share of the shards that have more pages or are not swept yet (active),
// releases others and starts a worker for each share released, up to
// MaxWorkers counted with the live holders of other leases. It returns the
// shards the run goes on with.
func (lr *leaseRun) fanOut(ctx context.Context, active []*sweeper, published *eventSet) []*sweeper {
	if !lr.mayFanOut(len(active)) || !lr.scaling(published) {
		return active
	}
	extra := len(active) - lr.share
	workers := min((extra+lr.share-1)/lr.share, lr.r.MaxWorkers-1-len(lr.others))
	if workers <= 0 {
		return active
	}
	released := active[lr.share:min(len(active), lr.share*(workers+1))]
	lr.release(ctx, released)
	for range workers {
		lr.start(ctx)
	}
	lr.r.log().InfoContext(ctx, "reconcile backlog: workers started", "workers", workers, "shardsReleased", len(released), "otherHolders", len(lr.others))
	return append(active[:lr.share:lr.share], active[lr.share+len(released):]...)
}

// start invokes one worker.
func (lr *leaseRun) start(ctx context.Context) bool {
	if err := lr.r.Invoker.StartWorker(ctx, lr.minAge); err != nil {
		lr.r.log().WarnContext(ctx, "starting a reconcile worker failed; its shards wait for the next run", "error", err)
		return false
	}
	lr.workers++
	return true
}

// finish releases the run's leases; when the run leaves work that another
// could do at once (leftWork), it first starts a successor to go on with
// it.
func (lr *leaseRun) finish(ctx context.Context, published *eventSet, report *Report) {
	if lr == nil {
		return
	}
	pending := leftWork(lr.held, report)
	lr.release(ctx, lr.held)
	if pending && lr.scaling(published) && lr.start(ctx) {
		lr.cont = true
	}
	report.Workers, report.ShardsLeased, report.Continued = lr.workers, len(lr.held), lr.cont
}

// leftWork reports whether a run leaves work that a successor can do at
// once: shards its deadline left with pending events, or, in ordered mode,
// events that still wait for an earlier one that is not FAILED. A run that
// swept every shard but ran out of time or passes for its waiting events
// (a hot key's backlog goes out one event per call) would otherwise leave
// them to the next scheduled run, one interval later. A successor starts
// only after a run that published something (leaseRun.scaling), so a
// chain of successors ends with the first run that publishes nothing.
func leftWork(held []*sweeper, report *Report) bool {
	for _, s := range held {
		if s.leased && !s.res.complete {
			return true
		}
	}
	return report.Waiting > report.Blocked
}

// invocationID is the Lambda request id of ctx, or a random id outside
// Lambda: the owner of the run's leases.
func invocationID(ctx context.Context) string {
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		return lc.AwsRequestID
	}
	return "run-" + crand.Text()
}
