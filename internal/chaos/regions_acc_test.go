package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relaypackage"
	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// The multi-Region run's settings: the peers (REGIONS_COUNT of them), the
// takeover's delay and settle time, the reconciler's interval (the test
// fires every Region's schedule at it) and the global table's
// replication lag.
var regionPeers = []string{awsapi.DefaultRegion, "eu-west-1", "ap-south-1"}

const (
	regionsTable    = "regions"
	regionsSource   = "com.example.regions"
	takeoverAfter   = 20 * time.Second
	takeoverSettle  = 2 * time.Second
	regionsInterval = 2 * time.Second
	regionsLag      = 300 * time.Millisecond
	// sharedAggregates are the aggregates the first two Regions both write
	// events of, unordered: a key's order holds only when one Region at a
	// time writes it.
	sharedAggregates = 8
	// homeKeys are each Region's ordering keys: accounts whose ordered
	// events only their Region writes (a home Region per aggregate).
	homeKeys = 12
	// regionsWriteFor is the shortest time the writers take: they are
	// paced so that the mapping holds, the kills and the outage play out
	// while they write.
	regionsWriteFor = 40 * time.Second
	// regionsBatch is the relay's batch size: small, so that a few hundred
	// events make enough invocations to kill.
	regionsBatch = 10
	// relayKillGap and reconcilerKillGap are the least time between two
	// kills of one Region's relay, and of its reconciler: a killed
	// reconciler run holds its shards' leases for their minute, and one
	// killed in every run would stop its heartbeat.
	relayKillGap      = 3 * time.Second
	reconcilerKillGap = 15 * time.Second
)

// regionsRun is one multi-Region chaos run: a pipeline in ordered mode on
// an SNS FIFO topic and a consumer subscription in every Region, on one
// global table.
type regionsRun struct {
	t        *testing.T
	ctl      *control.Client
	regions  []*regionSite
	table    outbox.Table
	tally    *Tally
	order    *KeyOrder
	takeover bool
	// Counted while the run goes on.
	takeovers, handbacks, fires, relayKills, reconcilerKills atomic.Int64
	// inWindow is set from just before a Region's relay is held until its
	// hand-back; windowWritten counts the events committed meanwhile.
	inWindow      atomic.Bool
	windowWritten atomic.Int64
	claimsMu      sync.Mutex
	claims        map[string]string // claim ID -> silent Region, as seen
	// resumedAt is when the mapping holds ended (before held closes).
	resumedAt time.Time
	// sparedReconcilers ends the reconcilers' kills once the writers are
	// done and the Region taken down is back: a killed run's shard leases
	// last their minute, which the drain would wait out.
	sparedReconcilers atomic.Bool
	backgroundErrors
}

// regionSite is one Region's part: its clients, pipeline and consumer.
type regionSite struct {
	name     string
	cfg      aws.Config
	ddb      *dynamodb.Client
	sqs      *sqs.Client
	lambda   *lambda.Client
	writer   *outbox.Writer
	pipeline provision.State
	queueURL string
	down     atomic.Bool
	paused   atomic.Bool
	kills    atomic.Int64
}

// TestChaosRegions runs a multi-Region outbox with every Region healthy
// but for TestChaos's faults in each (the publish call's, DynamoDB's
// throttling, killed relay and reconciler processes, a mapping held past
// the stream's retention): writers in every Region of ordered events on
// their own accounts and unordered ones, some aggregates written from two
// Regions, consumers in every Region; every event reaches a consumer
// exactly once, each account's events in order, and no Region is taken
// over.
func TestChaosRegions(t *testing.T) { runRegions(t, false) }

// TestChaosRegionsTakeover is TestChaosRegions with the last Region taken
// down mid-run, its relay held just before, for several reconciler
// intervals past the takeover delay: its successor must claim it and
// publish its pending events while it is down, and hand it back when it
// returns; nothing is lost, no account's order inverted, and the only
// duplicates are events written in the takeover window.
func TestChaosRegionsTakeover(t *testing.T) { runRegions(t, true) }

