package perfreport

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/stats"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// deployed is one relay deployed as a pipeline with a subscription.
type deployed struct {
	mode     string
	source   string
	pipeline provision.State
	sub      subscription.State
	writer   *outbox.Writer
}

// appTable is the application's own table of the measurements.
const appTable = "bench-orders"

// appTableSchema is appTable's keys: PK and SK, as an outbox table's in
// the shared layout, without the pending index.
func appTableSchema() outbox.Table {
	return outbox.Table{Name: appTable, NoPendingIndex: true}.WithDefaults()
}

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
	if err := createTable(ctx, ddb, appTableSchema()); err != nil {
		return nil, err
	}
	env := &benchEnv{ctl: control.New(stack.Endpoint(), nil), tr: newTracker()}
	for _, m := range []struct {
		mode    string
		code    provision.RelayCode
		mapping provision.MappingSpec
	}{
		{ModeRelay, relayCode(), provision.MappingSpec{}},
		{ModeNaive, naiveCode(o.Root), provision.MappingSpec{}},
		{ModeCeiling, relayCode(), provision.MappingSpec{BatchSize: CeilingBatchSize, ParallelizationFactor: CeilingParallelization}},
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

func deployRelay(ctx context.Context, cfg aws.Config, ddb *dynamodb.Client, mode string, code provision.RelayCode, mapping provision.MappingSpec) (*deployed, error) {
	spec := provision.Spec{
		Name:         "bench-" + mode,
		Architecture: nativeArch(),
		Mapping:      mapping,
		Reconciler:   provision.ReconcilerSpec{Disabled: true},
	}
	st, err := provision.New(cfg, code).Create(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("creating pipeline %s: %w", spec.Name, err)
	}
	source := "bench." + mode
	sub, err := subscription.New(cfg).Create(ctx, subscription.Spec{
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
		remove, err := ApplyLatencyModel(ctx, e.ctl, model)
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
	remove, err := ApplyLatencyModel(ctx, e.ctl, AWSLatencyModel)
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
