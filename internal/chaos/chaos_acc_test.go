package chaos

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/oklog/ulid/v2"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/tfrun"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

const (
	root = "../.."
	// retention is the stack's stream retention: the mapping is held for
	// longer, so records are trimmed and only the reconciler saves them.
	retention   = 20 * time.Second
	eventSource = "com.example.chaos"
	// idle is how long the consumer must receive nothing, with nothing
	// pending and no invocation running, to call the pipeline quiescent.
	idle = 6 * time.Second
)

// options of a run, from the environment.
type options struct {
	events  int
	writers int
	// writeFor is the shortest time the writers take: they are paced so
	// that the faults' schedule plays out while they write.
	writeFor time.Duration
	// action is the pipeline's published.action, mark or delete.
	action string
	// The relay's settings, scaled with the event count as a user would
	// scale them for throughput. The timeouts also bound the drain: the
	// hold of a killed invocation on its events ends with its timeout.
	batchSize, parallelization, relayTimeout, reconcilerTimeout int
	// killEvery is how many relay invocations the mapping starts between
	// two kills of a running one.
	killEvery int64
	// duplicatePercent caps the duplicates of a short run, as a share of
	// the events written, below what the kills explain (duplicateBound).
	duplicatePercent int
	// pendingShards is the pending index's shard count of the first
	// apply; newPendingShards the lower one the mid-run apply sets.
	pendingShards, newPendingShards int
}

// largeRun is the event count from which a run uses the throughput
// settings: full batches, two concurrent batches per shard, a longer relay
// timeout, and writers paced at sustainedRate.
const largeRun = 10000

// sustainedRate is the pace of the writers, in events per second: what
// the local stack takes on two cores shared with other work, with the
// faults on (make chaos wrote its 50,000 events in 126 s, at about 397 a
// second, with a load average of 4 to 11); writing faster only grows the
// backlog the drain must clear.
const sustainedRate = 400

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive whole number", name, v)
	}
	return n
}

func optionsFromEnv(t *testing.T) options {
	t.Helper()
	o := options{
		events:   envInt(t, "CHAOS_EVENTS", 2000),
		writers:  envInt(t, "CHAOS_WRITERS", 8),
		writeFor: time.Duration(envInt(t, "CHAOS_WRITE_SECONDS", 40)) * time.Second,
		action:   os.Getenv("CHAOS_PUBLISHED_ACTION"),
		// The short form's settings: small batches, so that a couple of
		// thousand events make enough invocations to kill and bisect.
		batchSize: 25, parallelization: 1, relayTimeout: 30, reconcilerTimeout: 60, killEvery: 7, duplicatePercent: 5,
		pendingShards: outbox.DefaultPendingShards, newPendingShards: 4,
	}
	if o.events >= largeRun {
		o.batchSize, o.parallelization, o.killEvery = 100, 2, 10
		o.relayTimeout, o.reconcilerTimeout = 20, 30
		// Shards sized for the backlog, as for any table that holds tens
		// of thousands of pending events: the reconciler's pages are
		// Queries of one shard each.
		o.pendingShards, o.newPendingShards = 64, outbox.DefaultPendingShards
		if os.Getenv("CHAOS_WRITE_SECONDS") == "" {
			o.writeFor = max(o.writeFor, time.Duration(o.events/sustainedRate)*time.Second)
		}
	}
	switch o.action {
	case "":
		o.action = "mark"
	case "mark", "delete":
	default:
		t.Fatalf("CHAOS_PUBLISHED_ACTION=%q: want mark or delete", o.action)
	}
	return o
}

// duplicateBound is the most duplicates kills can explain: one batch's
// worth of events per kill and, in the short run, duplicatePercent of the
// events.
func (o options) duplicateBound(kills, written int) int {
	bound := kills * o.batchSize
	if o.events < largeRun {
		bound = min(bound, written*o.duplicatePercent/100)
	}
	return bound
}

// poisonPerKind is how many poison events of each kind are written.
func (o options) poisonPerKind() int { return max(2, o.events/5000) }

// An ordered run of fewer than shortOrderedRun events raises its per-entry
// publish faults to minShortOrderedEntryFaultRate, so that each fires.
const (
	shortOrderedRun               = 10000
	minShortOrderedEntryFaultRate = 0.1
)

// drainDeadline bounds the wait for quiescence once the faults clear.
func (o options) drainDeadline() time.Duration {
	return 5*time.Minute + time.Duration(o.events)*20*time.Millisecond
}

// outputs of testdata/main.tf.
type outputs struct {
	pipelineAttributes `json:"pipeline"`
	ConsumerQueueURL   string `json:"consumer_queue_url"`
}

// pipelineAttributes are the attributes of the pipeline under test that the
// suite reads, from its output pipeline.
type pipelineAttributes struct {
	TableName         string `json:"table_name"`
	StreamARN         string `json:"stream_arn"`
	RelayFunctionName string `json:"relay_function_name"`
	MappingUUID       string `json:"event_source_mapping_uuid"`
	DeadLetterURL     string `json:"dead_letter_queue_url"`
	ReconcilerARN     string `json:"reconciler_function_arn"`
	ScheduleARN       string `json:"schedule_arn"`
	TargetARN         string `json:"target_arn"`
	Writer            struct {
		ClaimBucket string `json:"claim_bucket"`
	} `json:"writer"`
}

// reconcilerName is the reconciler function's name, from its ARN.
func (o outputs) reconcilerName() string {
	return o.ReconcilerARN[strings.LastIndex(o.ReconcilerARN, ":")+1:]
}

// schedule returns the group and name of the reconciler's schedule, from
// its ARN (arn:aws:scheduler:<region>:<account>:schedule/<group>/<name>).
func (o outputs) schedule() (group, name string) {
	parts := strings.Split(o.ScheduleARN, "/")
	if len(parts) < 3 {
		return "", o.ScheduleARN
	}
	return parts[len(parts)-2], parts[len(parts)-1]
}

// run is one chaos run: the stack, the deployment and what it measures.
type run struct {
	t    *testing.T
	o    options
	kind chaosTarget
	ctl  *control.Client
	ddb  *dynamodb.Client
	sqs  *sqs.Client
	iam  *iam.Client
	logs *cloudwatchlogs.Client
	// pipelineName is the name of the pipeline under test.
	pipelineName string
	out          outputs
	// table is the outbox table; the record contract's prefix and shard
	// count are those of contract, which changes mid-run.
	table    outbox.Table
	contract *contractChange
	tally    *Tally
	// claims is the claim-check run's part (claimcheck_acc_test.go); nil
	// in TestChaos.
	claims *claimRun
	// ordered is what an ordered run counts; nil for another run.
	ordered *orderedRun

	// Counted by the writers, the injectors and the drain.
	writeRetries, kills, reconcilerKills, fires, fired, fireSkips atomic.Int64
	// refusedMidRun counts the publish entries refused by entry faults
	// removed mid-run, which the final fault list no longer shows.
	refusedMidRun atomic.Int64
	// killLog is every kill, for the duplicates' causes.
	killMu  sync.Mutex
	killLog []killAt
	backgroundErrors
}

