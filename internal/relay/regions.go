package relay

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/takeover"
)

// regionRuns is the reconciler of a multi-Region pipeline (DESIGN.md,
// "Across Regions"): a run writes its Region's heartbeat, claims the silent
// Regions it succeeds and hands back those fresh again (takeover.Plan),
// then sweeps the events of each Region the plan gives it, the Regions at
// once, each with its origin filter and shard leases. A Region whose
// own events a successor's claim holds sweeps none of them.
type regionRuns struct {
	self     string
	takeover *takeover.Takeover
	// byRegion is the reconciler of each peer's events.
	byRegion map[string]*reconcile.Reconciler
	// pending is what the last run found of its own Region's events, for
	// the next heartbeat.
	pending atomic.Int64
	now     func() time.Time
	log     *slog.Logger
}

// newRegionRuns returns nil for a single-Region pipeline; for a
// multi-Region one, a reconciler per peer, each a copy of base reading the
// events of that origin (originFilter) under leases of that Region, whose
// workers sweep that Region too.
func newRegionRuns(base *reconcile.Reconciler, cfg config.Config, clients Clients, opts Options, now func() time.Time, log *slog.Logger) (*regionRuns, error) {
	if len(cfg.Regions) == 0 {
		return nil, nil
	}
	tk, err := takeover.New(clients.DynamoDB, takeover.Config{
		Table: cfg.Table, Region: opts.Region, Regions: cfg.Regions,
		TakeoverAfter: cfg.TakeoverAfter, Settle: cfg.TakeoverSettle, Now: now,
	})
	if err != nil {
		return nil, fmt.Errorf("relay: %s: %w", config.EnvRegions, err)
	}
	rr := &regionRuns{self: opts.Region, takeover: tk, byRegion: map[string]*reconcile.Reconciler{}, now: now, log: log}
	for _, region := range cfg.Regions {
		rec := *base
		rec.Client = originFilter{ReadAPI: clients.DynamoDB, region: region, primary: cfg.Regions[0] == region}
		if rec.Leases != nil {
			rec.LeaseRegion = region
		}
		if w, ok := rec.Invoker.(workerInvoker); ok {
			w.region = region
			rec.Invoker = w
		}
		rr.byRegion[region] = &rec
	}
	return rr, nil
}

// run is one reconciler invocation. A worker sweeps the Region its request
// names (its own without one); a scheduled run plans first. When the plan
// cannot be read or written, the run sweeps its own Region's events, as a
// Region with no peers would, and counts it in TakeoverUnavailable: a
// successor may then publish some of them too, which consumers drop by
// event id, and none waits.
func (rr *regionRuns) run(ctx context.Context, req ReconcileRequest, minAge time.Duration, m *metrics.Recorder) (RegionsReport, reconcile.Report, error) {
	if req.Worker {
		region := req.Region
		if region == "" {
			region = rr.self
		}
		rec, ok := rr.byRegion[region]
		if !ok {
			return RegionsReport{}, reconcile.Report{}, fmt.Errorf("region %q of the worker's request is not one of %s: expected one of %q", region, config.EnvRegions, slices.Sorted(maps.Keys(rr.byRegion)))
		}
		return RegionsReport{Swept: []string{region}}, rec.Run(ctx, minAge, m), nil
	}
	plan, err := rr.takeover.Plan(ctx, rr.pending.Load())
	unavailable := 0
	if err != nil {
		rr.log.WarnContext(ctx, "reading or writing the Regions' heartbeats and takeover claims failed; sweeping this Region's own events", "region", rr.self, "error", err)
		plan, unavailable = takeover.Plan{Publish: []string{rr.self}}, 1
	}
	m.Add(metrics.TakeoverUnavailable, unavailable)
	rep := RegionsReport{Swept: plan.Publish, HeldBy: plan.HeldBy, Claimed: plan.Claimed, Lost: plan.Lost, Released: plan.Released}
	for _, r := range plan.Publish {
		if r != rr.self {
			rep.TakenOver = append(rep.TakenOver, r)
		}
	}
	rr.logPlan(ctx, rep)
	start := rr.now()
	total := rr.sweep(ctx, plan.Publish, minAge, m)
	if elapsed := rr.now().Sub(start).Seconds(); elapsed > 0 {
		total.PublishRate = float64(total.Published) / elapsed
	}
	return rep, total, nil
}

// sweep runs the reconciler of each Region of publish at once, each at its
// share of the run's publishing rate, so that a backlog of the run's own
// Region does not keep a Region it took over waiting for the next run, and
// returns their reports added up.
func (rr *regionRuns) sweep(ctx context.Context, publish []string, minAge time.Duration, m *metrics.Recorder) reconcile.Report {
	if len(publish) == 0 {
		return reconcile.Report{Complete: true} // nothing of the run's to sweep
	}
	reports := make([]reconcile.Report, len(publish))
	var wg sync.WaitGroup
	for i, region := range publish {
		rec := *rr.byRegion[region]
		rec.MaxEventsPerSecond /= float64(len(publish))
		wg.Go(func() { reports[i] = rec.Run(ctx, minAge, m) })
	}
	wg.Wait()
	total := reports[0]
	for i, region := range publish {
		if region == rr.self {
			rr.pending.Store(int64(reports[i].Found))
		}
		if i > 0 {
			total.Add(reports[i])
		}
	}
	return total
}

// logPlan logs what the run decided across Regions, when it is more than
// sweeping its own.
func (rr *regionRuns) logPlan(ctx context.Context, rep RegionsReport) {
	if rep.HeldBy == "" && len(rep.TakenOver)+len(rep.Claimed)+len(rep.Lost)+len(rep.Released) == 0 {
		return
	}
	rr.log.InfoContext(ctx, "reconcile across Regions", "region", rr.self, "swept", rep.Swept, "takenOver", rep.TakenOver,
		"heldBy", rep.HeldBy, "claimed", rep.Claimed, "lost", rep.Lost, "released", rep.Released)
}

// RegionsReport is what a multi-Region pipeline's reconciler run did across
// Regions; absent from a single-Region pipeline's report.
type RegionsReport struct {
	// Swept are the Regions whose events the run swept: its own unless a
	// successor holds it, then those it has taken over.
	Swept []string `json:"swept"`
	// TakenOver are the other Regions among them.
	TakenOver []string `json:"takenOver,omitempty"`
	// HeldBy is the successor whose claim on this Region stands.
	HeldBy string `json:"heldBy,omitempty"`
	// Claimed are the Regions the run newly took over; Lost those it
	// claimed whose claim another Region's replaced; Released those it
	// handed back.
	Claimed  []string `json:"claimed,omitempty"`
	Lost     []string `json:"lost,omitempty"`
	Released []string `json:"released,omitempty"`
}
