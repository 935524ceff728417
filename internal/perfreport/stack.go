package perfreport

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/stats"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/pipeline"
	"github.com/outboxkit/terraform-provider-outbox/internal/relaypackage"
	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Modes of the relay that the stack measurements compare.
const (
	ModeRelay = "relay"
	ModeNaive = "naive"
	// ModeCeiling is the relay with the largest batches and
	// parallelization, for the throughput ceiling.
	ModeCeiling = "ceiling"
)

// Scenarios of the stack measurements.
const (
	ScenarioLocal = "local stack"
	ScenarioModel = "AWS model"
)

// The mapping settings of the ceiling run: the largest batch a stream
// mapping's function usually takes and the highest parallelization.
const (
	CeilingBatchSize       = 1000
	CeilingParallelization = 10
)

// Options configure Measure.
type Options struct {
	// Root is the repository's root (the naive relay's zips, the
	// provider's sources).
	Root string
	// Terraform is the CLI used to time `terraform apply`; when empty or
	// missing, only pipeline.Create is timed.
	Terraform string
	// LatencyEvents is the number of events per relay in the latency run,
	// written by each relay's writer at random (exponential) intervals of
	// mean Interval.
	LatencyEvents int
	Interval      time.Duration
	// Burst is the number of events of a throughput run, BurstRuns the
	// runs per relay; CeilingBurst the events of a ceiling run.
	Burst        int
	BurstRuns    int
	CeilingBurst int
	// UnitEvents is the number of events whose write units are counted
	// per mode.
	UnitEvents int
	// ColdStarts is the number of fresh functions invoked per
	// architecture; Applies the number of applies timed.
	ColdStarts int
	Applies    int
	// Log receives progress.
	Log io.Writer
}