// backgroundErrors collects the first errors of background goroutines.
type backgroundErrors struct {
	errMu sync.Mutex
	errs  []error
}

func (b *backgroundErrors) fail(err error) {
	b.errMu.Lock()
	defer b.errMu.Unlock()
	if len(b.errs) < 10 {
		b.errs = append(b.errs, err)
	}
}

func (b *backgroundErrors) failures() error {
	b.errMu.Lock()
	defer b.errMu.Unlock()
	return errors.Join(b.errs...)
}

// clientConfig is the stack's SDK configuration with a retryer that keeps
// retrying throttling without a client-side retry quota: the faults are
// meant to reach the code under test, not to exhaust the test's clients.
func clientConfig(stack *localaws.Stack) aws.Config {
	return patient(localawstest.Config(stack))
}

// patient gives cfg clientConfig's retryer: throttling retried, with no
// client-side retry quota.
func patient(cfg aws.Config) aws.Config {
	cfg.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 10
			o.MaxBackoff = 2 * time.Second
			o.RateLimiter = ratelimit.None
		})
	}
	return cfg
}

// TestChaos applies a pipeline and a subscription through Terraform, on the
// kind of target CHAOS_TARGET names (chaosTargets), writes events while
// faults are injected, then checks that every committed event reached the
// consumer and that every poison event is FAILED.
func TestChaos(t *testing.T) { runChaos(t, targetFromEnv(t), nil) }

