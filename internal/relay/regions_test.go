package relay_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// regionsClock is a clock that the test moves.
type regionsClock struct {
	mu sync.Mutex
	at time.Time
}

func (c *regionsClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.at }

func (c *regionsClock) set(at time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.at = at }

// regionsFixture is one table read by the reconcilers of two Regions. Their
// replicas are one here: replication is the local stack's to prove
// (internal/localaws/dynamodb) and the chaos suite's across Regions; this
// is the decisions carried out by the reconciler.
type regionsFixture struct {
	t     *testing.T
	cfg   config.Config
	fake  *relaytest.AWS
	clock *regionsClock
	relay map[string]*relay.Relay
}

var regionsPeers = []string{"us-east-1", "eu-west-1"}

func newRegionsFixture(t *testing.T) *regionsFixture {
	cfg := testConfig(layouts["dedicated"], config.TargetEventBridge, config.ActionMark)
	cfg.Regions = regionsPeers
	cfg.TakeoverAfter, cfg.TakeoverSettle = 15*time.Minute, time.Millisecond
	f := &regionsFixture{t: t, cfg: cfg, fake: relaytest.New(t, cfg.Table), clock: &regionsClock{at: now}, relay: map[string]*relay.Relay{}}
	for _, region := range regionsPeers {
		f.relay[region] = newRelay(t, cfg, f.fake, relay.Options{Now: f.clock.now, Retry: &noSleep, Region: region})
	}
	return f
}

// captureMetrics replaces region's relay with one whose metrics go to the
// buffer it returns.
func (f *regionsFixture) captureMetrics(region string) *bytes.Buffer {
	var metrics bytes.Buffer
	f.relay[region] = newRelay(f.t, f.cfg, f.fake, relay.Options{Now: f.clock.now, Retry: &noSleep, Region: region, Metrics: &metrics})
	return &metrics
}

// write puts n pending events written in origin.
func (f *regionsFixture) write(origin string, n int) []outbox.Record {
	records := relaytest.Records(f.fake.Table, n, 32)
	for i := range records {
		records[i].Origin = origin
	}
	f.fake.PutRecords(records)
	return records
}

// run runs region's scheduled reconciler at now + after.
func (f *regionsFixture) run(region string, after time.Duration) relay.ReconcileReport {
	f.t.Helper()
	f.clock.set(now.Add(after))
	rep, err := f.relay[region].Reconcile(context.Background(), relay.ReconcileRequest{Action: relay.ActionReconcile})
	if err != nil {
		f.t.Fatalf("%s at +%s: %v", region, after, err)
	}
	if rep.Regions == nil {
		f.t.Fatalf("%s at +%s: the report of a multi-Region pipeline has no regions: %+v", region, after, rep)
	}
	return rep
}

func (f *regionsFixture) wantStatus(records []outbox.Record, want outbox.Status, when string) {
	f.t.Helper()
	for _, r := range records {
		if got := f.fake.Status(r); got != string(want) {
			f.t.Errorf("%s: event %s of origin %s is %s, want %s", when, r.EventID, r.Origin, got, want)
		}
	}
}