func runRegions(t *testing.T, takeover bool) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("TF_ACC is not set")
	}
	if _, err := relaypackage.Zip(string(regionsArch())); err != nil {
		t.Fatalf("the relay package is not built (make relay): %v", err)
	}
	count := envInt(t, "REGIONS_COUNT", 2)
	if count < 2 || count > len(regionPeers) {
		t.Fatalf("REGIONS_COUNT=%d: give 2 or %d", count, len(regionPeers))
	}
	events := envInt(t, "REGIONS_EVENTS", 300)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute+time.Duration(events)*20*time.Millisecond)
	defer cancel()

	stack := localawstest.Start(t, func(so *localaws.Options) {
		so.StreamRetention = retention
		so.GCPercent = 400
	})
	r := &regionsRun{t: t, ctl: localawstest.Control(stack), tally: NewTally(), order: NewKeyOrder(), takeover: takeover, claims: map[string]string{}}
	if _, err := r.ctl.SetReplicationLag(ctx, regionsLag.String()); err != nil {
		t.Fatal(err)
	}
	for _, name := range regionPeers[:count] {
		cfg := patient(localawstest.RegionConfig(stack, name))
		r.regions = append(r.regions, &regionSite{name: name, cfg: cfg, ddb: dynamodb.NewFromConfig(cfg), sqs: sqs.NewFromConfig(cfg), lambda: lambda.NewFromConfig(cfg)})
	}
	r.createGlobalTable(ctx)
	for _, s := range r.regions {
		r.deploy(ctx, s)
	}

	start := time.Now()
	res := r.exercise(ctx, events)
	t.Logf("%d reconciler runs fired across Regions; run took %s", r.fires.Load(), time.Since(start).Round(time.Second))
	line := res.Line()
	t.Log(line)
	fmt.Println(line)
	if err := r.failures(); err != nil {
		t.Errorf("background: %v", err)
	}
	if err := res.Check(); err != nil {
		t.Error(err)
	}
}

func regionsArch() provision.Architecture {
	if runtime.GOARCH == "arm64" {
		return provision.ArchARM64
	}
	return provision.ArchX86_64
}

// createGlobalTable creates the table in the first Region and its replicas
// in the others (global tables version 2019.11.21), and waits until every
// replica is active.
func (r *regionsRun) createGlobalTable(ctx context.Context) {
	first := r.regions[0]
	if _, err := first.ddb.CreateTable(ctx, localawstest.TableInput(regionsTable, "pk", "sk", ddbtypes.StreamViewTypeNewAndOldImages)); err != nil {
		r.t.Fatal(err)
	}
	var updates []ddbtypes.ReplicationGroupUpdate
	for _, s := range r.regions[1:] {
		updates = append(updates, ddbtypes.ReplicationGroupUpdate{Create: &ddbtypes.CreateReplicationGroupMemberAction{RegionName: aws.String(s.name)}})
	}
	for _, u := range updates {
		if err := r.until(ctx, "the table active", func() (bool, error) {
			out, err := first.ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(regionsTable)})
			return err == nil && out.Table.TableStatus == ddbtypes.TableStatusActive, err
		}); err != nil {
			r.t.Fatal(err)
		}
		if _, err := first.ddb.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(regionsTable), ReplicaUpdates: []ddbtypes.ReplicationGroupUpdate{u}}); err != nil {
			r.t.Fatalf("adding the replica in %s: %v", aws.ToString(u.Create.RegionName), err)
		}
	}
	for _, s := range r.regions {
		if err := r.until(ctx, "the replica in "+s.name+" active", func() (bool, error) {
			out, err := s.ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(regionsTable)})
			if err != nil {
				return false, nil //nolint:nilerr // the replica is not there yet
			}
			return out.Table.TableStatus == ddbtypes.TableStatusActive, nil
		}); err != nil {
			r.t.Fatal(err)
		}
	}
}