func (o *Options) defaults() {
	if o.LatencyEvents <= 0 {
		o.LatencyEvents = 400
	}
	if o.Interval <= 0 {
		o.Interval = 50 * time.Millisecond
	}
	if o.Burst <= 0 {
		o.Burst = 1000
	}
	if o.BurstRuns <= 0 {
		o.BurstRuns = 3
	}
	if o.CeilingBurst <= 0 {
		o.CeilingBurst = 5000
	}
	if o.UnitEvents <= 0 {
		o.UnitEvents = 100
	}
	if o.ColdStarts <= 0 {
		o.ColdStarts = 3
	}
	if o.Applies <= 0 {
		o.Applies = 3
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
}

// Results are the stack measurements.
type Results struct {
	Options Options
	// Local and Model are both relays measured in the same run, on the
	// stack as it is and with the AWS latency model added to every call.
	Local, Model Scenario
	// Ceiling is the relay's throughput per shard at its largest settings,
	// under the model.
	Ceiling    Ceiling
	Units      UnitsResult
	Apply      ApplyResult
	ColdStarts []ColdStart
	Zips       []ZipSize
	// Architecture of the two measured relay functions.
	Architecture string
	// Duration of the stack measurements.
	Duration time.Duration
}

// Scenario is both relays' latency and throughput under one latency model.
type Scenario struct {
	Name string
	// Model is the latency added to each call; nil for the stack as it is.
	Model        []CallLatency
	Relay, Naive ModeResult
}

// ThroughputRatio is the relay's median throughput over the naive relay's.
func (s Scenario) ThroughputRatio() float64 {
	if n := s.Naive.MedianThroughput(); n > 0 {
		return s.Relay.MedianThroughput() / n
	}
	return 0
}

// Ceiling is the relay's throughput through one shard with batch size
// BatchSize and parallelization ParallelizationFactor.
type Ceiling struct {
	BatchSize, ParallelizationFactor int32
	Bursts                           []Burst
}

// MedianThroughput is the median events per second of the runs.
func (c Ceiling) MedianThroughput() float64 {
	return ModeResult{Bursts: c.Bursts}.MedianThroughput()
}

// ModeResult is one relay's latency and throughput.
type ModeResult struct {
	Name string
	// Latencies from commit (TransactWriteItems returned) to receipt by the
	// subscription queue's consumer, one per event received.
	Latencies []time.Duration
	// Lost counts events of the latency run not received in time.
	Lost int
	// Duplicates counts events received more than once.
	Duplicates int
	// InvocationsPerEvent is the relay's invocations in the latency run
	// over its events.
	InvocationsPerEvent float64
	Bursts              []Burst
}

// Burst is one throughput run: Events written while the mapping was
// paused, then released at once.
type Burst struct {
	Events int
	// Drain is the time from resuming the mapping to the last event's
	// receipt.
	Drain       time.Duration
	Invocations int64
}

// EventsPerSecond is the run's throughput.
func (b Burst) EventsPerSecond() float64 { return float64(b.Events) / b.Drain.Seconds() }

// MedianThroughput is the median events per second of the runs.
func (m ModeResult) MedianThroughput() float64 {
	var xs []float64
	for _, b := range m.Bursts {
		xs = append(xs, b.EventsPerSecond())
	}
	return stats.MedianFloat(xs)
}

// MedianBatch is the median records per invocation of the runs.
func (m ModeResult) MedianBatch() float64 {
	var xs []float64
	for _, b := range m.Bursts {
		if b.Invocations > 0 {
			xs = append(xs, float64(b.Events)/float64(b.Invocations))
		}
	}
	return stats.MedianFloat(xs)
}

// ZipSize is the size of a deployment package.
type ZipSize struct {
	Name  string
	Bytes int64
	// Bootstrap is the uncompressed executable's size.
	Bootstrap int64
}

// ColdStart is the first invocations of fresh functions of one package.
type ColdStart struct {
	Arch     string
	Emulated bool
	// First is the first invocation of each fresh function, as the client
	// saw it; Init is the stack's Init Duration (process start to the
	// runtime's first request for work); Warm the second invocation.
	First, Init, Warm []time.Duration
}

// Measure runs every stack measurement on a local AWS stack of its own.
func Measure(ctx context.Context, o Options) (*Results, error) {
	o.defaults()
	start := time.Now()
	say := func(format string, args ...any) { _, _ = fmt.Fprintf(o.Log, format+"\n", args...) }
	res := &Results{Options: o, Architecture: string(nativeArch())}

	zips, err := zipSizes(o.Root)
	if err != nil {
		return nil, err
	}
	res.Zips = zips

	stack, err := localaws.Start(ctx, localaws.Options{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, fmt.Errorf("starting the local AWS stack: %w", err)
	}
	defer func() { _ = stack.Close() }()
	cfg := awsConfig(stack)
	say("local AWS stack at %s", stack.Endpoint())

	if err := res.measureRelays(ctx, o, stack, cfg, say); err != nil {
		return nil, err
	}
	say("counting write units...")
	if res.Units, err = measureUnits(ctx, cfg, o.UnitEvents); err != nil {
		return nil, fmt.Errorf("counting write units: %w", err)
	}
	say("cold starts...")
	if res.ColdStarts, err = measureColdStarts(ctx, cfg, o); err != nil {
		return nil, fmt.Errorf("measuring cold starts: %w", err)
	}
	say("apply times...")
	if res.Apply, err = measureApply(ctx, o, stack, cfg, say); err != nil {
		return nil, fmt.Errorf("timing apply: %w", err)
	}
	res.Duration = time.Since(start)
	return res, nil
}

// nativeArch is the Lambda architecture that runs natively here.
func nativeArch() pipeline.Architecture {
	if runtime.GOARCH == "arm64" {
		return pipeline.ArchARM64
	}
	return pipeline.ArchX86_64
}

func awsConfig(stack *localaws.Stack) aws.Config {
	transport := awshttp.NewBuildableClient().GetTransport()
	transport.MaxIdleConnsPerHost = 64
	return aws.Config{
		Region:       stack.Options().Region,
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDLOCALADMIN", "localadminsecret", ""),
		BaseEndpoint: aws.String(stack.Endpoint()),
		HTTPClient:   &http.Client{Transport: transport},
	}
}

// NaiveZipPath is where relaypackage/gen writes the naive relay's package.
func NaiveZipPath(root, arch string) string {
	return filepath.Join(root, "internal", "relaypackage", "dist", "_naive", "naive_"+arch+".zip")
}

// naiveCode is the naive relay's package, for a pipeline.
func naiveCode(root string) pipeline.RelayCode {
	return pipeline.RelayCode{
		Zip: func(arch string) ([]byte, error) { return os.ReadFile(NaiveZipPath(root, arch)) },
		SHA256: func(arch string) (string, error) {
			b, err := os.ReadFile(NaiveZipPath(root, arch))
			if err != nil {
				return "", err
			}
			sum := sha256.Sum256(b)
			return base64.StdEncoding.EncodeToString(sum[:]), nil
		},
	}
}

func relayCode() pipeline.RelayCode {
	return pipeline.RelayCode{Zip: relaypackage.Zip, SHA256: relaypackage.SHA256}
}

func zipSizes(root string) ([]ZipSize, error) {
	var out []ZipSize
	for _, arch := range relaypackage.Architectures {
		b, err := relaypackage.Zip(arch)
		if err != nil {
			return nil, err
		}
		name, _ := relaypackage.FileName(arch)
		out = append(out, ZipSize{Name: name, Bytes: int64(len(b)), Bootstrap: bootstrapSize(b)})
	}
	for _, arch := range relaypackage.Architectures {
		b, err := os.ReadFile(NaiveZipPath(root, arch))
		if err != nil {
			return nil, fmt.Errorf("the naive relay's package: %w (build it with go generate ./internal/relaypackage)", err)
		}
		out = append(out, ZipSize{Name: filepath.Base(NaiveZipPath(root, arch)), Bytes: int64(len(b)), Bootstrap: bootstrapSize(b)})
	}
	return out, nil
}

// tracker records when each event was committed and first received.
type tracker struct {
	mu        sync.Mutex
	committed map[string]time.Time
	received  map[string]time.Time
	dups      map[string]int
}

func newTracker() *tracker {
	return &tracker{committed: map[string]time.Time{}, received: map[string]time.Time{}, dups: map[string]int{}}
}

func (t *tracker) commit(id string, at time.Time) {
	t.mu.Lock()
	t.committed[id] = at
	t.mu.Unlock()
}

func (t *tracker) receive(id string, at time.Time) {
	t.mu.Lock()
	if _, ok := t.received[id]; ok {
		t.dups[id]++
	} else {
		t.received[id] = at
	}
	t.mu.Unlock()
}

// waitAll waits until every event of ids was received, or timeout; it
// returns the number still missing.
func (t *tracker) waitAll(ctx context.Context, ids []string, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for {
		t.mu.Lock()
		missing := 0
		for _, id := range ids {
			if _, ok := t.received[id]; !ok {
				missing++
			}
		}
		t.mu.Unlock()
		if missing == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return missing
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// latencies returns receipt minus commit of the received events of ids,
// the number not received, and the duplicates.
func (t *tracker) latencies(ids []string) (ds []time.Duration, lost, dups int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		r, ok := t.received[id]
		if !ok {
			lost++
			continue
		}
		ds = append(ds, r.Sub(t.committed[id]))
		dups += t.dups[id]
	}
	return ds, lost, dups
}

// lastReceipt is the latest receipt among ids.
func (t *tracker) lastReceipt(ids []string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	var last time.Time
	for _, id := range ids {
		if r := t.received[id]; r.After(last) {
			last = r
		}
	}
	return last
}

// deployed is one relay deployed as a pipeline with a subscription.
type deployed struct {
	mode     string
	source   string
	pipeline pipeline.State
	sub      subscription.State
	writer   *outbox.Writer
}

// appTable is the application's own table of the measurements.
const appTable = "bench-orders"

// benchEnv is the deployed relays of the stack measurements, with their
// consumers running.
type benchEnv struct {
	ctl     *control.Client
	tr      *tracker
	relays  []*deployed
	ceiling *deployed
	stop    func()
}

// deploy deploys each relay as a pipeline with a subscription, plus the
// relay again with the largest batches for the ceiling run, and starts
// the consumers of every subscription queue.
func deploy(ctx context.Context, o Options, stack *localaws.Stack, cfg aws.Config, say func(string, ...any)) (*benchEnv, error) {
	ddb := dynamodb.NewFromConfig(cfg)
	if err := createTable(ctx, ddb, appTable, nil); err != nil {
		return nil, err
	}
	env := &benchEnv{ctl: control.New(stack.Endpoint(), nil), tr: newTracker()}
	for _, m := range []struct {
		mode    string
		code    pipeline.RelayCode
		mapping pipeline.MappingSpec
	}{
		{ModeRelay, relayCode(), pipeline.MappingSpec{}},
		{ModeNaive, naiveCode(o.Root), pipeline.MappingSpec{}},
		{ModeCeiling, relayCode(), pipeline.MappingSpec{BatchSize: CeilingBatchSize, ParallelizationFactor: CeilingParallelization}},
	} {
		say("deploying the %s relay as pipeline bench-%s (%s)...", m.mode, m.mode, nativeArch())
		d, err := deployRelay(ctx, cfg, ddb, m.mode, m.code, m.mapping)
		if err != nil {
			return nil, err
		}
		if m.mode == ModeCeiling {
			env.ceiling = d
		} else {
			env.relays = append(env.relays, d)
		}
	}
	q := sqs.NewFromConfig(cfg)
	cctx, cancel := context.WithCancel(ctx)
	var consumers sync.WaitGroup
	env.stop = func() { cancel(); consumers.Wait() }
	for _, d := range append(slices.Clone(env.relays), env.ceiling) {
		for range 4 {
			consumers.Go(func() { consume(cctx, q, d.sub.QueueURL, env.tr) })
		}
	}
	return env, nil
}

func deployRelay(ctx context.Context, cfg aws.Config, ddb *dynamodb.Client, mode string, code pipeline.RelayCode, mapping pipeline.MappingSpec) (*deployed, error) {
	spec := pipeline.Spec{
		Name:         "bench-" + mode,
		Architecture: nativeArch(),
		Mapping:      mapping,
		Reconciler:   pipeline.ReconcilerSpec{Disabled: true},
	}
	st, err := pipeline.NewClients(cfg, code).Create(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("creating pipeline %s: %w", spec.Name, err)
	}
	source := "bench." + mode
	sub, err := subscription.NewClients(cfg).Create(ctx, subscription.Spec{
		Name: "bench-" + mode + "-sub", Sources: []string{source},
		Queue: subscription.QueueSpec{ReceiveWaitTimeSeconds: 20},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the subscription of %s: %w", spec.Name, err)
	}
	w, err := outbox.NewWriter(ddb, spec.OutboxTable())
	if err != nil {
		return nil, err
	}
	return &deployed{mode: mode, source: source, pipeline: st, sub: sub, writer: w}, nil
}

// warmUp starts each function and its mapping's poller.
func (e *benchEnv) warmUp(ctx context.Context) error {
	for _, d := range append(slices.Clone(e.relays), e.ceiling) {
		var ids []string
		for i := range 5 {
			id, err := writeEvent(ctx, d, fmt.Sprintf("warm-%d", i), e.tr)
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		if n := e.tr.waitAll(ctx, ids, 2*time.Minute); n > 0 {
			return fmt.Errorf("%s relay: %d warm-up events never arrived", d.mode, n)
		}
	}
	return nil
}

func (r *Results) measureRelays(ctx context.Context, o Options, stack *localaws.Stack, cfg aws.Config, say func(string, ...any)) error {
	env, err := deploy(ctx, o, stack, cfg, say)
	if err != nil {
		return err
	}
	defer env.stop()
	say("warming up...")
	if err := env.warmUp(ctx); err != nil {
		return err
	}
	if r.Local, err = env.scenario(ctx, o, ScenarioLocal, nil, say); err != nil {
		return err
	}
	if r.Model, err = env.scenario(ctx, o, ScenarioModel, AWSLatencyModel, say); err != nil {
		return err
	}
	r.Ceiling, err = env.measureCeiling(ctx, o, say)
	return err
}

// scenario measures both relays' latency and throughput with the given
// latency model added to every call (none for the stack as it is).
func (e *benchEnv) scenario(ctx context.Context, o Options, name string, model []CallLatency, say func(string, ...any)) (Scenario, error) {
	sc := Scenario{Name: name, Model: model}
	say("scenario %s:", name)
	if model != nil {
		remove, err := applyLatencyModel(ctx, e.ctl, model)
		if err != nil {
			return sc, err
		}
		defer func() { _ = remove() }()
	}
	results, err := e.latency(ctx, o, name, say)
	if err != nil {
		return sc, err
	}
	sc.Relay, sc.Naive = results[0], results[1]
	say("  throughput: bursts of %d events, %d runs per relay...", o.Burst, o.BurstRuns)
	for run := range o.BurstRuns {
		for i, d := range e.relays {
			b, err := burst(ctx, e.ctl, d, o.Burst, fmt.Sprintf("%s-burst%d", scenarioTag(name), run), e.tr)
			if err != nil {
				return sc, err
			}
			say("    %s run %d: %d events in %s (%.0f events/s, %d invocations)", d.mode, run+1, b.Events, b.Drain.Round(time.Millisecond), b.EventsPerSecond(), b.Invocations)
			results[i].Bursts = append(results[i].Bursts, b)
		}
	}
	sc.Relay, sc.Naive = results[0], results[1]
	return sc, nil
}

// latency runs both relays at once, each writer one event every interval
// on average, and returns their results in the order of e.relays.
func (e *benchEnv) latency(ctx context.Context, o Options, name string, say func(string, ...any)) ([]ModeResult, error) {
	say("  latency: %d events per relay, every %s on average...", o.LatencyEvents, o.Interval)
	ids := make([][]string, len(e.relays))
	inv0 := make([]int64, len(e.relays))
	for i, d := range e.relays {
		s, err := e.ctl.MappingStatus(ctx, d.pipeline.MappingUUID)
		if err != nil {
			return nil, err
		}
		inv0[i] = s.Counters.Invocations
	}
	errs := make(chan error, len(e.relays))
	var writers sync.WaitGroup
	for i, d := range e.relays {
		writers.Go(func() {
			// Poisson arrivals: a fixed period would lock the commits
			// to a few phases of the mapping's 250 ms poll period.
			rng := rand.New(rand.NewPCG(uint64(i), 1))
			next := time.Now()
			for n := range o.LatencyEvents {
				id, err := writeEvent(ctx, d, fmt.Sprintf("%s-lat-%d", scenarioTag(name), n), e.tr)
				if err != nil {
					errs <- err
					return
				}
				ids[i] = append(ids[i], id)
				next = next.Add(time.Duration(min(rng.ExpFloat64(), 10) * float64(o.Interval)))
				time.Sleep(time.Until(next))
			}
		})
	}
	writers.Wait()
	select {
	case err := <-errs:
		return nil, err
	default:
	}
	out := make([]ModeResult, len(e.relays))
	for i, d := range e.relays {
		e.tr.waitAll(ctx, ids[i], time.Minute)
		m := ModeResult{Name: d.mode}
		m.Latencies, m.Lost, m.Duplicates = e.tr.latencies(ids[i])
		s, err := e.ctl.MappingStatus(ctx, d.pipeline.MappingUUID)
		if err != nil {
			return nil, err
		}
		m.InvocationsPerEvent = float64(s.Counters.Invocations-inv0[i]) / float64(len(ids[i]))
		say("    %s: p50 %s p99 %s lost %d", d.mode, stats.Median(m.Latencies).Round(time.Millisecond), stats.Percentile(m.Latencies, 99).Round(time.Millisecond), m.Lost)
		out[i] = m
	}
	return out, nil
}

// measureCeiling times bursts through the relay with the largest batch
// size and parallelization, under the AWS latency model.
func (e *benchEnv) measureCeiling(ctx context.Context, o Options, say func(string, ...any)) (Ceiling, error) {
	c := Ceiling{BatchSize: CeilingBatchSize, ParallelizationFactor: CeilingParallelization}
	remove, err := applyLatencyModel(ctx, e.ctl, AWSLatencyModel)
	if err != nil {
		return c, err
	}
	defer func() { _ = remove() }()
	say("ceiling: bursts of %d events, batch size %d, parallelization %d, AWS model...", o.CeilingBurst, c.BatchSize, c.ParallelizationFactor)
	for run := range o.BurstRuns {
		b, err := burst(ctx, e.ctl, e.ceiling, o.CeilingBurst, fmt.Sprintf("ceiling%d", run), e.tr)
		if err != nil {
			return c, err
		}
		say("  run %d: %d events in %s (%.0f events/s, %d invocations)", run+1, b.Events, b.Drain.Round(time.Millisecond), b.EventsPerSecond(), b.Invocations)
		c.Bursts = append(c.Bursts, b)
	}
	return c, nil
}

// scenarioTag is a scenario's name as a key fragment.
func scenarioTag(name string) string { return strings.ReplaceAll(name, " ", "-") }

// burst writes n events while the relay's mapping is paused, resumes it
// and times the drain to the subscription queue.
func burst(ctx context.Context, ctl *control.Client, d *deployed, n int, tag string, tr *tracker) (Burst, error) {
	uuid := d.pipeline.MappingUUID
	if _, err := ctl.PauseMapping(ctx, uuid); err != nil {
		return Burst{}, err
	}
	resumed := false
	defer func() {
		if !resumed {
			_, _ = ctl.ResumeMapping(context.WithoutCancel(ctx), uuid)
		}
	}()
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				id, err := writeEvent(ctx, d, fmt.Sprintf("%s-%d", tag, i), tr)
				if err != nil {
					errs <- err
					return
				}
				ids[i] = id
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return Burst{}, err
	default:
	}
	before, err := ctl.MappingStatus(ctx, uuid)
	if err != nil {
		return Burst{}, err
	}
	t0 := time.Now()
	if _, err := ctl.ResumeMapping(ctx, uuid); err != nil {
		return Burst{}, err
	}
	resumed = true
	if missing := tr.waitAll(ctx, ids, 5*time.Minute); missing > 0 {
		return Burst{}, fmt.Errorf("%s relay: %d of %d burst events never arrived", d.mode, missing, n)
	}
	last := tr.lastReceipt(ids)
	// Let the last invocation end before reading the counters.
	time.Sleep(300 * time.Millisecond)
	after, err := ctl.MappingStatus(ctx, uuid)
	if err != nil {
		return Burst{}, err
	}
	return Burst{Events: n, Drain: last.Sub(t0), Invocations: after.Counters.Invocations - before.Counters.Invocations}, nil
}

// orderDetail is the event detail of the measurements: about 200 bytes.
func orderDetail(id string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"orderId":%q,"customerId":"C-104729","total":129.90,"currency":"EUR","lines":[{"sku":"SKU-1001","qty":2,"price":39.95},{"sku":"SKU-2002","qty":1,"price":50.00}],"channel":"web"}`, id))
}

// orderItem is the application's item written with each event.
func orderItem(pk string) ddbtypes.TransactWriteItem {
	return ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{
		TableName: aws.String(appTable),
		Item: map[string]ddbtypes.AttributeValue{
			"PK":     &ddbtypes.AttributeValueMemberS{Value: pk},
			"SK":     &ddbtypes.AttributeValueMemberS{Value: "ORDER"},
			"status": &ddbtypes.AttributeValueMemberS{Value: "PLACED"},
			"total":  &ddbtypes.AttributeValueMemberN{Value: "129.90"},
		},
	}}
}

// writeEvent commits an order and its event in one transaction and
// records the commit time.
func writeEvent(ctx context.Context, d *deployed, tag string, tr *tracker) (string, error) {
	pk := "ORDER#" + d.mode + "-" + tag
	recs, err := d.writer.Write(ctx, []ddbtypes.TransactWriteItem{orderItem(pk)},
		outbox.Event{Source: d.source, DetailType: "OrderPlaced", Detail: orderDetail(pk)})
	if err != nil {
		return "", fmt.Errorf("writing an event for the %s relay: %w", d.mode, err)
	}
	id := recs[0].EventID
	tr.commit(id, time.Now())
	return id, nil
}

// consume long-polls a subscription queue and records each event's
// receipt, until ctx is done.
func consume(ctx context.Context, q *sqs.Client, url string, tr *tracker) {
	for ctx.Err() == nil {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 20,
		})
		now := time.Now()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		var del []sqstypes.DeleteMessageBatchRequestEntry
		for i, m := range out.Messages {
			var ev struct {
				Detail struct {
					Metadata struct {
						EventID string `json:"eventId"`
					} `json:"metadata"`
				} `json:"detail"`
			}
			if json.Unmarshal([]byte(aws.ToString(m.Body)), &ev) == nil && ev.Detail.Metadata.EventID != "" {
				tr.receive(ev.Detail.Metadata.EventID, now)
			}
			del = append(del, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
		if len(del) > 0 {
			_, _ = q.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(url), Entries: del})
		}
	}
}

// createTable creates an on-demand table keyed by PK and SK (strings),
// with the given pending index, and waits until it is active.
func createTable(ctx context.Context, ddb *dynamodb.Client, name string, t *outbox.Table) error {
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: ddbtypes.BillingModePayPerRequest,
		KeySchema: []ddbtypes.KeySchemaElement{
			{AttributeName: aws.String("PK"), KeyType: ddbtypes.KeyTypeHash},
			{AttributeName: aws.String("SK"), KeyType: ddbtypes.KeyTypeRange},
		},
		AttributeDefinitions: []ddbtypes.AttributeDefinition{
			{AttributeName: aws.String("PK"), AttributeType: ddbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String("SK"), AttributeType: ddbtypes.ScalarAttributeTypeS},
		},
	}
	if t != nil {
		gsi, attrs := t.PendingIndex()
		in.GlobalSecondaryIndexes = []ddbtypes.GlobalSecondaryIndex{gsi}
		for _, a := range attrs {
			if !slices.ContainsFunc(in.AttributeDefinitions, func(b ddbtypes.AttributeDefinition) bool {
				return aws.ToString(a.AttributeName) == aws.ToString(b.AttributeName)
			}) {
				in.AttributeDefinitions = append(in.AttributeDefinitions, a)
			}
		}
	}
	if _, err := ddb.CreateTable(ctx, in); err != nil {
		return fmt.Errorf("creating table %s: %w", name, err)
	}
	w := dynamodb.NewTableExistsWaiter(ddb, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = time.Second
	})
	return w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, time.Minute)
}

// lookPath reports whether a command is on PATH.
func lookPath(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

var errNoTerraform = errors.New("no Terraform CLI")

func terraformCLI(path string) (string, error) {
	if path == "" {
		return "", errNoTerraform
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%w: %w", errNoTerraform, err)
	}
	return filepath.Abs(path)
}

// trimLines keeps the first n lines of s.
func trimLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
