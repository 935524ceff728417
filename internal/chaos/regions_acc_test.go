package chaos

import (
	"context"
	"encoding/json"
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

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relaypackage"
	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
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
	// sharedAggregates are the aggregates every Region writes events of.
	sharedAggregates = 8
)

// regionsRun is one multi-Region chaos run: a pipeline and a consumer
// subscription in every Region, on one global table.
type regionsRun struct {
	t        *testing.T
	ctl      *control.Client
	regions  []*regionSite
	table    outbox.Table
	tally    *Tally
	takeover bool
	// Counted while the run goes on.
	takeovers, handbacks, fires atomic.Int64
	// inWindow is set from just before a Region's relay is held until its
	// hand-back; windowWritten counts the events committed meanwhile.
	inWindow      atomic.Bool
	windowWritten atomic.Int64
	claimsMu      sync.Mutex
	claims        map[string]string // claim ID -> silent Region, as seen
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
}

// TestChaosRegions runs a multi-Region outbox with every Region healthy:
// writers in every Region (some aggregates written from two or three),
// consumers in every Region; every event reaches a consumer exactly once.
func TestChaosRegions(t *testing.T) { runRegions(t, false) }

// TestChaosRegionsTakeover is TestChaosRegions with the last Region taken
// down mid-run, its relay held just before, for several reconciler
// intervals past the takeover delay: its successor must claim it and
// publish its pending events while it is down, and hand it back when it
// returns; nothing is lost, and the only duplicates are events written in
// the takeover window.
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

	stack := localawstest.Start(t)
	r := &regionsRun{t: t, ctl: localawstest.Control(stack), tally: NewTally(), takeover: takeover, claims: map[string]string{}}
	if _, err := r.ctl.SetReplicationLag(ctx, regionsLag.String()); err != nil {
		t.Fatal(err)
	}
	for _, name := range regionPeers[:count] {
		cfg := localawstest.RegionConfig(stack, name)
		r.regions = append(r.regions, &regionSite{name: name, cfg: cfg, ddb: dynamodb.NewFromConfig(cfg), sqs: sqs.NewFromConfig(cfg), lambda: lambda.NewFromConfig(cfg)})
	}
	r.createGlobalTable(ctx)
	for _, s := range r.regions {
		r.deploy(ctx, s)
	}

	res := r.exercise(ctx, events)
	t.Logf("%d reconciler runs fired across Regions", r.fires.Load())
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
// outbox_pipeline resource runs), adopting the replica, with a short
// takeover delay, and its consumer's subscription on the Region's default
// bus.
func (r *regionsRun) deploy(ctx context.Context, s *regionSite) {
	peers := make([]string, len(r.regions))
	for i, p := range r.regions {
		peers[i] = p.name
	}
	spec := provision.Spec{
		Name:         "regions-" + s.name,
		Architecture: regionsArch(),
		Table:        provision.TableSpec{Existing: true, Name: regionsTable, PartitionKey: "pk", SortKey: "sk"},
		Reconciler:   provision.ReconcilerSpec{MinAge: 5 * time.Second},
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
	sub, err := subscription.New(s.cfg).Create(ctx, subscription.Spec{Name: "regions-consumer-" + s.name, Sources: []string{regionsSource},
		Queue: subscription.QueueSpec{VisibilityTimeoutSeconds: aws.Int32(60), MaxReceiveCount: subscription.DefaultMaxReceiveCount}})
	if err != nil {
		r.t.Fatalf("subscribing in %s: %v", s.name, err)
	}
	s.queueURL = sub.QueueURL
}

// exercise writes the events from every Region while consumers receive in
// every Region and the reconcilers run, takes the last Region down mid-run
// when the run is the takeover's, then waits for the drain and returns the
// result.
func (r *regionsRun) exercise(ctx context.Context, events int) RegionsResult {
	bg, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for _, s := range r.regions {
		wg.Add(2)
		go func() { defer wg.Done(); r.consume(bg, s) }()
		go func() { defer wg.Done(); r.fireLoop(bg, s) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); r.watchClaims(bg) }()

	var writers sync.WaitGroup
	var next atomic.Int64
	half := int64(events / 2)
	for i, s := range r.regions {
		writers.Add(1)
		go func() { defer writers.Done(); r.write(bg, i, s, &next, int64(events)) }()
	}
	if r.takeover {
		r.outage(ctx, &next, half)
	}
	writers.Wait()
	drainStart := time.Now()
	r.drain(ctx)
	stop()
	wg.Wait()
	res := NewRegionsResult(r.tally, len(r.regions))
	res.Drain = time.Since(drainStart)
	res.Stranded = r.stranded(ctx)
	res.Takeovers, res.Handbacks = int(r.takeovers.Load()), int(r.handbacks.Load())
	res.Outage, res.WindowWritten = r.takeover, int(r.windowWritten.Load())
	return res
}

// write commits events from Region s until n reaches total: each event
// with an order of its own, every fourth on a shared aggregate that every
// Region writes. A Region that is down writes nothing; a write cut by the
// Region going down is read back when it is up.
func (r *regionsRun) write(ctx context.Context, writer int, s *regionSite, next *atomic.Int64, total int64) {
	for ctx.Err() == nil {
		if s.down.Load() {
			if !sleepUntil(ctx, time.Now().Add(50*time.Millisecond)) {
				return
			}
			continue
		}
		n := next.Add(1) - 1
		if n >= total {
			return
		}
		pk := fmt.Sprintf("ORDER#%d-%06d", writer, n)
		if n%4 == 0 {
			pk = fmt.Sprintf("ACCOUNT#%d", n%sharedAggregates)
		}
		ev := outbox.Event{ID: newID(), PartitionKey: pk, Source: regionsSource, DetailType: "OrderPlaced",
			Detail: json.RawMessage(fmt.Sprintf(`{"orderId":%q,"n":%d}`, pk, n))}
		if err := r.commit(ctx, s, ev); err != nil {
			r.fail(err)
			return
		}
		sleepUntil(ctx, time.Now().Add(20*time.Millisecond))
	}
}

// commit writes ev in s and counts it when committed: a failed write may
// have committed (a lost response, the Region going down), so the item is
// read back, waiting for the Region to be up, before it is retried.
func (r *regionsRun) commit(ctx context.Context, s *regionSite, ev outbox.Event) error {
	sk := r.table.SortKeyFor(ev.ID)
	for attempt := 1; ; attempt++ {
		_, err := s.writer.Write(ctx, nil, ev)
		if err == nil {
			r.written(ev.ID)
			return nil
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
// reconciler not fired) once half the events are written, so that its
// events stay pending and replicate pending, takes the Region down, keeps
// it down for several reconciler intervals past the takeover delay and
// until its successor has claimed it, then brings it back.
func (r *regionsRun) outage(ctx context.Context, next *atomic.Int64, half int64) {
	victim := r.regions[len(r.regions)-1]
	for next.Load() < half && ctx.Err() == nil {
		sleepUntil(ctx, time.Now().Add(100*time.Millisecond))
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
// hand-back.
func (r *regionsRun) watchClaims(ctx context.Context) {
	for sleepUntil(ctx, time.Now().Add(250*time.Millisecond)) {
		seen := map[string]string{}
		for _, s := range r.regions {
			if s.down.Load() {
				continue
			}
			for _, silent := range r.regions {
				out, err := s.ddb.GetItem(ctx, r.table.GetClaim(silent.name))
				if err != nil || out.Item == nil {
					continue
				}
				if id, ok := out.Item[outbox.AttrClaimID].(*ddbtypes.AttributeValueMemberS); ok {
					seen[id.Value] = silent.name
				}
			}
		}
		r.countClaims(seen)
	}
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

// consume receives s's consumer queue, counting every outbox event by id.
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
				Detail struct {
					Metadata struct {
						EventID string `json:"eventId"`
					} `json:"metadata"`
				} `json:"detail"`
			}
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &ev); err != nil || ev.Detail.Metadata.EventID == "" {
				r.fail(fmt.Errorf("the consumer in %s received a message that is not an outbox event: %.300q", s.name, aws.ToString(m.Body)))
			} else {
				r.tally.Received(ev.Detail.Metadata.EventID, now)
			}
			entries = append(entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
		if len(entries) > 0 {
			_, _ = s.sqs.DeleteMessageBatch(context.WithoutCancel(ctx), &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(s.queueURL), Entries: entries})
		}
	}
}

// drain waits until every written event was received and nothing arrived
// for a few reconciler intervals (duplicates come late).
func (r *regionsRun) drain(ctx context.Context) {
	err := r.until(ctx, "the drain", func() (bool, error) {
		written, delivered := r.tally.Progress()
		return delivered >= written && time.Since(r.tally.LastReceive()) > 3*regionsInterval, nil
	})
	if err != nil {
		written, delivered := r.tally.Progress()
		r.t.Errorf("%v: %d of %d events delivered", err, delivered, written)
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
