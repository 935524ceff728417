package outboxpipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/demo"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/tfrun"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// The settings of the multi-Region run: the example's two Regions, a
// takeover delay of a minute (far above the time a loaded machine takes
// between two of the test's reconciler runs, so that a healthy Region is
// never taken over), and how often the test fires
// the reconcilers (the example's schedules, every 5 minutes, are set to
// once a day, so that only the test runs them).
const (
	regionA        = "us-east-1"
	regionB        = "us-west-2"
	takeoverAfter  = 60 * time.Second
	takeoverSettle = 10 * time.Second
	fireEvery      = 3 * time.Second
	// eventsPerStep is how many events each step writes in a Region.
	eventsPerStep = 3
)

// multiRegionOverride is applied over examples/multi-region: the
// reconcilers run only when the test fires them, and republish events
// pending for 30 seconds (the default is 5 minutes, longer than the
// takeover here), so that a takeover publishes the silent Region's events
// as soon as it is decided; the reconcilers are fired only once the
// stream's relay has published what they could find.
const multiRegionOverride = `module "orders_primary" {
  reconciler = { schedule_expression = "rate(1 day)", min_age_seconds = 30 }
}

module "orders_secondary" {
  reconciler = { schedule_expression = "rate(1 day)", min_age_seconds = 30 }
}
`

