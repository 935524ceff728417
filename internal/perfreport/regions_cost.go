package perfreport

import (
	"context"
	"fmt"

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
