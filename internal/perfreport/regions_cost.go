package perfreport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambda/esm"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// esmStatus is the local stack's state of a stream mapping.
type esmStatus = esm.Status

// costRun writes the events in the first Region and counts, once they are
// published and replicated, what each Region wrote, read and invoked.
func (h *regionsHarness) costRun(ctx context.Context, regions []string) (RegionsRun, error) {
	name := fmt.Sprintf("regions-%d", len(regions))
	h.say("%d Region(s): deploying %v...", len(regions), regions)
	pipes, table, err := h.deploy(ctx, name, regions, provision.MultiRegionSpec{Regions: regions})
	if err != nil {
		return RegionsRun{}, err
	}
	h.say("  writing %d events in %s...", h.o.Events, regions[0])
	units, err := h.writeEvents(ctx, regions[0], table, name, h.o.Events)
	if err != nil {
		return RegionsRun{}, err
	}
	if err := waitFor(ctx, h.o.Deadline, "the events to be published", func() (bool, error) {
		n, err := h.published(ctx, regions[0], table)
		return n >= h.o.Events, err
	}); err != nil {
		return RegionsRun{}, err
	}
	if err := h.replicated(ctx); err != nil {
		return RegionsRun{}, err
	}
	run := RegionsRun{Regions: len(regions), Events: h.o.Events}
	for i, p := range pipes {
		c, err := h.regionCount(ctx, p, table, i == 0)
		if err != nil {
			return run, err
		}
		if i == 0 {
			c.CommitUnits = units
		}
		run.PerRegion = append(run.PerRegion, c)
	}
	h.say("  %+v", run.PerRegion)
	return run, nil
}

// regionCount reads a Region's stream and its mapping's invocations, once
// the mapping has read every record of the stream.
func (h *regionsHarness) regionCount(ctx context.Context, p regionPipeline, table outbox.Table, writing bool) (RegionCount, error) {
	rs, err := h.stack.Region(p.region)
	if err != nil {
		return RegionCount{}, err
	}
	sc, err := h.readStream(ctx, p.region, p.state.StreamARN, table)
	if err != nil {
		return RegionCount{}, err
	}
	var st esmStatus
	if err := waitFor(ctx, h.o.Deadline, "the mapping in "+p.region+" to read its stream", func() (bool, error) {
		s, ok := rs.EventSourceMappings().Status(p.state.MappingUUID)
		if !ok {
			return false, fmt.Errorf("no mapping %s in %s", p.state.MappingUUID, p.region)
		}
		st = s
		return mappingIdle(s), nil
	}); err != nil {
		return RegionCount{}, err
	}
	c := RegionCount{Region: p.region, Writing: writing, StreamRecords: sc.records, Invocations: st.Counters.Invocations}
	if writing {
		c.Marks = sc.marks
	} else {
		c.ReplicatedWrites = sc.eventWrites
	}
	return c, nil
}

// mappingIdle reports whether a mapping holds no record read and not yet
// checkpointed.
func mappingIdle(s esmStatus) bool {
	for _, sh := range s.Shards {
		if sh.Pending > 0 || sh.InFlight > 0 {
			return false
		}
	}
	return true
}