// TestReconcileTakesOverASilentRegion: a Region whose heartbeat is older
// than the takeover delay is taken over by its successor, whose run
// publishes the silent Region's pending events; when the Region comes
// back it publishes none of its own while the claim stands, and once its
// heartbeat has been fresh for one takeover delay the successor hands it
// back and the Region publishes its own events again.
func TestReconcileTakesOverASilentRegion(t *testing.T) {
	t.Parallel()
	f := newRegionsFixture(t)
	// Both Regions run; then eu-west-1 falls silent with events pending.
	if rep := f.run("eu-west-1", 0); !slices.Equal(rep.Regions.Swept, []string{"eu-west-1"}) {
		t.Fatalf("eu-west-1, healthy: swept %q", rep.Regions.Swept)
	}
	lost := f.write("eu-west-1", 3)
	own := f.write("us-east-1", 2)
	rep := f.run("us-east-1", 10*time.Minute)
	if !slices.Equal(rep.Regions.Swept, []string{"us-east-1"}) || rep.Published != len(own) {
		t.Fatalf("us-east-1 while eu-west-1's heartbeat is fresh: %+v %+v, want its own %d events only", rep.Regions, rep.Report, len(own))
	}
	f.wantStatus(lost, outbox.StatusPending, "eu-west-1's events before the takeover delay")

	rep = f.run("us-east-1", 16*time.Minute)
	if !slices.Equal(rep.Regions.Claimed, []string{"eu-west-1"}) || !slices.Equal(rep.Regions.Swept, regionsPeers) || rep.Published != len(lost) {
		t.Fatalf("us-east-1 after eu-west-1's takeover delay: %+v %+v, want eu-west-1 claimed and its %d events published", rep.Regions, rep.Report, len(lost))
	}
	f.wantStatus(lost, outbox.StatusPublished, "after the takeover")

	// eu-west-1 comes back: the claim stands, so its run publishes none of
	// its events; its successor goes on publishing them.
	late := f.write("eu-west-1", 2)
	rep = f.run("eu-west-1", 20*time.Minute)
	if rep.Regions.HeldBy != "us-east-1" || len(rep.Regions.Swept) != 0 || rep.Published != 0 {
		t.Fatalf("eu-west-1 back while claimed: %+v %+v, want held by us-east-1, nothing swept", rep.Regions, rep.Report)
	}
	f.wantStatus(late, outbox.StatusPending, "eu-west-1's events while it is held")
	rep = f.run("us-east-1", 25*time.Minute)
	if !slices.Equal(rep.Regions.TakenOver, []string{"eu-west-1"}) || len(rep.Regions.Released) != 0 || rep.Published != len(late) {
		t.Fatalf("us-east-1 while eu-west-1 is fresh for less than the delay: %+v %+v, want eu-west-1 still taken over", rep.Regions, rep.Report)
	}
	f.wantStatus(late, outbox.StatusPublished, "eu-west-1's events published by its successor")

	// Fresh for one takeover delay: handed back.
	f.run("eu-west-1", 30*time.Minute)
	f.run("eu-west-1", 36*time.Minute)
	rep = f.run("us-east-1", 36*time.Minute)
	if !slices.Equal(rep.Regions.Released, []string{"eu-west-1"}) {
		t.Fatalf("us-east-1 once eu-west-1 has been fresh for the delay: %+v, want eu-west-1 released", rep.Regions)
	}
	after := f.write("eu-west-1", 2)
	rep = f.run("eu-west-1", 40*time.Minute)
	if rep.Regions.HeldBy != "" || !slices.Equal(rep.Regions.Swept, []string{"eu-west-1"}) || rep.Published != len(after) {
		t.Fatalf("eu-west-1 handed back: %+v %+v, want its own %d events published", rep.Regions, rep.Report, len(after))
	}
	if rep = f.run("us-east-1", 41*time.Minute); !slices.Equal(rep.Regions.Swept, []string{"us-east-1"}) {
		t.Errorf("us-east-1 after handing back: swept %q, want its own Region only", rep.Regions.Swept)
	}
}