// runChaos is the run of TestChaos on kind and, with claims, of
// TestChaosClaimCheck.
func runChaos(t *testing.T, kind chaosTarget, claims *claimPlan) {
	tf := acctest.TerraformCLI(t, root)
	o := optionsFromEnv(t)
	claims.tune(&o)
	budget := 15*time.Minute + o.writeFor + o.drainDeadline() + time.Duration(o.events)*10*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), budget)
	defer cancel()

	stack := localawstest.Start(t, func(so *localaws.Options) {
		so.StreamRetention = retention
		so.StreamShards = streamShards
		so.StreamShardLifetime = shardLifetime
		// The collector target cmd/localaws runs with: the stack holds
		// every item in memory, and Go's default target spends a fifth
		// of the run's CPU marking it. (The claim-check run keeps Go's
		// default: its objects would make that five times a heap of
		// gigabytes.)
		if claims == nil {
			so.GCPercent = 400
		}
	})
	claims.useClock(stack)
	ctl := localawstest.Control(stack)
	cfg := clientConfig(stack)

	// Apply the configuration with the real CLI and the provider built
	// from this checkout.
	applyStart := time.Now()
	work := t.TempDir()
	src, err := tfrun.Stage(".", filepath.Join(work, "src"), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := tfrun.Setup(ctx, tfrun.Options{Terraform: tf, Module: root, Dir: filepath.Join(work, "tf")})
	if err != nil {
		t.Fatal(err)
	}
	tfr := inst.Runner(filepath.Join(src, "testdata"), tfrun.AWSEnv(stack.Endpoint(), stack.Options().Region))
	vars := []tfrun.Var{
		{Name: "published_action", Value: o.action},
		{Name: "relay_batch_size", Value: strconv.Itoa(o.batchSize)},
		{Name: "relay_parallelization_factor", Value: strconv.Itoa(o.parallelization)},
		{Name: "relay_timeout", Value: strconv.Itoa(o.relayTimeout)},
		{Name: "reconciler_timeout", Value: strconv.Itoa(o.reconcilerTimeout)},
		{Name: "pending_shards", Value: strconv.Itoa(o.pendingShards)},
		{Name: "ordering_enabled", Value: strconv.FormatBool(kind.ordered)},
	}
	vars = append(vars, claims.vars()...)
	if kind.prepare != nil {
		given, err := kind.prepare(ctx, cfg, "chaos")
		if err != nil {
			t.Fatal(err)
		}
		vars = append(vars, given...)
	}
	t.Logf("target %s; %d events from %d writers over at least %s; relay batch_size=%d parallelization_factor=%d timeout=%ds; reconciler timeout=%ds; a kill every %d relay invocations",
		kind.name, o.events, o.writers, o.writeFor, o.batchSize, o.parallelization, o.relayTimeout, o.reconcilerTimeout, o.killEvery)
	if err := tfr.Init(ctx); err != nil {
		t.Fatal(err)
	}
	applied := false
	t.Cleanup(func() {
		if !applied {
			return
		}
		dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer dcancel()
		if err := ctl.ClearFaults(dctx); err != nil {
			t.Errorf("clearing the faults before destroying: %v", err)
		}
		if err := tfr.Destroy(dctx, vars...); err != nil {
			t.Errorf("destroying: %v", err)
		}
	})
	applyErr := tfr.Apply(ctx, vars...)
	applied = true
	if applyErr != nil {
		t.Fatal(applyErr)
	}
	raw, err := tfr.Output(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	r := &run{
		t: t, o: o, kind: kind, ctl: ctl, tally: NewTally(), pipelineName: "chaos", ordered: kind.newOrderedRun(),
		ddb: dynamodb.NewFromConfig(cfg), sqs: sqs.NewFromConfig(cfg), iam: iam.NewFromConfig(cfg), logs: cloudwatchlogs.NewFromConfig(cfg),
	}
	if err := json.Unmarshal(b, &r.out); err != nil {
		t.Fatalf("decoding the outputs: %v", err)
	}
	if r.out.TableName == "" || r.out.StreamARN == "" || r.out.MappingUUID == "" || r.out.ConsumerQueueURL == "" || r.out.ScheduleARN == "" || r.out.ReconcilerARN == "" {
		t.Fatalf("outputs = %+v", r.out)
	}
	t.Logf("applied in %s: %+v", time.Since(applyStart).Round(time.Second), r.out)
	r.table = outbox.Table{Name: r.out.TableName, Layout: outbox.LayoutShared, PendingShards: o.pendingShards}.WithDefaults()
	if r.claims, err = claims.start(ctx, r, cfg); err != nil {
		t.Fatal(err)
	}
	if r.contract, err = newContractChange(r.ddb, r.table, o.newPendingShards, append(kind.writerOptions(), r.claims.writerOptions()...)...); err != nil {
		t.Fatal(err)
	}
	changeContract := func(ctx context.Context) error {
		changed := append(slices.Clone(vars), r.contract.vars()...)
		if err := tfr.Apply(ctx, changed...); err != nil {
			return err
		}
		vars = changed
		return nil
	}

	// The stream's shards are watched until the pipeline is quiescent.
	shards := &shardWatch{streams: dynamodbstreams.NewFromConfig(cfg), streamARN: r.out.StreamARN}
	stopWatch := make(chan struct{})
	var watching sync.WaitGroup
	watching.Go(func() {
		if err := shards.watch(ctx, stopWatch, 2*time.Second); err != nil && ctx.Err() == nil {
			r.fail(err)
		}
	})
	defer func() {
		select {
		case <-stopWatch:
		default:
			close(stopWatch)
		}
		watching.Wait()
	}()

	// The consumer runs until the pipeline is quiescent.
	consumeCtx, stopConsumers := context.WithCancel(ctx)
	var consumers sync.WaitGroup
	for range 3 {
		consumers.Go(func() { r.consume(consumeCtx) })
	}
	defer func() { stopConsumers(); consumers.Wait() }()

	// Progress, for long runs.
	progressDone := make(chan struct{})
	var progress sync.WaitGroup
	progress.Go(func() { r.progress(ctx, progressDone) })
	defer func() { close(progressDone); progress.Wait() }()

	// Writers, poison and faults, together.
	start := time.Now()
	writersDone := make(chan struct{})
	var writers sync.WaitGroup
	var next atomic.Int64
	write := r.write
	if r.ordered != nil {
		write = r.writeOrdered
	}
	for i := range o.writers {
		writers.Go(func() { write(ctx, i, start, &next) })
	}
	writers.Go(func() { r.writePoison(ctx, start) })
	writers.Go(func() { r.contract.run(ctx, r, start, changeContract) })
	writers.Go(func() { r.claims.writeOrphans(ctx, r, start) })
	var wroteIn time.Duration
	go func() { writers.Wait(); wroteIn = time.Since(start); close(writersDone) }()

	faults := r.chaos(ctx, start, writersDone)
	written, _ := r.tally.Progress()
	t.Logf("wrote %d events and %d poison events in %s (%d write retries); faults held %s",
		written, len(r.tally.PoisonIDs()), wroteIn.Round(time.Second), r.writeRetries.Load(), time.Since(start).Round(time.Second))

	// Every fault must have happened, or the run proves nothing.
	var notFired []string
	for _, f := range faults {
		if f.Fired == 0 {
			notFired = append(notFired, fmt.Sprintf("%s %s %s (entry %v)", f.Service, f.Operation, f.Code, f.Entry))
		}
	}
	if len(notFired) > 0 {
		t.Errorf("faults that never fired: %s", strings.Join(notFired, "; "))
	}
	if r.kills.Load() == 0 {
		t.Error("no relay process was killed in the middle of an invocation")
	}
	if r.reconcilerKills.Load() == 0 {
		t.Error("no reconciler process was killed in the middle of an invocation")
	}
	if err := ctl.ClearFaults(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.recount(ctx); err != nil {
		t.Fatal(err)
	}
	cleared := time.Now()
	if _, err := ctl.ResumeMapping(ctx, r.out.MappingUUID); err != nil {
		t.Fatal(err)
	}
	ms, err := ctl.MappingStatus(ctx, r.out.MappingUUID)
	if err != nil {
		t.Fatal(err)
	}
	if ms.Counters.RecordsTrimmed == 0 {
		t.Errorf("the mapping never met trimmed records; the pause did not outlast the stream retention: %+v", ms.Counters)
	}
	if r.fires.Load() == 0 || r.fired.Load() == 0 {
		t.Errorf("the reconciler's schedule was fired %d times, invoking it %d times", r.fires.Load(), r.fired.Load())
	}

	quiet, drainErr := r.drain(ctx, cleared)
	stopConsumers()
	consumers.Wait()
	close(stopWatch)
	watching.Wait()

	res := r.tally.Result()
	res.Target, res.FIFO = kind.name, kind.fifo
	r.ordered.fill(t, &res)
	res.Drain = quiet.Sub(cleared)
	failed, pending, err := r.settled(ctx)
	if err != nil {
		t.Fatal(err)
	}
	poison := r.tally.PoisonIDs()
	for id, reason := range failed {
		if _, ok := poison[id]; ok {
			res.FailedPoison++
			delete(poison, id)
			continue
		}
		res.Stranded++
		t.Logf("event %s is FAILED (%s) but is not a poison event", id, reason)
	}
	res.Stranded += pending
	res.Kills = int(r.kills.Load() + r.reconcilerKills.Load())
	res.DuplicateBound = o.duplicateBound(res.Kills, res.Written)
	if res.DLQ, err = r.queueDepth(ctx, r.out.DeadLetterURL); err != nil {
		t.Fatal(err)
	}
	line := res.Line()
	t.Log(line)
	fmt.Println(line)
	ms, err = ctl.MappingStatus(ctx, r.out.MappingUUID)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mapping counters: %+v", ms.Counters)
	ro := shards.result(ms)
	t.Logf("stream: %s", ro)
	if err := ro.check(); err != nil {
		t.Error(err)
	}
	// A kill comes within the invocation that published: within the
	// function's timeout (testdata/main.tf) of the first reception.
	near, repeats := r.explainDuplicates(ctx, start, map[string]time.Duration{
		r.out.RelayFunctionName: time.Duration(o.relayTimeout) * time.Second, r.out.reconcilerName(): time.Duration(o.reconcilerTimeout) * time.Second,
	})
	t.Logf("duplicates: %d repeats, %d of events first received near a kill; kills=%d bound=%d", repeats, near, res.Kills, res.DuplicateBound)
	if err := r.deduplication(ctx, faults, res.Written); err != nil {
		t.Error(err)
	}
	t.Log(r.contract)
	if err := r.contract.check(); err != nil {
		t.Error(err)
	}
	t.Logf("kills=%d reconciler_kills=%d reconciler_fires=%d fires_skipped_while_running=%d write_retries=%d",
		r.kills.Load(), r.reconcilerKills.Load(), r.fires.Load(), r.fireSkips.Load(), r.writeRetries.Load())

	if drainErr != nil {
		t.Error(drainErr)
	}
	if err := r.failures(); err != nil {
		t.Errorf("background errors: %v", err)
	}
	if err := res.Check(); err != nil {
		t.Error(err)
		r.explainLost(ctx)
	}
	for id := range poison {
		t.Errorf("poison event %s is not FAILED", id)
	}
	r.claims.finish(ctx, r, faults)
}

// progress logs how many events were written and delivered every 30
// seconds until done.
func (r *run) progress(ctx context.Context, done <-chan struct{}) {
	start := time.Now()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-time.After(30 * time.Second):
		}
		written, delivered := r.tally.Progress()
		line := fmt.Sprintf("progress after %s: written=%d delivered=%d", time.Since(start).Round(time.Second), written, delivered)
		// Where the time goes: the mapping's work and the functions'
		// processes, when the stack answers.
		if ms, err := r.ctl.MappingStatus(ctx, r.out.MappingUUID); err == nil {
			c := ms.Counters
			line += fmt.Sprintf(" mapping{read=%d invocations=%d errors=%d bisects=%d succeeded=%d trimmed=%d dead_lettered=%d}",
				c.RecordsRead, c.Invocations, c.FunctionErrors, c.Bisects, c.RecordsSucceeded, c.RecordsTrimmed, c.OnFailureSent)
		}
		for _, fn := range []string{r.out.RelayFunctionName, r.out.reconcilerName()} {
			if in, err := r.ctl.LambdaInstances(ctx, fn); err == nil {
				line += fmt.Sprintf(" %s{busy=%d live=%d}", fn, in.Busy, in.Live)
			}
		}
		r.t.Log(line)
	}
}