// deploy applies the Region's pipeline through provision (the code the
// outbox_pipeline resource runs), adopting the replica, in ordered mode on
// an SNS FIFO topic of the Region, with a short takeover delay, and its
// consumer's subscription to the topic (a FIFO queue).
func (r *regionsRun) deploy(ctx context.Context, s *regionSite) {
	peers := make([]string, len(r.regions))
	for i, p := range r.regions {
		peers[i] = p.name
	}
	topic, err := fifoTopic(ctx, s.cfg, "regions-"+s.name)
	if err != nil {
		r.t.Fatal(err)
	}
	spec := provision.Spec{
		Name:         "regions-" + s.name,
		Architecture: regionsArch(),
		Table:        provision.TableSpec{Existing: true, Name: regionsTable, PartitionKey: "pk", SortKey: "sk"},
		Target:       provision.TargetSpec{Type: targetkind.SNS, TopicARN: topic[0].Value},
		Ordered:      true,
		Relay:        provision.FunctionSpec{Timeout: 30},
		Mapping:      provision.MappingSpec{BatchSize: regionsBatch},
		Reconciler:   provision.ReconcilerSpec{MinAge: 5 * time.Second, Function: provision.FunctionSpec{Timeout: 60}},
		MultiRegion:  provision.MultiRegionSpec{Regions: peers, TakeoverAfter: takeoverAfter, TakeoverSettle: takeoverSettle},
	}
	pc := provision.New(s.cfg, provision.RelayCode{Zip: relaypackage.Zip, SHA256: relaypackage.SHA256})
	pc.PropagationTimeout, pc.WaitTimeout, pc.PollInterval = 30*time.Second, 2*time.Minute, 200*time.Millisecond
	st, err := pc.Create(ctx, spec)
	if err != nil {
		r.t.Fatalf("creating the pipeline in %s: %v", s.name, err)
	}
	s.pipeline = st
	r.table = spec.WithDefaults().OutboxTable()
	if s.writer, err = outbox.NewWriter(s.ddb, r.table); err != nil {
		r.t.Fatal(err)
	}
	sub, err := subscription.New(s.cfg).Create(ctx, subscription.Spec{Name: "regions-consumer-" + s.name, TopicARN: topic[0].Value, Sources: []string{regionsSource},
		Queue: subscription.QueueSpec{VisibilityTimeoutSeconds: aws.Int32(60), MaxReceiveCount: subscription.DefaultMaxReceiveCount}})
	if err != nil {
		r.t.Fatalf("subscribing in %s: %v", s.name, err)
	}
	s.queueURL = sub.QueueURL
}

// exercise writes the events from every Region while consumers receive in
// every Region, the reconcilers run and the faults play in every Region,
// takes the last Region down mid-run when the run is the takeover's, then
// clears the faults, waits for the drain and returns the result.
func (r *regionsRun) exercise(ctx context.Context, events int) RegionsResult {
	bg, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for _, s := range r.regions {
		wg.Go(func() { r.consume(bg, s) })
		wg.Go(func() { r.fireLoop(bg, s) })
	}
	wg.Go(func() { r.watchClaims(bg) })

	faulty, calm := context.WithCancel(ctx)
	defer calm()
	held := r.startFaults(faulty)
	start := time.Now()
	var writers sync.WaitGroup
	var next atomic.Int64
	for i, s := range r.regions {
		writers.Go(func() { r.write(bg, i, s, start, &next, int64(events)) })
	}
	if r.takeover {
		r.outage(ctx, &next, int64(events/2), held)
	}
	writers.Wait()
	r.sparedReconcilers.Store(true)
	written, _ := r.tally.Progress()
	r.t.Logf("wrote %d events in %s", written, time.Since(start).Round(time.Second))
	faults := r.stopFaults(ctx, held, calm)
	drainStart := time.Now()
	r.drain(ctx)
	stop()
	wg.Wait()
	r.checkFaults(ctx, faults)
	res := NewRegionsResult(r.tally, len(r.regions))
	res.Drain = time.Since(drainStart)
	res.Stranded = r.stranded(ctx)
	res.Takeovers, res.Handbacks = int(r.takeovers.Load()), int(r.handbacks.Load())
	res.Outage, res.WindowWritten = r.takeover, int(r.windowWritten.Load())
	res.Kills = int(r.relayKills.Load() + r.reconcilerKills.Load())
	res.Inversions, res.Gaps, res.Unsequenced = r.order.Counts()
	for _, e := range r.order.Examples() {
		r.t.Logf("  inversion: %s", e)
	}
	return res
}