// takeoverRun leaves events pending in the first Region, takes it down,
// and times their publication by the second.
func (h *regionsHarness) takeoverRun(ctx context.Context, regions []string) (TakeoverRun, error) {
	m := provision.MultiRegionSpec{Regions: regions, TakeoverAfter: h.o.TakeoverAfter, TakeoverSettle: h.o.TakeoverSettle}
	h.say("takeover: deploying %v (takeover after %s, settle %s, interval %s)...", regions, m.TakeoverAfter, m.TakeoverSettle, h.o.Interval)
	pipes, table, err := h.deploy(ctx, "takeover", regions, m)
	if err != nil {
		return TakeoverRun{}, err
	}
	cctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	for _, p := range pipes {
		wg.Go(func() { h.reconcileEvery(cctx, p) })
	}
	// Both Regions have written a heartbeat before the first goes silent.
	if err := waitFor(ctx, h.o.Deadline, "both heartbeats", func() (bool, error) {
		n, err := h.heartbeats(ctx, regions[1], table, regions)
		return n >= len(regions), err
	}); err != nil {
		return TakeoverRun{}, err
	}
	if _, err := h.ctl.PauseMapping(ctx, pipes[0].state.MappingUUID); err != nil {
		return TakeoverRun{}, err
	}
	n := h.o.TakeoverEvents
	h.say("  writing %d events in %s, its relay paused...", n, regions[0])
	if _, err := h.writeEvents(ctx, regions[0], table, "takeover", n); err != nil {
		return TakeoverRun{}, err
	}
	if err := h.replicated(ctx); err != nil {
		return TakeoverRun{}, err
	}
	if err := h.ctl.RegionDown(ctx, regions[0]); err != nil {
		return TakeoverRun{}, err
	}
	defer func() { _ = h.ctl.RegionUp(context.WithoutCancel(ctx), regions[0]) }()
	t0 := time.Now()
	run := TakeoverRun{After: m.TakeoverAfter, Settle: m.TakeoverSettle, Interval: h.o.Interval, Events: n}
	h.say("  %s down: waiting for %s to publish its events...", regions[0], regions[1])
	err = waitFor(ctx, run.Bound()+h.o.Deadline, "the successor to publish", func() (bool, error) {
		got, err := h.published(ctx, regions[1], table)
		if got > 0 && run.First == 0 {
			run.First = time.Since(t0)
		}
		run.Received = got
		return got >= n, err
	})
	run.Last = time.Since(t0)
	if err != nil && !errors.Is(err, errTimedOut) {
		return run, err
	}
	h.say("  first after %s, last after %s (bound %s), %d of %d", run.First.Round(time.Millisecond), run.Last.Round(time.Millisecond), run.Bound(), run.Received, n)
	return run, nil
}

// heartbeats counts the peers' heartbeat items in a Region's replica.
func (h *regionsHarness) heartbeats(ctx context.Context, region string, table outbox.Table, peers []string) (int, error) {
	ddb := dynamodb.NewFromConfig(h.cfg(region))
	n := 0
	for _, r := range peers {
		in := table.GetHeartbeat(r)
		in.ConsistentRead = aws.Bool(true)
		out, err := ddb.GetItem(ctx, in)
		if err != nil {
			return 0, err
		}
		if len(out.Item) > 0 {
			n++
		}
	}
	return n, nil
}

// reconcileEvery invokes a Region's reconciler with its schedule's input
// now and every interval, as the schedule would, until ctx is done; a
// Region that is down fails its invocations, as its own schedule would.
func (h *regionsHarness) reconcileEvery(ctx context.Context, p regionPipeline) {
	cfg := h.cfg(p.region)
	s, err := scheduler.NewFromConfig(cfg).GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String(p.state.ScheduleName), GroupName: aws.String(orDefaultGroup(p.state.ScheduleGroup))})
	if err != nil {
		h.say("  reading the schedule in %s: %v", p.region, err)
		return
	}
	lc := lambda.NewFromConfig(cfg, func(o *lambda.Options) { o.RetryMaxAttempts = 1 })
	t := time.NewTicker(h.o.Interval)
	defer t.Stop()
	for {
		out, err := lc.Invoke(ctx, &lambda.InvokeInput{FunctionName: s.Target.Arn, Payload: []byte(aws.ToString(s.Target.Input))})
		switch {
		case err != nil && ctx.Err() == nil:
			h.say("  reconciler in %s: %v", p.region, err)
		case err == nil:
			h.say("  reconciler in %s: %s %.300s", p.region, aws.ToString(out.FunctionError), out.Payload)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func orDefaultGroup(g string) string {
	if g == "" {
		return "default"
	}
	return g
}