// write is one writer: it takes the next event number, waits for its turn
// in the paced schedule, and commits an order with its event.
func (r *run) write(ctx context.Context, writer int, start time.Time, next *atomic.Int64) {
	for ctx.Err() == nil {
		n := next.Add(1) - 1
		if n >= int64(r.o.events) {
			return
		}
		if !r.turn(ctx, start, n) {
			return
		}
		id := newID()
		pk := fmt.Sprintf("ORDER#%d-%06d", writer, n)
		order := ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{
			TableName: aws.String(r.table.Name),
			Item: map[string]ddbtypes.AttributeValue{
				r.table.PartitionKey: &ddbtypes.AttributeValueMemberS{Value: pk},
				r.table.SortKey:      &ddbtypes.AttributeValueMemberS{Value: "ORDER"},
				"total":              &ddbtypes.AttributeValueMemberN{Value: strconv.FormatInt(n%997, 10)},
			},
			ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
			ExpressionAttributeNames: map[string]string{"#pk": r.table.PartitionKey},
		}}
		ev := outbox.Event{
			ID: id, PartitionKey: pk, Source: eventSource, DetailType: "OrderPlaced",
			Detail: json.RawMessage(fmt.Sprintf(`{"orderId":%q,"n":%d}`, pk, n)),
		}
		if r.claims != nil {
			ev.Detail = r.claims.data(id, n)
		}
		c := r.contract.current.Load()
		committed := r.commit(ctx, pk, c.table.SortKeyFor(id), func() error {
			_, err := c.w.Write(ctx, []ddbtypes.TransactWriteItem{order}, ev)
			return err
		})
		if committed {
			r.tally.Written(id)
			r.contract.committed(c)
			r.claims.committed(id)
		}
	}
}

// turn waits for event n's turn in the paced schedule, and reports whether
// it came. The last quarter of the events also waits for the new contract,
// so that both are written whatever the apply takes.
func (r *run) turn(ctx context.Context, start time.Time, n int64) bool {
	if n >= int64(r.o.events)*3/4 {
		select {
		case <-r.contract.switched:
		case <-ctx.Done():
			return false
		}
	}
	return sleepUntil(ctx, start.Add(time.Duration(n)*r.o.writeFor/time.Duration(r.o.events)))
}

// commit runs a write until it commits, up to 5 attempts. A failed attempt
// may still have committed (a lost response), so the event's item is read
// back before retrying; only a committed event counts.
func (r *run) commit(ctx context.Context, pk, sk string, write func() error) bool {
	for attempt := 1; ; attempt++ {
		err := write()
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		exists, gerr := r.exists(ctx, pk, sk)
		if gerr != nil {
			r.fail(fmt.Errorf("reading back %s %s after %w: %w", pk, sk, err, gerr))
			return false
		}
		if exists {
			return true
		}
		if attempt == 5 {
			r.fail(fmt.Errorf("writing %s %s: %w", pk, sk, err))
			return false
		}
		r.writeRetries.Add(1)
	}
}

func (r *run) exists(ctx context.Context, pk, sk string) (bool, error) {
	out, err := r.ddb.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(r.table.Name), ConsistentRead: aws.Bool(true),
		Key: map[string]ddbtypes.AttributeValue{
			r.table.PartitionKey: &ddbtypes.AttributeValueMemberS{Value: pk},
			r.table.SortKey:      &ddbtypes.AttributeValueMemberS{Value: sk},
		},
	})
	if err != nil {
		return false, err
	}
	return len(out.Item) > 0, nil
}

// Kinds of poison events: items the Writer would refuse, written raw.
var poisonKinds = []string{"oversize", "not-json", "no-source"}

// writePoison writes the poison events, spread over the writing time,
// with OUTBOX# sort keys and pending-index keys like any event, bypassing
// the Writer's validation: an oversize detail (over 256 KB, the item under
// 400 KB; on a target that takes more than an item holds, a detail that is
// not an object instead: oversizeDetail) with its order in a transaction, a detail that is not JSON with
// PutItem, and an item without a source in a transaction. On an ordered
// run each is its key's first ordered event and starts the key's sequence
// in the same transaction, so that the one not in JSON is written with it
// instead of with PutItem.
func (r *run) writePoison(ctx context.Context, start time.Time) {
	total := r.o.poisonPerKind() * len(poisonKinds)
	for i := range total {
		kind := poisonKinds[i%len(poisonKinds)]
		if !sleepUntil(ctx, start.Add(time.Duration(2*i+1)*r.o.writeFor/time.Duration(2*total))) {
			return
		}
		id := newID()
		pk := fmt.Sprintf("ORDER#poison-%03d", i)
		c := r.contract.current.Load()
		// The event's Put and, from a writer of ordered events, the action
		// that starts its key's sequence.
		actions, _, err := c.w.ActionsAfter(map[string]int64{pk: 0}, nil,
			outbox.Event{ID: id, PartitionKey: pk, Source: eventSource, DetailType: "OrderPlaced", Detail: json.RawMessage(`{}`)})
		if err != nil {
			r.fail(err)
			return
		}
		put, sequence := actions[0], actions[1:]
		item := put.Put.Item
		order := ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{
			TableName: aws.String(r.table.Name),
			Item: map[string]ddbtypes.AttributeValue{
				r.table.PartitionKey: &ddbtypes.AttributeValueMemberS{Value: pk},
				r.table.SortKey:      &ddbtypes.AttributeValueMemberS{Value: "ORDER"},
			},
		}}
		var write func() error
		switch kind {
		case "oversize":
			item[outbox.AttrDetail] = &ddbtypes.AttributeValueMemberS{Value: r.kind.oversizeDetail()}
			write = func() error {
				_, err := r.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: append([]ddbtypes.TransactWriteItem{order, put}, sequence...)})
				return err
			}
		case "not-json":
			item[outbox.AttrDetail] = &ddbtypes.AttributeValueMemberS{Value: `orderId=` + pk + ` {not json`}
			write = func() error {
				if len(sequence) > 0 {
					_, err := r.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: append([]ddbtypes.TransactWriteItem{put}, sequence...)})
					return err
				}
				_, err := r.ddb.PutItem(ctx, &dynamodb.PutItemInput{
					TableName: put.Put.TableName, Item: item,
					ConditionExpression: put.Put.ConditionExpression, ExpressionAttributeNames: put.Put.ExpressionAttributeNames,
				})
				return err
			}
		default:
			delete(item, outbox.AttrSource)
			write = func() error {
				_, err := r.ddb.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: append([]ddbtypes.TransactWriteItem{order, put}, sequence...)})
				return err
			}
		}
		if r.commit(ctx, pk, c.table.SortKeyFor(id), write) {
			r.tally.Poison(id)
		}
	}
}