// regionsEvent is event n of the Region of index writer: every fourth on
// an aggregate the first two Regions share (unordered), half of them
// ordered on one of the Region's own accounts, the rest unordered on an
// order of their own.
func regionsEvent(writer int, n int64) outbox.Event {
	ev := outbox.Event{ID: newID(), Source: regionsSource}
	switch {
	case n%4 == 0 && writer < 2:
		ev.PartitionKey, ev.DetailType = fmt.Sprintf("SHARED#%d", n%sharedAggregates), "StockReserved"
	case n%2 == 1:
		ev.PartitionKey, ev.DetailType = fmt.Sprintf("ACCOUNT#%d-%02d", writer, (n/2)%homeKeys), "AmountPosted"
		ev.OrderingKey = ev.PartitionKey
	default:
		ev.PartitionKey, ev.DetailType = fmt.Sprintf("ORDER#%d-%06d", writer, n), "OrderPlaced"
	}
	ev.Detail = json.RawMessage(fmt.Sprintf(`{"key":%q,"n":%d}`, ev.PartitionKey, n))
	return ev
}

// write commits events from Region s until n reaches total, each at its
// turn of a schedule paced over regionsWriteFor (regionsEvent). A Region
// that is down writes nothing; a write cut by the Region going down is
// read back when it is up.
func (r *regionsRun) write(ctx context.Context, writer int, s *regionSite, start time.Time, next *atomic.Int64, total int64) {
	for ctx.Err() == nil {
		if s.down.Load() {
			if !sleepUntil(ctx, time.Now().Add(50*time.Millisecond)) {
				return
			}
			continue
		}
		n := next.Add(1) - 1
		if n >= total || !sleepUntil(ctx, start.Add(time.Duration(n)*regionsWriteFor/time.Duration(total))) {
			return
		}
		if err := r.commit(ctx, s, regionsEvent(writer, n)); err != nil {
			r.fail(err)
			return
		}
	}
}

// commit writes ev in s and counts it when committed: a failed write may
// have committed (a lost response, the Region going down), so the item is
// read back, waiting for the Region to be up, before it is retried. A
// write refused for its key's sequence wrote nothing and is retried.
func (r *regionsRun) commit(ctx context.Context, s *regionSite, ev outbox.Event) error {
	sk := r.table.SortKeyFor(ev.ID)
	for attempt := 1; ; attempt++ {
		_, err := s.writer.Write(ctx, nil, ev)
		if err == nil {
			r.written(ev.ID)
			return nil
		}
		if errors.Is(err, outbox.ErrSequenceConflict) && attempt < 5 {
			continue
		}
		var found bool
		if rerr := r.until(ctx, "reading back "+ev.ID+" in "+s.name, func() (bool, error) {
			if s.down.Load() {
				return false, nil
			}
			out, gerr := s.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(r.table.Name), ConsistentRead: aws.Bool(true),
				Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: ev.PartitionKey}, "sk": &ddbtypes.AttributeValueMemberS{Value: sk}}})
			found = gerr == nil && out.Item != nil
			return gerr == nil, nil
		}); rerr != nil {
			return rerr
		}
		if found {
			r.written(ev.ID)
			return nil
		}
		if attempt == 5 {
			return fmt.Errorf("writing %s in %s: %w", ev.ID, s.name, err)
		}
	}
}

// written counts a committed event.
func (r *regionsRun) written(id string) {
	r.tally.Written(id)
	if r.inWindow.Load() {
		r.windowWritten.Add(1)
	}
}