// TestReconcileWorkerSweepsItsRequestsRegion: a worker of a multi-Region
// pipeline sweeps the Region its request names (a Region its run took
// over), writes no heartbeat, and refuses a Region that is not a peer.
func TestReconcileWorkerSweepsItsRequestsRegion(t *testing.T) {
	t.Parallel()
	f := newRegionsFixture(t)
	theirs := f.write("eu-west-1", 3)
	ours := f.write("us-east-1", 1)
	rep, err := f.relay["us-east-1"].Reconcile(context.Background(), relay.ReconcileRequest{Action: relay.ActionReconcile, Worker: true, Region: "eu-west-1"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Regions == nil || !slices.Equal(rep.Regions.Swept, []string{"eu-west-1"}) || rep.Published != len(theirs) {
		t.Fatalf("worker for eu-west-1: %+v %+v, want eu-west-1's %d events", rep.Regions, rep.Report, len(theirs))
	}
	f.wantStatus(theirs, outbox.StatusPublished, "the worker's Region")
	f.wantStatus(ours, outbox.StatusPending, "not the worker's Region")
	if calls := f.fake.Calls(relaytest.OpPutItem); calls != 0 {
		t.Errorf("a worker wrote %d items; a worker writes no heartbeat", calls)
	}
	_, err = f.relay["us-east-1"].Reconcile(context.Background(), relay.ReconcileRequest{Action: relay.ActionReconcile, Worker: true, Region: "ap-south-1"})
	if err == nil {
		t.Error("a worker for a Region outside the peers ran")
	}
}

// TestReconcileSweepsItsOwnWhenTheHeartbeatFails: a run that cannot write
// its heartbeat publishes its own Region's events, as a Region without
// peers would, rather than none, and counts itself in TakeoverUnavailable,
// which a run that wrote its heartbeat reports as 0.
func TestReconcileSweepsItsOwnWhenTheHeartbeatFails(t *testing.T) {
	t.Parallel()
	f := newRegionsFixture(t)
	metrics := f.captureMetrics("us-east-1")
	f.run("us-east-1", 0)
	if got := (&harness{metrics: metrics}).metric(t, "TakeoverUnavailable"); got != 0 || !strings.Contains(metrics.String(), `"TakeoverUnavailable"`) {
		t.Errorf("TakeoverUnavailable of a run that wrote its heartbeat = %v in %s, want 0", got, metrics)
	}
	metrics.Reset()
	f.fake.WriteError = func(sortKey string, _ int) error {
		if sortKey == outbox.RegionSortKey {
			return &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "not authorized to perform dynamodb:PutItem"}
		}
		return nil
	}
	ours := f.write("us-east-1", 2)
	rep := f.run("us-east-1", time.Minute)
	if !slices.Equal(rep.Regions.Swept, []string{"us-east-1"}) || rep.Published != len(ours) {
		t.Fatalf("with the heartbeat denied: %+v %+v, want its own %d events", rep.Regions, rep.Report, len(ours))
	}
	if got := (&harness{metrics: metrics}).metric(t, "TakeoverUnavailable"); got != 1 {
		t.Errorf("TakeoverUnavailable with the heartbeat denied = %v, want 1", got)
	}
}

// TestOrderedKeyWrittenInTwoRegions: two Regions that write one ordering
// key at once can give one sequence to two events (each checks the key's
// sequence in its own replica). In a multi-Region pipeline neither is lost:
// an event that its key's cursor has passed, or that shares its sequence
// with another Region's event in one batch, is published out of order and
// counted in OrderingConflicts, where a single-Region pipeline settles the
// former as published before a crash and refuses the latter as broken.
func TestOrderedKeyWrittenInTwoRegions(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	cfg := orderedConfig(table, config.ActionMark)
	cfg.Regions, cfg.TakeoverSettle = regionsPeers, time.Millisecond
	fake := relaytest.New(t, cfg.Table)
	var metrics bytes.Buffer
	relays := map[string]*relay.Relay{}
	for _, region := range regionsPeers {
		relays[region] = newRelay(t, cfg, fake, relay.Options{Now: func() time.Time { return now }, Retry: &noSleep, Region: region, Metrics: &metrics})
	}
	records := orderedRecords(table, []string{"k"}, 4)
	for i := range records {
		records[i].Sequence = int64(i/2 + 1) // 1, 1, 2, 2
		records[i].Origin = regionsPeers[i%2]
	}
	fake.PutRecords(records)
	stream := func(region string, rs ...outbox.Record) {
		t.Helper()
		resp, err := relays[region].HandleStream(context.Background(), relaytest.StreamEvent(table, relaytest.Inserts(table, rs)...))
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("%s: %v, failures %v", region, err, resp.BatchItemFailures)
		}
	}
	stream("us-east-1", records[0])
	stream("eu-west-1", records[1]) // sequence 1 again, after the cursor passed it
	stream("us-east-1", records[2], records[3])
	var published []string
	for _, p := range fake.Published() {
		published = append(published, p.EventID)
	}
	for _, r := range records {
		if !slices.Contains(published, r.EventID) || fake.Status(r) != string(outbox.StatusPublished) {
			t.Errorf("event %d of origin %s: published %t, status %s; want published", r.Sequence, r.Origin, slices.Contains(published, r.EventID), fake.Status(r))
		}
	}
	if len(published) != len(records) {
		t.Errorf("published %d events, want each of the %d once", len(published), len(records))
	}
	if got := (&harness{metrics: &metrics}).metric(t, "OrderingConflicts"); got != 2 {
		t.Errorf("OrderingConflicts = %v, want 2", got)
	}
}