// dynamoDBThrottles throttle the relay's marks, and the writers'
// transactions now and then, so that they retry.
var dynamoDBThrottles = []control.FaultRule{
	{Service: "dynamodb", Operation: "UpdateItem", Code: "ProvisionedThroughputExceededException", Rate: 0.08, Message: "chaos: throughput exceeded"},
	{Service: "dynamodb", Operation: "UpdateItem", Code: "ThrottlingException", Rate: 0.03, Message: "chaos: throttled"},
	{Service: "dynamodb", Operation: "TransactWriteItems", Code: "ThrottlingException", Rate: 0.02, Message: "chaos: throttled"},
}

// chaos injects the faults from start until the writers are done, the
// mapping has been held past the stream's retention at least once, with a
// spell of faults after each resume, and the environment's faults, from
// the first resume, have been played. It returns the fault rules as they
// stand before clearing, with how often each fired.
func (r *run) chaos(ctx context.Context, start time.Time, writersDone <-chan struct{}) []control.FaultRule {
	// The publish call: entries fail with retryable codes or for the
	// environment, calls are throttled or fail outright; DynamoDB
	// throttles.
	rules := r.kind.rules()
	if r.kind.ordered && r.o.events < shortOrderedRun {
		for i, rule := range rules {
			if rule.Entry && rule.Operation == r.kind.operation {
				// While the faults hold, most events of a short ordered run
				// wait behind an earlier one of their key, and the stream
				// path publishes a few hundred entries: at 2 % a fault
				// may never fire (checked below).
				rules[i].Rate = max(rule.Rate, minShortOrderedEntryFaultRate)
			}
		}
	}
	rules = append(rules, dynamoDBThrottles...)
	rules = append(rules, r.claims.faults()...)
	if r.o.action == "delete" {
		rules = append(rules, control.FaultRule{Service: "dynamodb", Operation: "BatchWriteItem", Code: "ProvisionedThroughputExceededException", Rate: 0.1, Message: "chaos: throughput exceeded"})
	}
	for _, rule := range rules {
		if _, err := r.ctl.AddFault(ctx, rule); err != nil {
			r.fail(fmt.Errorf("adding fault %s %s: %w", rule.Operation, rule.Code, err))
		}
	}

	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Go(func() { r.killer(ctx, stop) })
	resumed := make(chan struct{})
	bg.Go(func() {
		select {
		case <-resumed:
		case <-stop:
			return
		}
		r.fireLoop(ctx, stop, 4*time.Second)
	})
	environmentDone := make(chan struct{})
	go func() {
		defer close(environmentDone)
		// The spells wait for the record contract's apply too, which
		// would otherwise put the relay's policy back in their midst.
		for _, ch := range []<-chan struct{}{resumed, r.contract.switched} {
			select {
			case <-ch:
			case <-ctx.Done():
				return
			}
		}
		r.environmentChaos(ctx, time.Now())
	}()

	// Hold the mapping past the retention, resume, let the faults work on
	// the backlog; again while the writers write.
	sleepUntil(ctx, start.Add(2*time.Second))
	firstResume := true
	for ctx.Err() == nil {
		if _, err := r.ctl.PauseMapping(ctx, r.out.MappingUUID); err != nil {
			r.fail(fmt.Errorf("pausing the mapping: %w", err))
			break
		}
		sleepUntil(ctx, time.Now().Add(retention+10*time.Second))
		if _, err := r.ctl.ResumeMapping(ctx, r.out.MappingUUID); err != nil {
			r.fail(fmt.Errorf("resuming the mapping: %w", err))
			break
		}
		if firstResume {
			close(resumed)
			firstResume = false
		}
		spell := time.After(15 * time.Second)
		cycle := time.After(30 * time.Second)
		select {
		case <-spell:
		case <-ctx.Done():
		}
		select {
		case <-writersDone:
		case <-cycle:
			continue
		case <-ctx.Done():
		}
		break
	}
	if firstResume {
		close(resumed)
	}
	<-writersDone
	<-environmentDone
	faults, err := r.ctl.Faults(ctx)
	if err != nil {
		r.fail(err)
	}
	close(stop)
	bg.Wait()
	return faults
}

// killer kills processes in the middle of their invocations, paced by
// progress rather than by the clock: a running relay invocation once every
// killEvery invocations the mapping starts, and a running reconciler
// invocation once every third invocation the suite fires. A kill is sent
// only while an invocation runs: one sent with none running is armed for
// the next, which could come after the faults clear.
func (r *run) killer(ctx context.Context, stop <-chan struct{}) {
	targets := []*killTarget{
		{fn: r.out.RelayFunctionName, every: r.o.killEvery, kills: &r.kills, next: 1,
			progress: func(mappingInvocations int64) int64 { return mappingInvocations }},
		{fn: r.out.reconcilerName(), every: 3, kills: &r.reconcilerKills, next: 1,
			progress: func(int64) int64 { return r.fired.Load() }},
	}
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-poll.C:
		}
		ms, err := r.ctl.MappingStatus(ctx, r.out.MappingUUID)
		if err != nil {
			r.fail(fmt.Errorf("reading the mapping's counters: %w", err))
			return
		}
		for _, k := range targets {
			if err := r.killPaced(ctx, k, k.progress(ms.Counters.Invocations)); err != nil {
				r.fail(err)
				return
			}
		}
	}
}

// killTarget is a function the killer kills once every `every` steps of its
// progress counter.
type killTarget struct {
	fn string
	// progress is the target's counter, given the mapping's invocations.
	progress func(mappingInvocations int64) int64
	every    int64
	kills    *atomic.Int64
	// next is the progress from which the next kill is due.
	next int64
}

