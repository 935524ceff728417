package chaos

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
)

// The faults of the multi-Region run are TestChaos's, in every Region at
// once: the stack's fault rules are shared by its Regions, so the FIFO
// topic's publish faults (snsFIFO) and DynamoDB's throttling
// (dynamoDBThrottles) reach every Region's relay and writers; a killer in
// each Region kills its relay and reconciler processes mid-invocation;
// every Region's mapping is held past the stream's retention once, so
// that records are trimmed and only the reconciler saves them.

// faultSpell is how long the faults go on after the mappings resume, at
// least: on the backlog the holds left. They go on, for up to
// faultsAfterWriting once the writers are done, until nine in ten of the
// events written were delivered, so that most events meet them.
const (
	faultSpell         = 15 * time.Second
	faultsAfterWriting = time.Minute
)

// minCallFaultRate is the least rate of the Region run's whole-call publish
// faults, so that each fires in a run of a few dozen calls (checkFaults);
// minEntryFaultRate that of its per-entry ones: a few hundred events make a
// few hundred entries, and at TestChaos's 2 % a fault fires about five
// times, and in about one run of 150 (e^-5) never.
const minCallFaultRate, minEntryFaultRate = 0.2, 0.05

// startFaults adds the fault rules and starts, until ctx ends, a killer
// in every Region and the mapping holds; the channel it returns closes
// when the holds are over.
func (r *regionsRun) startFaults(ctx context.Context) <-chan struct{} {
	for _, rule := range append(snsFIFO.rules(), dynamoDBThrottles...) {
		switch {
		case rule.Operation != snsFIFO.operation:
		case rule.Entry:
			rule.Rate = max(rule.Rate, minEntryFaultRate)
		default:
			// A few hundred events make a few dozen publish calls: at
			// TestChaos's rates a whole-call fault (3 %) may never fire.
			rule.Rate = max(rule.Rate, minCallFaultRate)
		}
		if _, err := r.ctl.AddFault(ctx, rule); err != nil {
			r.t.Fatalf("adding fault %s %s: %v", rule.Operation, rule.Code, err)
		}
	}
	held := make(chan struct{})
	go func() { defer close(held); r.holdMappings(ctx) }()
	for _, s := range r.regions {
		go r.killer(ctx, s)
	}
	return held
}

// stopFaults waits for the mapping holds to end, for faultSpell more and
// for most events to be delivered (faultsAfterWriting), reads the fault
// rules with their counts, clears them and ends the killers (calm).
func (r *regionsRun) stopFaults(ctx context.Context, held <-chan struct{}, calm context.CancelFunc) []control.FaultRule {
	<-held
	sleepUntil(ctx, r.resumedAt.Add(faultSpell))
	mostCtx, cancel := context.WithTimeout(ctx, faultsAfterWriting)
	_ = r.until(mostCtx, "most events delivered", func() (bool, error) {
		written, delivered := r.tally.Progress()
		return delivered*10 >= written*9, nil
	})
	cancel()
	faults, err := r.ctl.Faults(ctx)
	if err != nil {
		r.fail(fmt.Errorf("reading the faults: %w", err))
	}
	if err := r.ctl.ClearFaults(ctx); err != nil {
		r.t.Fatal(err)
	}
	calm()
	return faults
}

// holdMappings pauses every Region's mapping two seconds into the run for
// longer than the stream's retention, then resumes them.
func (r *regionsRun) holdMappings(ctx context.Context) {
	if !sleepUntil(ctx, time.Now().Add(2*time.Second)) {
		return
	}
	for _, s := range r.regions {
		if err := r.ctl.InRegion(s.name).Do(ctx, http.MethodPost, "mappings/pause", map[string]string{"uuid": s.pipeline.MappingUUID}, nil); err != nil {
			r.fail(fmt.Errorf("pausing the mapping in %s: %w", s.name, err))
		}
	}
	sleepUntil(ctx, time.Now().Add(retention+10*time.Second))
	defer func() { r.resumedAt = time.Now() }()
	for _, s := range r.regions {
		// Resumed whatever ctx says: a held mapping would strand the drain.
		if err := r.ctl.InRegion(s.name).Do(context.WithoutCancel(ctx), http.MethodPost, "mappings/resume", map[string]string{"uuid": s.pipeline.MappingUUID}, nil); err != nil {
			r.fail(fmt.Errorf("resuming the mapping in %s: %w", s.name, err))
		}
	}
}