// outage holds the last Region's relay (its mapping disabled and its
// reconciler not fired) once half the events are written and the
// mappings' holds are over (held closed), so that its events stay pending
// and replicate pending, takes the Region down, keeps it down for several
// reconciler intervals past the takeover delay and until its successor
// has claimed it, then brings it back.
func (r *regionsRun) outage(ctx context.Context, next *atomic.Int64, half int64, held <-chan struct{}) {
	victim := r.regions[len(r.regions)-1]
	for next.Load() < half && ctx.Err() == nil {
		sleepUntil(ctx, time.Now().Add(100*time.Millisecond))
	}
	select {
	case <-held:
	case <-ctx.Done():
		return
	}
	r.inWindow.Store(true)
	sleepUntil(ctx, time.Now().Add(time.Second))
	victim.paused.Store(true)
	r.setMapping(ctx, victim, false)
	sleepUntil(ctx, time.Now().Add(3*time.Second))
	if err := r.ctl.RegionDown(ctx, victim.name); err != nil {
		r.t.Fatal(err)
	}
	victim.down.Store(true)
	downAt := time.Now()
	r.t.Logf("%s down", victim.name)
	// Several reconciler intervals past the takeover delay and settle time.
	claimCtx, cancel := context.WithTimeout(ctx, takeoverAfter+takeoverSettle+30*regionsInterval)
	err := r.until(claimCtx, "the successor's claim on "+victim.name, func() (bool, error) { return r.takeovers.Load() > 0, nil })
	cancel()
	sleepUntil(ctx, time.Now().Add(3*regionsInterval))
	if uerr := r.ctl.RegionUp(ctx, victim.name); uerr != nil {
		r.t.Fatal(uerr)
	}
	victim.down.Store(false)
	r.sparedReconcilers.Store(true)
	r.t.Logf("%s up after %s", victim.name, time.Since(downAt).Round(time.Second))
	if err != nil {
		r.fail(err)
		r.logHeartbeats(ctx)
	}
	r.setMapping(ctx, victim, true)
	victim.paused.Store(false)
	// Handed back once its heartbeat has been fresh for the takeover delay,
	// at the successor's next run.
	backCtx, cancel := context.WithTimeout(ctx, takeoverAfter+takeoverSettle+30*regionsInterval)
	defer cancel()
	if err := r.until(backCtx, "the hand-back of "+victim.name, func() (bool, error) { return r.handbacks.Load() > 0, nil }); err != nil {
		r.fail(err)
	}
}

// setMapping enables or disables s's stream mapping.
func (r *regionsRun) setMapping(ctx context.Context, s *regionSite, enabled bool) {
	if _, err := s.lambda.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: aws.String(s.pipeline.MappingUUID), Enabled: aws.Bool(enabled)}); err != nil {
		r.t.Fatalf("setting the mapping in %s enabled=%t: %v", s.name, enabled, err)
	}
}

// fireLoop fires s's reconciler schedule every regionsInterval, except
// while its relay is held or it is down.
func (r *regionsRun) fireLoop(ctx context.Context, s *regionSite) {
	for sleepUntil(ctx, time.Now().Add(regionsInterval)) {
		if s.paused.Load() || s.down.Load() {
			continue
		}
		if _, err := r.ctl.InRegion(s.name).FireSchedule(ctx, s.pipeline.ScheduleGroup, s.pipeline.ScheduleName); err != nil && ctx.Err() == nil {
			r.fail(fmt.Errorf("firing the reconciler in %s: %w", s.name, err))
			return
		}
		r.fires.Add(1)
	}
}

// watchClaims reads every Region's claim on every other Region, counting
// each claim first seen as a takeover and each claim that goes as a
// hand-back. A round with a failed read counts nothing: a claim it could
// not read is not gone.
func (r *regionsRun) watchClaims(ctx context.Context) {
	for sleepUntil(ctx, time.Now().Add(250*time.Millisecond)) {
		if seen, err := r.readClaims(ctx); err == nil {
			r.countClaims(seen)
		}
	}
}

// readClaims returns the claims every Region that is up holds, by claim
// ID.
func (r *regionsRun) readClaims(ctx context.Context) (map[string]string, error) {
	seen := map[string]string{}
	for _, s := range r.regions {
		if s.down.Load() {
			continue
		}
		for _, silent := range r.regions {
			out, err := s.ddb.GetItem(ctx, r.table.GetClaim(silent.name))
			if err != nil {
				return nil, err
			}
			if id, ok := out.Item[outbox.AttrClaimID].(*ddbtypes.AttributeValueMemberS); ok {
				seen[id.Value] = silent.name
			}
		}
	}
	return seen, nil
}

func (r *regionsRun) countClaims(seen map[string]string) {
	r.claimsMu.Lock()
	defer r.claimsMu.Unlock()
	for id, silent := range seen {
		if _, ok := r.claims[id]; !ok {
			r.claims[id] = silent
			r.takeovers.Add(1)
			r.t.Logf("claim %s on %s", id, silent)
		}
	}
	for id, silent := range r.claims {
		if _, ok := seen[id]; !ok && !r.regions[len(r.regions)-1].down.Load() {
			delete(r.claims, id)
			r.handbacks.Add(1)
			r.inWindow.Store(false)
			r.t.Logf("claim %s on %s handed back", id, silent)
		}
	}
}