// killPaced kills a running process of k once its progress reaches k.next,
// and counts the kill.
func (r *run) killPaced(ctx context.Context, k *killTarget, progress int64) error {
	if progress < k.next {
		return nil
	}
	killed, err := r.killRunning(ctx, k.fn)
	if err != nil || !killed {
		return err
	}
	k.kills.Add(1)
	r.killed(k.fn)
	k.next = progress + k.every
	return nil
}

// killRunning kills a process of fn if one is running an invocation.
func (r *run) killRunning(ctx context.Context, fn string) (bool, error) {
	in, err := r.ctl.LambdaInstances(ctx, fn)
	if err != nil {
		return false, fmt.Errorf("reading %s's instances: %w", fn, err)
	}
	if in.Running == 0 {
		return false, nil
	}
	killed, err := r.ctl.KillLambda(ctx, fn)
	if err != nil {
		return false, fmt.Errorf("killing %s: %w", fn, err)
	}
	return killed, nil
}

// fireLoop fires the reconciler's schedule every interval until stop, like
// a schedule whose interval is shorter than a run under load would, but
// only when no reconciler invocation is running: runs that pile up
// saturate the stack and prove nothing the pipeline's configuration allows
// (pipeline.Spec.Validate rejects a rate shorter than the timeout).
func (r *run) fireLoop(ctx context.Context, stop <-chan struct{}, interval time.Duration) {
	for {
		if err := r.fireIfIdle(ctx); err != nil {
			if ctx.Err() == nil {
				r.fail(err)
			}
			return
		}
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// fireIfIdle fires the reconciler's schedule unless a reconciler
// invocation is in flight.
func (r *run) fireIfIdle(ctx context.Context) error {
	in, err := r.ctl.LambdaInstances(ctx, r.out.reconcilerName())
	if err != nil {
		return fmt.Errorf("reading the reconciler's instances: %w", err)
	}
	if in.Busy > 0 {
		r.fireSkips.Add(1)
		return nil
	}
	r.fire(ctx)
	return nil
}

func (r *run) fire(ctx context.Context) {
	group, name := r.out.schedule()
	res, err := r.ctl.FireSchedule(ctx, group, name)
	if err != nil {
		if ctx.Err() == nil {
			r.fail(fmt.Errorf("firing the reconciler's schedule: %w", err))
		}
		return
	}
	r.fires.Add(1)
	if res.Invoked {
		r.fired.Add(1)
	}
}

// consume receives the subscription's queue, records every event id and
// deletes the messages.
func (r *run) consume(ctx context.Context) {
	for ctx.Err() == nil {
		out, err := r.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(r.out.ConsumerQueueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
		})
		if err != nil {
			if ctx.Err() == nil {
				r.fail(fmt.Errorf("receiving: %w", err))
			}
			return
		}
		now := time.Now()
		// The claim-check run applies the messages with the consumer kit;
		// those it fails stay, to be received again.
		failed := r.claims.apply(ctx, out.Messages)
		var entries []sqstypes.DeleteMessageBatchRequestEntry
		for i, m := range out.Messages {
			if failed[aws.ToString(m.MessageId)] {
				continue
			}
			var ev struct {
				Source string `json:"source"`
				Detail struct {
					Metadata struct {
						EventID     string `json:"eventId"`
						OrderingKey string `json:"orderingKey"`
						Sequence    int64  `json:"sequence"`
					} `json:"metadata"`
				} `json:"detail"`
			}
			body := aws.ToString(m.Body)
			if err := json.Unmarshal([]byte(body), &ev); err != nil || ev.Detail.Metadata.EventID == "" {
				r.fail(fmt.Errorf("the consumer received a message that is not an outbox event: %.300q", body))
			} else {
				r.tally.Received(ev.Detail.Metadata.EventID, now)
				r.ordered.received(ev.Detail.Metadata.EventID, ev.Detail.Metadata.OrderingKey, ev.Detail.Metadata.Sequence)
			}
			entries = append(entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
		if len(entries) > 0 {
			out, err := r.sqs.DeleteMessageBatch(context.WithoutCancel(ctx), &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(r.out.ConsumerQueueURL), Entries: entries})
			if err != nil {
				r.fail(fmt.Errorf("deleting: %w", err))
				return
			}
			if len(out.Failed) > 0 {
				r.fail(fmt.Errorf("deleting: %d entries failed: %s", len(out.Failed), aws.ToString(out.Failed[0].Message)))
			}
		}
	}
}

// drain waits, within a deadline, until nothing is pending in the index, no
// relay or reconciler invocation runs, the mapping holds no records, the
// consumer's queue is empty and the consumer has received nothing for a
// while, firing the reconciler while anything is pending. It returns when
// the pipeline went quiet.
func (r *run) drain(ctx context.Context, cleared time.Time) (time.Time, error) {
	deadline := cleared.Add(r.o.drainDeadline())
	var quietSince time.Time
	var lastFire, lastLog, lastCount time.Time
	var state string
	var pending pendingItems
	for {
		// While events are pending the index is counted every 5 s: each
		// count reads every pending item, and the reconciler, fired as
		// often, is what lowers it then.
		if now := time.Now(); pending.events == 0 || now.Sub(lastCount) >= 5*time.Second {
			var err error
			if pending, err = r.pendingInIndex(ctx); err != nil {
				return now, err
			}
			lastCount = now
		}
		busy, err := r.busy(ctx, pending)
		if err != nil {
			return time.Now(), err
		}
		now := time.Now()
		if busy != "" && now.Sub(lastLog) >= 10*time.Second {
			// What the drain waits for, for runs that drain slowly, and
			// what the reconciler did meanwhile.
			r.t.Logf("drain after %s: %s%s", now.Sub(cleared).Round(time.Second), busy, r.lastReconcile(ctx, latest(lastLog, cleared), pending))
			lastLog = now
		}
		if busy != "" {
			quietSince = time.Time{}
			state = busy
			if strings.HasPrefix(busy, "pending") && now.Sub(lastFire) >= 5*time.Second {
				if err := r.fireIfIdle(ctx); err != nil {
					return now, err
				}
				lastFire = now
			}
		} else if quietSince.IsZero() {
			quietSince = now
		}
		if !quietSince.IsZero() {
			since := quietSince
			if last := r.tally.LastReceive(); last.After(since) {
				since = last
			}
			if now.Sub(since) >= idle {
				return since, nil
			}
			state = "waiting for the consumer to stay idle"
		}
		if now.After(deadline) {
			written, delivered := r.tally.Progress()
			return now, fmt.Errorf("not quiescent %s after the faults cleared: %s; delivered %d of %d", r.o.drainDeadline(), state, delivered, written)
		}
		if !sleepUntil(ctx, now.Add(time.Second)) {
			return time.Now(), ctx.Err()
		}
	}
}

// busy says what keeps the pipeline from being quiescent, with pending
// events in the pending index, or "".
func (r *run) busy(ctx context.Context, pending pendingItems) (string, error) {
	if pending.events > 0 {
		return "pending: " + pending.String(), nil
	}
	for _, fn := range []string{r.out.RelayFunctionName, r.out.reconcilerName()} {
		in, err := r.ctl.LambdaInstances(ctx, fn)
		if err != nil {
			return "", err
		}
		if in.Busy > 0 {
			return fmt.Sprintf("%d invocations of %s in flight", in.Busy, fn), nil
		}
	}
	ms, err := r.ctl.MappingStatus(ctx, r.out.MappingUUID)
	if err != nil {
		return "", err
	}
	for _, sh := range ms.Shards {
		if sh.InFlight > 0 || sh.Pending > 0 {
			return fmt.Sprintf("the mapping holds %d records in flight, %d pending on shard %s", sh.InFlight, sh.Pending, sh.ShardID), nil
		}
	}
	depth, err := r.queueDepth(ctx, r.out.ConsumerQueueURL)
	if err != nil {
		return "", err
	}
	if depth > 0 {
		return fmt.Sprintf("%d messages in the consumer's queue", depth), nil
	}
	return "", nil
}

// latest returns the later of a and b.
func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// reconcileFields are the fields of the reconciler's "reconcile finished"
// log line that the drain shows.
var reconcileFields = []string{"found", "published", "waiting", "blocked", "complete", "continued", "durationMs"}

// lastReconcile returns, as "; N runs, the last: found=... durationMs=...",
// the last report the reconciler logged since from, with the warnings it
// logged, and, when that run published nothing while events wait, the
// keys that hold the most pending events; "" when it logged none or its
// log cannot be read.
func (r *run) lastReconcile(ctx context.Context, from time.Time, pending pendingItems) string {
	out, err := r.logs.FilterLogEvents(ctx, &cloudwatchlogs.FilterLogEventsInput{
		LogGroupName:  aws.String(provision.NamesFor(r.pipelineName).ReconcilerLogGroup),
		FilterPattern: aws.String(`"reconcile finished"`),
		StartTime:     aws.Int64(from.UnixMilli()),
	})
	if err != nil || len(out.Events) == 0 {
		return ""
	}
	var report map[string]any
	if json.Unmarshal([]byte(aws.ToString(out.Events[len(out.Events)-1].Message)), &report) != nil {
		return ""
	}
	fields := make([]string, 0, len(reconcileFields))
	for _, f := range reconcileFields {
		fields = append(fields, fmt.Sprintf("%s=%v", f, report[f]))
	}
	line := fmt.Sprintf("; %d runs, the last: %s%s", len(out.Events), strings.Join(fields, " "), r.reconcilerWarnings(ctx, from))
	if report["published"] == 0.0 && report["waiting"] != 0.0 {
		line += r.fullestKeys(ctx, pending)
	}
	return line
}

// reconcilerWarnings returns, as " (warnings: msg ×n, ...)", the warnings
// and errors the reconciler logged since from, or "".
func (r *run) reconcilerWarnings(ctx context.Context, from time.Time) string {
	out, err := r.logs.FilterLogEvents(ctx, &cloudwatchlogs.FilterLogEventsInput{
		LogGroupName:  aws.String(provision.NamesFor(r.pipelineName).ReconcilerLogGroup),
		FilterPattern: aws.String(`{ $.level = "WARN" || $.level = "ERROR" }`),
		StartTime:     aws.Int64(from.UnixMilli()),
	})
	if err != nil || len(out.Events) == 0 {
		return ""
	}
	counts := map[string]int{}
	for _, e := range out.Events {
		var line struct {
			Msg   string `json:"msg"`
			Error string `json:"error"`
		}
		if json.Unmarshal([]byte(aws.ToString(e.Message)), &line) == nil {
			counts[strings.TrimSpace(line.Msg+" "+line.Error)]++
		}
	}
	var parts []string
	for msg, n := range counts {
		parts = append(parts, fmt.Sprintf("%s ×%d", msg, n))
	}
	slices.Sort(parts)
	return " (warnings: " + strings.Join(parts, "; ") + ")"
}

// fullestKeys returns, as "; fullest keys: ...", the three ordering keys
// with the most pending events, each with its cursor and its lowest
// pending events, each with its shard and its rank there by pending time:
// what a run that publishes nothing fails to find.
func (r *run) fullestKeys(ctx context.Context, pending pendingItems) string {
	keys := slices.Collect(maps.Keys(pending.byKey))
	slices.SortFunc(keys, func(a, b string) int { return len(pending.byKey[b]) - len(pending.byKey[a]) })
	var out []string
	for _, k := range keys[:min(3, len(keys))] {
		events := pending.byKey[k]
		slices.SortFunc(events, func(a, b pendingEvent) int { return cmp.Compare(a.seq, b.seq) })
		got, err := r.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(r.table.Name), Key: r.table.CursorKey(k), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return ""
		}
		c, _ := outbox.ParseCursor(got.Item)
		var lowest []string
		for _, e := range events[:min(3, len(events))] {
			older := 0
			for _, since := range pending.byShard[e.shard] {
				if since < e.since {
					older++
				}
			}
			lowest = append(lowest, fmt.Sprintf("%d (%s, %d of %d by age)", e.seq, e.shard, older+1, len(pending.byShard[e.shard])))
		}
		out = append(out, fmt.Sprintf("%s: %d pending from %s, cursor published=%d blocked=%d started=%d registered=%d",
			k, len(events), strings.Join(lowest, ", "), c.Published, c.Blocked, c.Started, len(c.Waiting)))
	}
	if len(out) == 0 {
		return ""
	}
	return "; fullest keys: " + strings.Join(out, "; ")
}

// pendingItems is what the pending index holds: its events, those a relay
// or reconciler invocation holds (nextAttemptAt ahead), which no other
// invocation publishes before their hold ends, and the ordered events by
// key and the pending times by shard.
type pendingItems struct {
	events, held int
	heldFor      time.Duration // the longest hold left
	maxAttempts  int
	byKey        map[string][]pendingEvent
	byShard      map[string][]int64
}

// pendingEvent is an ordered event in the pending index.
type pendingEvent struct {
	seq, since int64
	shard      string
}

func (p pendingItems) String() string {
	s := fmt.Sprintf("%d events in the index", p.events)
	if p.held > 0 {
		s += fmt.Sprintf(" (%d held, the longest for %s more; attempts up to %d)", p.held, p.heldFor.Round(time.Second), p.maxAttempts)
	}
	return s
}

// pendingInIndex reads the items in every shard of the pending index.
func (r *run) pendingInIndex(ctx context.Context) (pendingItems, error) {
	out := pendingItems{byKey: map[string][]pendingEvent{}, byShard: map[string][]int64{}}
	now := time.Now()
	for shard := range r.contract.pendingShards() {
		q := r.table.PendingQuery(shard, now.Add(24*time.Hour))
		q.ProjectionExpression = aws.String("#next, #attempts, #key, #seq, #since, #shard")
		for name, attr := range map[string]string{"#next": outbox.AttrNextAttemptAt, "#attempts": outbox.AttrAttempts, "#key": outbox.AttrOrderingKey, "#seq": outbox.AttrSequence} {
			q.ExpressionAttributeNames[name] = attr
		}
		p := dynamodb.NewQueryPaginator(r.ddb, q)
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return out, fmt.Errorf("querying the pending index: %w", err)
			}
			for _, item := range page.Items {
				out.count(item, now)
			}
		}
	}
	return out, nil
}