// killer kills, until ctx ends, a running process of s's relay at most
// every relayKillGap and of its reconciler at most every
// reconcilerKillGap (until sparedReconcilers), while the Region is up. A kill is sent only while an
// invocation runs: one sent with none running would be armed for the
// next, which could come after the faults clear.
func (r *regionsRun) killer(ctx context.Context, s *regionSite) {
	targets := []struct {
		fn     string
		gap    time.Duration
		kills  *atomic.Int64
		spared *atomic.Bool
		last   time.Time
	}{
		{fn: s.pipeline.RelayFunctionName, gap: relayKillGap, kills: &r.relayKills, spared: &atomic.Bool{}},
		{fn: s.pipeline.ReconcilerFunctionName, gap: reconcilerKillGap, kills: &r.reconcilerKills, spared: &r.sparedReconcilers},
	}
	for sleepUntil(ctx, time.Now().Add(100*time.Millisecond)) {
		if s.down.Load() {
			continue
		}
		for i := range targets {
			k := &targets[i]
			if time.Since(k.last) < k.gap || k.spared.Load() {
				continue
			}
			var in control.LambdaInstances
			if err := r.ctl.InRegion(s.name).Do(ctx, http.MethodGet, "lambda/instances/"+url.PathEscape(k.fn), nil, &in); err != nil || in.Running == 0 {
				continue // the run ends, or nothing to kill
			}
			var out struct {
				Killed bool `json:"killed"`
			}
			if err := r.ctl.InRegion(s.name).Do(ctx, http.MethodPost, "lambda/kill", map[string]string{"function": k.fn}, &out); err != nil || !out.Killed {
				continue
			}
			k.kills.Add(1)
			s.kills.Add(1)
			k.last = time.Now()
		}
	}
}

// checkFaults fails the run when a fault never fired, no relay or no
// reconciler process was killed, or a Region's mapping met no trimmed
// record: the run would prove nothing of them.
func (r *regionsRun) checkFaults(ctx context.Context, faults []control.FaultRule) {
	var notFired, fired []string
	for _, f := range faults {
		fired = append(fired, fmt.Sprintf("%s %s %s%s %d", f.Service, f.Operation, f.Code, map[bool]string{true: " (entry)"}[f.Entry], f.Fired))
		if f.Fired == 0 {
			notFired = append(notFired, fmt.Sprintf("%s %s %s (entry %v)", f.Service, f.Operation, f.Code, f.Entry))
		}
	}
	r.t.Logf("faults fired: %s", strings.Join(fired, "; "))
	if len(faults) == 0 || len(notFired) > 0 {
		r.t.Errorf("faults that never fired (of %d): %s", len(faults), strings.Join(notFired, "; "))
	}
	if r.relayKills.Load() == 0 || r.reconcilerKills.Load() == 0 {
		r.t.Errorf("kills: %d of relay processes, %d of reconciler processes; want some of each", r.relayKills.Load(), r.reconcilerKills.Load())
	}
	var kills []string
	for _, s := range r.regions {
		var ms control.MappingStatus
		if err := r.ctl.InRegion(s.name).Do(ctx, http.MethodGet, "mappings/status?uuid="+url.QueryEscape(s.pipeline.MappingUUID), nil, &ms); err != nil {
			r.t.Errorf("reading the mapping's status in %s: %v", s.name, err)
			continue
		}
		if ms.Counters.RecordsTrimmed == 0 {
			r.t.Errorf("the mapping in %s never met trimmed records; its hold did not outlast the stream retention: %+v", s.name, ms.Counters)
		}
		kills = append(kills, fmt.Sprintf("%s=%d", s.name, s.kills.Load()))
	}
	r.t.Logf("kills by Region: %s (relay %d, reconciler %d)", strings.Join(kills, " "), r.relayKills.Load(), r.reconcilerKills.Load())
}