// consume receives s's consumer queue, counting every outbox event by id
// and the order of every ordered one.
func (r *regionsRun) consume(ctx context.Context, s *regionSite) {
	for ctx.Err() == nil {
		if s.down.Load() {
			sleepUntil(ctx, time.Now().Add(100*time.Millisecond))
			continue
		}
		out, err := s.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(s.queueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			continue // the Region went down mid-call, or the run ends
		}
		now := time.Now()
		var entries []sqstypes.DeleteMessageBatchRequestEntry
		for i, m := range out.Messages {
			var ev struct {
				Detail outbox.PublishedDetail `json:"detail"`
			}
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &ev); err != nil || ev.Detail.Metadata.EventID == "" {
				r.fail(fmt.Errorf("the consumer in %s received a message that is not an outbox event: %.300q", s.name, aws.ToString(m.Body)))
			} else {
				md := ev.Detail.Metadata
				r.tally.Received(md.EventID, now)
				if md.OrderingKey != "" {
					r.order.Received(md.EventID, md.OrderingKey, md.Sequence)
				}
			}
			entries = append(entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
		if len(entries) > 0 {
			_, _ = s.sqs.DeleteMessageBatch(context.WithoutCancel(ctx), &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(s.queueURL), Entries: entries})
		}
	}
}

// drain waits until every written event was received and nothing arrived
// for a few reconciler intervals (duplicates come late), then until no
// replica holds a pending event: an event published whose mark a fault
// refused is published again and marked by a later reconciler run.
func (r *regionsRun) drain(ctx context.Context) {
	lastLog := time.Now()
	err := r.until(ctx, "the drain", func() (bool, error) {
		written, delivered := r.tally.Progress()
		if time.Since(lastLog) > 20*time.Second {
			r.t.Logf("drain: %d of %d events delivered; first undelivered %v", delivered, written, r.tally.Lost(5))
			lastLog = time.Now()
		}
		return delivered >= written && time.Since(r.tally.LastReceive()) > 3*regionsInterval, nil
	})
	if err != nil {
		written, delivered := r.tally.Progress()
		r.t.Errorf("%v: %d of %d events delivered", err, delivered, written)
		return
	}
	settleCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := r.until(settleCtx, "no pending event left", func() (bool, error) {
		return r.stranded(settleCtx) == 0, nil
	}); err != nil {
		r.t.Logf("%v", err)
	}
}

// stranded counts the events still pending in any Region's replica.
func (r *regionsRun) stranded(ctx context.Context) int {
	n := 0
	for _, s := range r.regions {
		p := dynamodb.NewScanPaginator(s.ddb, &dynamodb.ScanInput{TableName: aws.String(r.table.Name), ConsistentRead: aws.Bool(true),
			FilterExpression: aws.String("#s = :p"), ExpressionAttributeNames: map[string]string{"#s": outbox.AttrStatus},
			ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":p": &ddbtypes.AttributeValueMemberS{Value: string(outbox.StatusPending)}}})
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				r.t.Errorf("scanning %s: %v", s.name, err)
				break
			}
			n += len(out.Items)
		}
	}
	return n
}

// until polls cond every 200ms until it holds, it fails or ctx ends.
func (r *regionsRun) until(ctx context.Context, what string, cond func() (bool, error)) error {
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if ok {
			return nil
		}
		if !sleepUntil(ctx, time.Now().Add(200*time.Millisecond)) {
			return fmt.Errorf("%s: %w", what, ctx.Err())
		}
	}
}

// logHeartbeats logs every Region's heartbeat item as the first Region's
// replica holds it, to explain a takeover that did not happen.
func (r *regionsRun) logHeartbeats(ctx context.Context) {
	for _, s := range r.regions {
		out, err := r.regions[0].ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(r.table.Name), Key: r.table.HeartbeatKey(s.name), ConsistentRead: aws.Bool(true)})
		if err != nil {
			r.t.Logf("the heartbeat of %s in %s: %v", s.name, r.regions[0].name, err)
			continue
		}
		r.t.Logf("the heartbeat of %s in %s: %v", s.name, r.regions[0].name, out.Item)
	}
}