// count adds a pending item, read with its keys, nextAttemptAt and
// attempts.
func (p *pendingItems) count(item map[string]ddbtypes.AttributeValue, now time.Time) {
	p.events++
	number := func(attr string) int64 {
		v, _ := item[attr].(*ddbtypes.AttributeValueMemberN)
		if v == nil {
			return 0
		}
		n, _ := strconv.ParseInt(v.Value, 10, 64)
		return n
	}
	if left := time.UnixMilli(number(outbox.AttrNextAttemptAt)).Sub(now); left > 0 {
		p.held++
		p.heldFor = max(p.heldFor, left)
		p.maxAttempts = max(p.maxAttempts, int(number(outbox.AttrAttempts)))
	}
	key, _ := item[outbox.AttrOrderingKey].(*ddbtypes.AttributeValueMemberS)
	shard, _ := item[outbox.AttrPendingShard].(*ddbtypes.AttributeValueMemberS)
	if key != nil && shard != nil {
		e := pendingEvent{seq: number(outbox.AttrSequence), since: number(outbox.AttrPendingSince), shard: shard.Value}
		p.byKey[key.Value] = append(p.byKey[key.Value], e)
		p.byShard[e.shard] = append(p.byShard[e.shard], e.since)
	}
}

func (r *run) queueDepth(ctx context.Context, url string) (int, error) {
	out, err := r.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{
			sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		},
	})
	if err != nil {
		return 0, fmt.Errorf("reading the attributes of %s: %w", url, err)
	}
	n := 0
	for _, k := range []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible} {
		v, err := strconv.Atoi(out.Attributes[string(k)])
		if err != nil {
			return 0, fmt.Errorf("%s of %s is %q", k, url, out.Attributes[string(k)])
		}
		n += v
	}
	return n, nil
}