// TestAccModuleMultiRegion applies examples/multi-region (two Regions of
// one global table, one module per Region) on the local stack and proves
// it through the example's outputs and a writer per Region: the events
// written in each Region reach that Region's consumer once and no other;
// with the second Region's relay held and the Region taken down, the first
// claims it after the takeover delay and publishes its pending events; once
// it is back and fresh for the takeover delay, the claim is released and
// its own pipeline publishes its new events; destroy removes everything.
func TestAccModuleMultiRegion(t *testing.T) {
	ctx, tf := startModuleTest(t, 25*time.Minute)
	started := time.Now()
	stack := localawstest.Start(t)
	ctl := localawstest.Control(stack)
	before := localawstest.Inventory(ctx, t, ctl)

	inst, err := tfrun.Setup(ctx, tfrun.Options{Terraform: tf, Module: root, Dir: t.TempDir(), Log: acctest.TestLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	staged, err := tfrun.Stage(root, t.TempDir(), "modules", filepath.Join("examples", "multi-region"))
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(staged, "examples", "multi-region")
	writeFile(t, work, "test_override.tf", multiRegionOverride)
	run := initRunner(ctx, t, inst, work, tfrun.AWSEnv(stack.Endpoint(), regionA))
	vars := []tfrun.Var{
		{Name: "architecture", Value: "x86_64"},
		{Name: "takeover_after_seconds", Value: strconv.Itoa(int(takeoverAfter.Seconds()))},
		{Name: "takeover_settle_seconds", Value: strconv.Itoa(int(takeoverSettle.Seconds()))},
	}
	destroyed := false
	t.Cleanup(func() {
		if !destroyed {
			if err := run.Destroy(context.Background(), vars...); err != nil {
				t.Errorf("destroying after a failure: %v", err)
			}
		}
	})
	if err := run.Apply(ctx, vars...); err != nil {
		t.Fatal(err)
	}
	t.Logf("applied in %s", time.Since(started).Round(time.Second))

	m := newMultiRegionRun(ctx, t, stack.Endpoint(), ctl, run)
	m.deliver()
	held := m.takeOver()
	m.handBack(held)
	m.checkOnce()
	m.stop()

	if err := run.Destroy(ctx, vars...); err != nil {
		t.Fatalf("destroying examples/multi-region: %v", err)
	}
	destroyed = true
	localawstest.CheckInventory(ctx, t, ctl, before, "destroy")
	t.Logf("TestAccModuleMultiRegion took %s", time.Since(started).Round(time.Second))
}

// multiRegionOutputs are the example's outputs the test reads.
type multiRegionOutputs struct {
	TableName             string                       `json:"table_name"`
	Regions               []string                     `json:"regions"`
	Pipelines             map[string]regionPipeline    `json:"pipelines"`
	SubscriptionQueueURLs map[string]map[string]string `json:"subscription_queue_urls"`
	WriterTable           demo.WriterTable             `json:"writer_table"`
}

// regionPipeline is one Region's entry of the pipelines output.
type regionPipeline struct {
	Name        string `json:"name"`
	TableARN    string `json:"table_arn"`
	EventBusARN string `json:"event_bus_arn"`
	MappingUUID string `json:"event_source_mapping_uuid"`
	ScheduleARN string `json:"schedule_arn"`
}

// multiRegionRun is the applied example, a writer and a consumer per
// Region, and what each consumer received.
type multiRegionRun struct {
	ctx   context.Context
	t     *testing.T
	ctl   *control.Client
	table outbox.Table
	sites map[string]*regionSite
	// expected is the Region whose consumer must receive each event, by
	// event id; received counts each event's deliveries by Region.
	mu       sync.Mutex
	expected map[string]string
	received map[string]map[string]int
	// stop ends the consumers and waits for them.
	stop func()
}

// regionSite is one Region of the run.
type regionSite struct {
	name     string
	pipeline regionPipeline
	ddb      *dynamodb.Client
	sqs      *sqs.Client
	writer   *outbox.Writer
	queueURL string
	// down is set while the Region is taken down: its consumer waits.
	down atomic.Bool
}

// newMultiRegionRun reads the example's outputs, checks them, and starts a
// consumer in each Region.
func newMultiRegionRun(ctx context.Context, t *testing.T, endpoint string, ctl *control.Client, run *tfrun.Runner) *multiRegionRun {
	t.Helper()
	outs, err := run.Output(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(outs)
	if err != nil {
		t.Fatal(err)
	}
	var o multiRegionOutputs
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatalf("decoding the example's outputs: %v", err)
	}
	checkOutputs(t, o)
	m := &multiRegionRun{ctx: ctx, t: t, ctl: ctl, table: o.WriterTable.Table(), sites: map[string]*regionSite{},
		expected: map[string]string{}, received: map[string]map[string]int{}}
	consumers, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	m.stop = func() { stop(); wg.Wait() }
	t.Cleanup(m.stop)
	for _, region := range o.Regions {
		cfg := demo.AWSConfig(endpoint, region)
		s := &regionSite{name: region, pipeline: o.Pipelines[region], ddb: dynamodb.NewFromConfig(cfg), sqs: sqs.NewFromConfig(cfg),
			queueURL: o.SubscriptionQueueURLs[region]["billing"]}
		// The writer stamps each event with its client's Region.
		if s.writer, err = outbox.NewWriter(s.ddb, m.table); err != nil {
			t.Fatal(err)
		}
		m.sites[region] = s
		m.received[region] = map[string]int{}
		wg.Add(1)
		go func() { defer wg.Done(); m.consume(consumers, s) }()
	}
	return m
}

// checkOutputs checks that the example's outputs name a pipeline, a
// replica, a bus and a consumer queue in each Region.
func checkOutputs(t *testing.T, o multiRegionOutputs) {
	t.Helper()
	if o.TableName != "orders" || o.WriterTable.Name != o.TableName || strings.Join(o.Regions, ",") != regionA+","+regionB {
		t.Fatalf("outputs: %+v", o)
	}
	for _, region := range o.Regions {
		p := o.Pipelines[region]
		inRegion := ":" + region + ":"
		if p.Name != "orders-"+region || !strings.Contains(p.TableARN, inRegion) || !strings.Contains(p.EventBusARN, inRegion) ||
			p.MappingUUID == "" || !strings.Contains(p.ScheduleARN, inRegion) {
			t.Errorf("the pipeline of %s: %+v", region, p)
		}
		if url := o.SubscriptionQueueURLs[region]["billing"]; url == "" {
			t.Errorf("no consumer queue in %s: %v", region, o.SubscriptionQueueURLs)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// deliver writes events in each Region and waits until each has reached
// its Region's consumer; then it fires both reconcilers until each Region
// has a heartbeat (a Region without one is never taken over).
func (m *multiRegionRun) deliver() {
	var written []outbox.Record
	for _, region := range []string{regionA, regionB} {
		written = append(written, m.write(region, "deliver", eventsPerStep, region)...)
	}
	m.poll("the events of both Regions delivered", 2*time.Minute, func() (bool, string) {
		missing := m.undelivered(written)
		return missing == 0, fmt.Sprintf("%d of %d events undelivered", missing, len(written))
	})
	m.poll("both Regions' heartbeats", time.Minute, func() (bool, string) {
		m.fire(regionA)
		m.fire(regionB)
		a, b := m.heartbeat(regionA, regionA), m.heartbeat(regionA, regionB)
		return !a.At.IsZero() && !b.At.IsZero(), fmt.Sprintf("heartbeats in %s: %s %v, %s %v", regionA, regionA, a.At, regionB, b.At)
	})
}

// takeOver holds the relay of Region B (its mapping paused, its reconciler
// no longer fired), writes events there that stay pending, waits until
// they have replicated to A, and takes B down: A, fired every few seconds,
// must claim B once B's heartbeat is older than the takeover delay and,
// after the settle time, publish B's pending events to its own consumer.
// It returns those events.
func (m *multiRegionRun) takeOver() []outbox.Record {
	m.mapping(regionB, "pause")
	held := m.write(regionB, "held", eventsPerStep, regionA)
	for _, r := range held {
		if st := m.status(regionB, r); st != string(outbox.StatusPending) {
			m.t.Fatalf("event %s is %q in %s right after its write, want PENDING: its relay was held", r.EventID, st, regionB)
		}
	}
	m.poll("the held events replicated to "+regionA, time.Minute, func() (bool, string) {
		n := m.countStatus(regionA, held, outbox.StatusPending)
		return n == len(held), fmt.Sprintf("%d of %d pending in %s", n, len(held), regionA)
	})
	if err := m.ctl.RegionDown(m.ctx, regionB); err != nil {
		m.t.Fatal(err)
	}
	m.sites[regionB].down.Store(true)
	downAt := time.Now()
	// B's heartbeat turns silent takeoverAfter after its last run; A's
	// claim then settles before A publishes.
	m.poll("the claim of "+regionA+" on "+regionB+" and the held events delivered in "+regionA, takeoverAfter+takeoverSettle+2*time.Minute, func() (bool, string) {
		m.fire(regionA)
		claim := m.claim(regionA, regionB)
		missing := m.undelivered(held)
		return claim.Successor == regionA && missing == 0, fmt.Sprintf("claim %+v; %d held events undelivered", claim, missing)
	})
	m.t.Logf("%s took %s over %s after it went down", regionA, regionB, time.Since(downAt).Round(time.Second))
	return held
}

// handBack brings B back, resumes its relay once A's marks of the held
// events have replicated to it (its relay then settles their stream
// records without publishing them again), and fires both reconcilers until
// A has released its claim in both replicas (B fresh for the takeover
// delay); then the events written in B must reach B's consumer, published
// by B's own pipeline.
func (m *multiRegionRun) handBack(held []outbox.Record) {
	if err := m.ctl.RegionUp(m.ctx, regionB); err != nil {
		m.t.Fatal(err)
	}
	m.sites[regionB].down.Store(false)
	upAt := time.Now()
	m.poll("the marks of the held events replicated to "+regionB, time.Minute, func() (bool, string) {
		n := m.countStatus(regionB, held, outbox.StatusPublished)
		return n == len(held), fmt.Sprintf("%d of %d published in %s", n, len(held), regionB)
	})
	m.mapping(regionB, "resume")
	m.poll("the claim on "+regionB+" released in both Regions", takeoverAfter+2*time.Minute, func() (bool, string) {
		m.fire(regionA)
		m.fire(regionB)
		inA, inB := m.claim(regionA, regionB), m.claim(regionB, regionB)
		return inA.ID == "" && inB.ID == "", fmt.Sprintf("claim in %s %+v, in %s %+v", regionA, inA, regionB, inB)
	})
	m.t.Logf("%s handed %s back %s after it came back", regionA, regionB, time.Since(upAt).Round(time.Second))
	after := m.write(regionB, "after", eventsPerStep, regionB)
	m.poll("the events written in "+regionB+" after the hand-back delivered in "+regionB, 2*time.Minute, func() (bool, string) {
		missing := m.undelivered(after)
		return missing == 0, fmt.Sprintf("%d undelivered", missing)
	})
}

// checkOnce waits until every event written has reached its Region's
// consumer, and checks that none reached a consumer twice or another
// Region's consumer.
func (m *multiRegionRun) checkOnce() {
	m.poll("every event delivered", 2*time.Minute, func() (bool, string) {
		missing := m.undelivered(nil)
		return missing == 0, fmt.Sprintf("%d undelivered", missing)
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	for region, got := range m.received {
		for id, n := range got {
			if want := m.expected[id]; want != region || n != 1 {
				m.t.Errorf("event %s reached the consumer in %s %d times; want once, in %q", id, region, n, want)
			}
		}
	}
	m.t.Logf("%d events, each delivered once, in the Region that published it", len(m.expected))
}

// write commits n events in region, expected at the consumer of
// deliveredIn, and returns their records.
func (m *multiRegionRun) write(region, step string, n int, deliveredIn string) []outbox.Record {
	m.t.Helper()
	var recs []outbox.Record
	for i := range n {
		pk := fmt.Sprintf("ORDER#%s-%s-%d", region, step, i)
		r, err := m.sites[region].writer.Write(m.ctx, nil, outbox.Event{PartitionKey: pk, Source: demo.Source, DetailType: demo.OrderPlaced,
			Detail: json.RawMessage(fmt.Sprintf(`{"orderId":%q}`, pk))})
		if err != nil {
			m.t.Fatalf("writing in %s: %v", region, err)
		}
		recs = append(recs, r...)
	}
	m.mu.Lock()
	for _, r := range recs {
		m.expected[r.EventID] = deliveredIn
	}
	m.mu.Unlock()
	return recs
}

// undelivered counts the events of recs (nil: every event written) that
// have not reached the consumer of the Region expected.
func (m *multiRegionRun) undelivered(recs []outbox.Record) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := make([]string, 0, len(m.expected))
	if recs == nil {
		for id := range m.expected {
			ids = append(ids, id)
		}
	}
	for _, r := range recs {
		ids = append(ids, r.EventID)
	}
	n := 0
	for _, id := range ids {
		if m.received[m.expected[id]][id] == 0 {
			n++
		}
	}
	return n
}

// consume receives the consumer queue of s until ctx ends, counting each
// event by id; while s is down it waits.
func (m *multiRegionRun) consume(ctx context.Context, s *regionSite) {
	for ctx.Err() == nil {
		if s.down.Load() {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		out, err := s.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(s.queueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			if ctx.Err() == nil && !s.down.Load() {
				m.t.Errorf("receiving in %s: %v", s.name, err)
				return
			}
			continue // the Region went down mid-call, or the run ends
		}
		var entries []sqstypes.DeleteMessageBatchRequestEntry
		for i, msg := range out.Messages {
			var ev struct {
				Detail outbox.PublishedDetail `json:"detail"`
			}
			if err := json.Unmarshal([]byte(aws.ToString(msg.Body)), &ev); err != nil || ev.Detail.Metadata.EventID == "" {
				m.t.Errorf("the consumer in %s received a message that is not an outbox event: %.300q", s.name, aws.ToString(msg.Body))
			}
			m.mu.Lock()
			m.received[s.name][ev.Detail.Metadata.EventID]++
			m.mu.Unlock()
			entries = append(entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: msg.ReceiptHandle})
		}
		if len(entries) > 0 {
			_, _ = s.sqs.DeleteMessageBatch(context.WithoutCancel(ctx), &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(s.queueURL), Entries: entries})
		}
	}
}

// poll checks cond every fireEvery until it holds, and fails the test
// with cond's last state when it still does not after within.
func (m *multiRegionRun) poll(what string, within time.Duration, cond func() (bool, string)) {
	m.t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) || m.ctx.Err() != nil {
			m.t.Fatalf("%s: not within %s; last: %s", what, within, state)
		}
		select {
		case <-m.ctx.Done():
		case <-time.After(fireEvery):
		}
	}
}

// fire runs the reconciler of region now, as its schedule would, through
// the stack's control route of that Region.
func (m *multiRegionRun) fire(region string) {
	m.t.Helper()
	arn := m.sites[region].pipeline.ScheduleARN
	_, path, _ := strings.Cut(arn, ":schedule/")
	group, name, ok := strings.Cut(path, "/")
	if !ok {
		m.t.Fatalf("the schedule ARN of %s, %q, is not arn:...:schedule/<group>/<name>", region, arn)
	}
	res, err := m.ctl.InRegion(region).FireSchedule(m.ctx, group, name)
	if err != nil {
		m.t.Fatalf("firing the reconciler of %s: %v", region, err)
	}
	if !res.Invoked {
		m.t.Fatalf("firing the reconciler of %s: %s %s", region, res.ErrorCode, res.ErrorMessage)
	}
}

// mapping pauses or resumes the relay's event source mapping of region
// (the stack's control route: the mapping itself stays enabled).
func (m *multiRegionRun) mapping(region, action string) {
	m.t.Helper()
	var st control.MappingStatus
	if err := m.ctl.Do(m.ctx, http.MethodPost, "mappings/"+action+"?region="+region, map[string]string{"uuid": m.sites[region].pipeline.MappingUUID}, &st); err != nil {
		m.t.Fatalf("mappings/%s in %s: %v", action, region, err)
	}
	if st.Paused != (action == "pause") {
		m.t.Fatalf("mappings/%s in %s: %+v", action, region, st)
	}
}

// heartbeat is the heartbeat of peer as the replica of region holds it
// (zero when it has none).
func (m *multiRegionRun) heartbeat(region, peer string) outbox.Heartbeat {
	m.t.Helper()
	out, err := m.sites[region].ddb.GetItem(m.ctx, withConsistentRead(m.table.GetHeartbeat(peer)))
	if err != nil {
		m.t.Fatalf("the heartbeat of %s in %s: %v", peer, region, err)
	}
	if out.Item == nil {
		return outbox.Heartbeat{}
	}
	h, err := outbox.ParseHeartbeat(out.Item)
	if err != nil {
		m.t.Fatal(err)
	}
	return h
}

// claim is the takeover claim on silent as the replica of region holds it
// (zero when there is none).
func (m *multiRegionRun) claim(region, silent string) outbox.Claim {
	m.t.Helper()
	out, err := m.sites[region].ddb.GetItem(m.ctx, withConsistentRead(m.table.GetClaim(silent)))
	if err != nil {
		m.t.Fatalf("the claim on %s in %s: %v", silent, region, err)
	}
	if out.Item == nil {
		return outbox.Claim{}
	}
	c, err := outbox.ParseClaim(out.Item)
	if err != nil {
		m.t.Fatal(err)
	}
	return c
}

// status is the status of r's item in the replica of region.
func (m *multiRegionRun) status(region string, r outbox.Record) string {
	m.t.Helper()
	out, err := m.sites[region].ddb.GetItem(m.ctx, &dynamodb.GetItemInput{TableName: aws.String(m.table.Name), Key: m.table.Key(r), ConsistentRead: aws.Bool(true)})
	if err != nil {
		m.t.Fatalf("reading %s in %s: %v", r.EventID, region, err)
	}
	if s, ok := out.Item[outbox.AttrStatus].(*ddbtypes.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// countStatus counts the records of recs whose item has status st in the
// replica of region.
func (m *multiRegionRun) countStatus(region string, recs []outbox.Record, st outbox.Status) int {
	n := 0
	for _, r := range recs {
		if m.status(region, r) == string(st) {
			n++
		}
	}
	return n
}

func withConsistentRead(in *dynamodb.GetItemInput) *dynamodb.GetItemInput {
	in.ConsistentRead = aws.Bool(true)
	return in
}
