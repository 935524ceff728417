package perfreport

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// recoveryTarget is one target of the recovery measurement.
type recoveryTarget struct {
	name, tag string
	ordered   bool
	// eventsPerSecond is the pipeline's reconciler.max_events_per_second,
	// quota the public statement of the target's quota it stays under.
	eventsPerSecond int32
	quota           string
	// target creates the target and returns the pipeline's settings and
	// the subscription that receives what it publishes.
	target func(ctx context.Context, h *recoveryHarness, tag string) (provision.TargetSpec, subscription.Spec, error)
}

var recoveryTargets = []recoveryTarget{
	{name: "EventBridge bus, unordered", tag: "eventbridge", eventsPerSecond: 5000,
		quota: "half of PutEvents' 10,000 transactions a second in us-east-1 (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-quota.html)", target: func(_ context.Context, _ *recoveryHarness, tag string) (provision.TargetSpec, subscription.Spec, error) {
			return provision.TargetSpec{}, subscription.Spec{Name: "recovery-" + tag + "-sub", Sources: []string{recoverySource(tag)}}, nil
		}},
	{name: "SNS FIFO topic, ordered", tag: "sns-fifo", ordered: true, target: fifoTopic, eventsPerSecond: 2400,
		quota: "80 % of a FIFO topic's 3,000 messages a second in topic scope, the rest left to the stream path (FifoThroughputScope, https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.aws_sns.FifoThroughputScope.html)"},
}

func recoverySource(tag string) string { return "recovery." + tag }

// fifoTopic creates an SNS FIFO topic; its subscription is a FIFO queue.
func fifoTopic(ctx context.Context, h *recoveryHarness, tag string) (provision.TargetSpec, subscription.Spec, error) {
	out, err := sns.NewFromConfig(h.cfg).CreateTopic(ctx, &sns.CreateTopicInput{
		Name: aws.String("recovery-" + tag + ".fifo"), Attributes: map[string]string{"FifoTopic": "true"},
	})
	if err != nil {
		return provision.TargetSpec{}, subscription.Spec{}, fmt.Errorf("creating the FIFO topic: %w", err)
	}
	topic := aws.ToString(out.TopicArn)
	return provision.TargetSpec{Type: targetkind.SNS, TopicARN: topic}, subscription.Spec{Name: "recovery-" + tag + "-sub", TopicARN: topic, Sources: []string{recoverySource(tag)}}, nil
}

// backlog is the events of a run, by key.
type backlog struct {
	ids   []string
	keyOf map[string]int
}

// keyEvents spreads n events over keys: the first hot keys hold share of
// them, the others the rest, as evenly as they divide.
func keyEvents(n, keys, hot int, share float64) []int {
	out := make([]int, keys)
	hotEvents := int(math.Round(float64(n) * share))
	if hot == keys {
		hotEvents = n
	}
	if hot == 0 {
		hotEvents = 0
	}
	spread := func(total, from, to int) {
		for k := from; k < to; k++ {
			out[k] = total / (to - from)
			if k-from < total%(to-from) {
				out[k]++
			}
		}
	}
	if hot > 0 {
		spread(hotEvents, 0, hot)
	}
	if keys > hot {
		spread(n-hotEvents, hot, keys)
	}
	return out
}

// recoveryWriters is the number of writers of the backlog; each writes the
// events of its own keys, so that no two transactions advance one key.
const recoveryWriters = 8

// recoveryTxEvents is the events per transaction: with one sequence item
// per key, within DynamoDB's 100 actions.
const recoveryTxEvents = 48