// settled scans the table's outbox items, of either record contract: the
// FAILED ones (id → reason) and how many are still PENDING.
func (r *run) settled(ctx context.Context) (failed map[string]string, pending int, err error) {
	failed = map[string]string{}
	values := map[string]ddbtypes.AttributeValue{
		":failed":  &ddbtypes.AttributeValueMemberS{Value: string(outbox.StatusFailed)},
		":pending": &ddbtypes.AttributeValueMemberS{Value: string(outbox.StatusPending)},
	}
	var prefixes []string
	for i, c := range r.contract.all() {
		name := ":prefix" + strconv.Itoa(i)
		values[name] = &ddbtypes.AttributeValueMemberS{Value: c.table.SortKeyPrefix}
		prefixes = append(prefixes, "begins_with(#sk, "+name+")")
	}
	p := dynamodb.NewScanPaginator(r.ddb, &dynamodb.ScanInput{
		TableName:                 aws.String(r.table.Name),
		FilterExpression:          aws.String("(" + strings.Join(prefixes, " OR ") + ") AND #status IN (:failed, :pending)"),
		ExpressionAttributeNames:  map[string]string{"#sk": r.table.SortKey, "#status": outbox.AttrStatus},
		ExpressionAttributeValues: values,
	})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return nil, 0, fmt.Errorf("scanning the table: %w", err)
		}
		for _, item := range out.Items {
			status := acctest.AttrS(item, outbox.AttrStatus)
			if status == string(outbox.StatusPending) {
				pending++
				continue
			}
			id := acctest.AttrS(item, r.table.SortKey)
			for _, c := range r.contract.all() {
				id = strings.TrimPrefix(id, c.table.SortKeyPrefix)
			}
			failed[id] = acctest.AttrS(item, outbox.AttrLastError)
		}
	}
	return failed, pending, nil
}

// explainLost logs the state of a few lost events' items.
func (r *run) explainLost(ctx context.Context) {
	lost := r.tally.Lost(10)
	if len(lost) == 0 {
		return
	}
	r.t.Logf("lost events (first %d): %v", len(lost), lost)
	p := dynamodb.NewScanPaginator(r.ddb, &dynamodb.ScanInput{
		TableName:                 aws.String(r.table.Name),
		FilterExpression:          aws.String("#id IN (" + placeholders(len(lost)) + ")"),
		ExpressionAttributeNames:  map[string]string{"#id": outbox.AttrEventID},
		ExpressionAttributeValues: values(lost),
	})
	for found := 0; found < len(lost) && p.HasMorePages(); {
		out, err := p.NextPage(ctx)
		if err != nil {
			r.t.Logf("reading the lost events' items: %v", err)
			return
		}
		for _, item := range out.Items {
			found++
			r.t.Logf("  %s: status=%s attempts=%s lastError=%q pendingShard=%s",
				acctest.AttrS(item, outbox.AttrEventID), acctest.AttrS(item, outbox.AttrStatus), acctest.AttrN(item, outbox.AttrAttempts),
				acctest.AttrS(item, outbox.AttrLastError), acctest.AttrS(item, outbox.AttrPendingShard))
		}
	}
}

func placeholders(n int) string {
	p := make([]string, n)
	for i := range p {
		p[i] = ":v" + strconv.Itoa(i)
	}
	return strings.Join(p, ", ")
}

func values(ids []string) map[string]ddbtypes.AttributeValue {
	v := make(map[string]ddbtypes.AttributeValue, len(ids))
	for i, id := range ids {
		v[":v"+strconv.Itoa(i)] = &ddbtypes.AttributeValueMemberS{Value: id}
	}
	return v
}

// newID returns a fresh event id.
func newID() string {
	return ulid.Make().String()
}

// sleepUntil waits until t or ctx is done; it reports whether t came.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}