// writeBacklog commits the backlog while the pipeline is down.
func (h *recoveryHarness) writeBacklog(ctx context.Context, w *outbox.Writer, t recoveryTarget) (backlog, error) {
	perKey := keyEvents(h.o.Events, h.o.Keys, h.o.HotKeys, h.o.HotShare)
	var mu sync.Mutex
	b := backlog{keyOf: make(map[string]int, h.o.Events)}
	var wg sync.WaitGroup
	errs := make(chan error, recoveryWriters)
	for wr := range recoveryWriters {
		wg.Go(func() {
			var batch []outbox.Event
			var keys []int
			flush := func() error {
				if len(batch) == 0 {
					return nil
				}
				recs, err := w.Write(ctx, nil, batch...)
				if err != nil {
					return fmt.Errorf("writing the backlog: %w", err)
				}
				mu.Lock()
				for i, r := range recs {
					b.ids = append(b.ids, r.EventID)
					b.keyOf[r.EventID] = keys[i]
				}
				mu.Unlock()
				batch, keys = batch[:0], keys[:0]
				return nil
			}
			for _, e := range overTheOutage(perKey, wr, recoveryWriters) {
				batch = append(batch, recoveryEvent(t, e.key, e.index))
				keys = append(keys, e.key)
				if len(batch) == recoveryTxEvents {
					if err := flush(); err != nil {
						errs <- err
						return
					}
				}
			}
			if err := flush(); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	return b, <-errs
}

// keyEvent is event index of key.
type keyEvent struct{ key, index int }

// overTheOutage is the events of the writer's keys (key wr, wr+writers,
// ...) in the order a service writes them over an outage: each key's
// events spread over it, event i of a key of n events at (i+0.5)/n of
// it, the keys' events interleaved as their times fall. So the oldest
// events of the backlog are the oldest of every key, as after a real
// outage, not the whole backlog of the keys written first.
func overTheOutage(perKey []int, wr, writers int) []keyEvent {
	var out []keyEvent
	for k := wr; k < len(perKey); k += writers {
		for i := range perKey[k] {
			out = append(out, keyEvent{key: k, index: i})
		}
	}
	at := func(e keyEvent) float64 { return (float64(e.index) + 0.5) / float64(perKey[e.key]) }
	slices.SortStableFunc(out, func(a, b keyEvent) int { return cmp.Compare(at(a), at(b)) })
	return out
}

// recoveryEvent is event i of key k.
func recoveryEvent(t recoveryTarget, k, i int) outbox.Event {
	id := fmt.Sprintf("key-%d-%d", k, i)
	e := outbox.Event{Source: recoverySource(t.tag), DetailType: "OrderPlaced", Detail: orderDetail(id)}
	if t.ordered {
		e.OrderingKey = fmt.Sprintf("key-%d", k)
	}
	return e
}

// run deploys the target's pipeline, leaves it a backlog that only the
// reconciler can publish, ends the outage and times the drain.
func (h *recoveryHarness) run(ctx context.Context, t recoveryTarget) (RecoveryRun, error) {
	h.say("recovery, %s: deploying...", t.name)
	target, subSpec, err := t.target(ctx, h, t.tag)
	if err != nil {
		return RecoveryRun{}, err
	}
	spec := provision.Spec{
		Name: "recovery-" + t.tag, Architecture: nativeArch(), Target: target, Ordered: t.ordered,
		Reconciler: provision.ReconcilerSpec{MinAge: time.Second, MaxEventsPerSecond: t.eventsPerSecond},
	}
	st, err := provision.New(h.cfg, relayCode()).Create(ctx, spec)
	if err != nil {
		return RecoveryRun{}, fmt.Errorf("creating pipeline %s: %w", spec.Name, err)
	}
	sub, err := subscription.New(h.cfg).Create(ctx, subSpec)
	if err != nil {
		return RecoveryRun{}, fmt.Errorf("creating the subscription: %w", err)
	}
	var opts []outbox.WriterOption
	if t.ordered {
		opts = append(opts, outbox.WithOrdering())
	}
	w, err := outbox.NewWriter(h.ddbClient(), spec.OutboxTable(), opts...)
	if err != nil {
		return RecoveryRun{}, err
	}
	if err := h.outage(ctx, st); err != nil {
		return RecoveryRun{}, err
	}
	h.say("  outage: writing %d events over %d keys (%d hot, %.0f %% of the events)...", h.o.Events, h.o.Keys, h.o.HotKeys, 100*h.o.HotShare)
	b, err := h.writeBacklog(ctx, w, t)
	if err != nil {
		return RecoveryRun{}, err
	}
	h.say("  waiting for the stream's retention (%s) to pass...", h.o.Retention)
	if err := h.waitTrimmed(ctx, st.StreamARN); err != nil {
		return RecoveryRun{}, err
	}
	run, err := h.drain(ctx, st, sub.QueueURL, b)
	if err != nil {
		return run, err
	}
	run.Name, run.Ordered, run.Rate, run.Quota = t.name, t.ordered, t.eventsPerSecond, t.quota
	applied := spec.WithDefaults().Reconciler
	run.Memory, run.Instances = applied.Function.MemorySize, int(applied.MaxWorkers)
	if t.ordered {
		run.Instances = 1
	}
	h.say("  %d of %d events in %s (first after %s): %.0f events/s, slowest hot key %.0f events/s, %d duplicates",
		run.Received, run.Events, run.Last.Round(time.Millisecond), run.First.Round(time.Millisecond), run.EventsPerSecond(), run.HotKeyRate, run.Duplicates)
	h.say("  %d reconciler runs, %d relay invocations, calls %v", run.Reconciles, run.RelayInvocations, run.Calls)
	return run, nil
}

// counters are the invocation and call counts at one moment, and the CPU
// time used by this process (the stack and the harness) and by the
// Lambda processes that have ended.
type counters struct {
	calls                map[string]int64
	reconciles, mappings int64
	self, children       time.Duration
	cpu                  bool
}

func (h *recoveryHarness) counters(ctx context.Context, st provision.State) (counters, error) {
	c := counters{calls: h.calls.snapshot()}
	c.self, c.children, c.cpu = processCPU()
	m, err := h.ctl.SchedulerMetrics(ctx)
	if err != nil {
		return c, err
	}
	c.reconciles = m[st.ScheduleARN].Invocations
	ms, err := h.ctl.MappingStatus(ctx, st.MappingUUID)
	c.mappings = ms.Counters.Invocations
	return c, err
}

// drain ends the outage under the AWS latency model: the mapping is
// enabled again and the schedule fired now and every interval, until every
// event of the backlog is received or the deadline passes.
func (h *recoveryHarness) drain(ctx context.Context, st provision.State, queueURL string, b backlog) (RecoveryRun, error) {
	tr := newTracker()
	cctx, stop := context.WithCancel(ctx)
	var consumers sync.WaitGroup
	defer func() { stop(); consumers.Wait() }()
	q := sqs.NewFromConfig(h.cfg)
	for range 8 {
		consumers.Go(func() { consume(cctx, q, queueURL, tr) })
	}
	remove, err := ApplyLatencyModel(ctx, h.ctl, AWSLatencyModel)
	if err != nil {
		return RecoveryRun{}, err
	}
	defer func() { _ = remove() }()
	before, err := h.counters(ctx, st)
	if err != nil {
		return RecoveryRun{}, err
	}
	h.say("  outage over: the schedule fires now and every %s", h.o.Interval)
	t0 := time.Now()
	if _, err := lambda.NewFromConfig(h.cfg).UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: aws.String(st.MappingUUID), Enabled: aws.Bool(true)}); err != nil {
		return RecoveryRun{}, fmt.Errorf("enabling the stream mapping: %w", err)
	}
	fired := make(chan error, 1)
	go func() { fired <- h.fireEvery(cctx, st) }()
	n := len(b.ids)
	done := waitFor(ctx, h.o.Deadline, "the backlog to drain", func() (bool, error) {
		select {
		case err := <-fired:
			return false, err
		default:
		}
		return tr.count() >= n, nil
	})
	if done != nil && !errors.Is(done, errTimedOut) {
		return RecoveryRun{}, done
	}
	time.Sleep(time.Second) // let the last invocations end before reading the counters
	// Their processes end here, so that their CPU time is counted.
	for _, fn := range []string{st.RelayFunctionName, st.ReconcilerFunctionName} {
		if _, err := h.ctl.StopLambda(ctx, fn); err != nil {
			return RecoveryRun{}, fmt.Errorf("stopping %s: %w", fn, err)
		}
	}
	after, err := h.counters(ctx, st)
	if err != nil {
		return RecoveryRun{}, err
	}
	return h.result(t0, tr, b, before, after), nil
}

// fireEvery fires the reconciler's schedule now and every interval, as
// EventBridge Scheduler would, until ctx is done.
func (h *recoveryHarness) fireEvery(ctx context.Context, st provision.State) error {
	t := time.NewTicker(h.o.Interval)
	defer t.Stop()
	for {
		res, err := h.ctl.FireSchedule(ctx, st.ScheduleGroup, st.ScheduleName)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("firing the reconciler's schedule: %w", err)
		}
		if !res.Invoked {
			return fmt.Errorf("the reconciler's schedule did not invoke it: %s %s", res.ErrorCode, res.ErrorMessage)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// result is the run's figures from the receipts and the counters.
func (h *recoveryHarness) result(t0 time.Time, tr *tracker, b backlog, before, after counters) RecoveryRun {
	run := RecoveryRun{Events: len(b.ids), Calls: map[string]int64{},
		Reconciles: after.reconciles - before.reconciles, RelayInvocations: after.mappings - before.mappings}
	if before.cpu && after.cpu {
		run.FunctionCPU, run.StackCPU = after.children-before.children, after.self-before.self
	}
	for k, v := range after.calls {
		if d := v - before.calls[k]; d > 0 && pipelineCall(k) {
			run.Calls[k] = d
		}
	}
	lastOfKey := make([]time.Time, h.o.HotKeys)
	eventsOfKey := make([]int, h.o.HotKeys)
	var first, last time.Time
	tr.mu.Lock()
	for _, id := range b.ids {
		at, ok := tr.received[id]
		if !ok {
			run.Lost++
			continue
		}
		run.Received++
		run.Duplicates += tr.dups[id]
		if first.IsZero() || at.Before(first) {
			first = at
		}
		if at.After(last) {
			last = at
		}
		if k := b.keyOf[id]; k < h.o.HotKeys {
			eventsOfKey[k]++
			if at.After(lastOfKey[k]) {
				lastOfKey[k] = at
			}
		}
	}
	tr.mu.Unlock()
	if run.Received > 0 {
		run.First, run.Last = first.Sub(t0), last.Sub(t0)
	}
	run.HotKeyRate = math.Inf(1)
	for k := range h.o.HotKeys {
		if d := lastOfKey[k].Sub(t0); eventsOfKey[k] > 0 && d > 0 {
			run.HotKeyRate = min(run.HotKeyRate, float64(eventsOfKey[k])/d.Seconds())
		}
	}
	if math.IsInf(run.HotKeyRate, 1) {
		run.HotKeyRate = 0
	}
	return run
}

// pipelineCall reports whether a counted call is one the pipeline's
// functions make: DynamoDB and the targets' publish calls. The harness
// itself makes only SQS calls while it measures, and the targets deliver
// to the queues without calls.
func pipelineCall(key string) bool {
	for _, svc := range []string{"dynamodb ", "events ", "sns "} {
		if len(key) > len(svc) && key[:len(svc)] == svc {
			return true
		}
	}
	return false
}
