package perfreport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	schedtypes "github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

// The recovery goals the report shows its figures against.
const (
	// GoalUnorderedEventsPerSec is the unordered backlog's drain rate.
	GoalUnorderedEventsPerSec = 2000
	// GoalOrderedShare is the ordered drain rate over the unordered one
	// (MinOrderedShare, as for the stream path).
	GoalOrderedShare = MinOrderedShare
	// GoalHotKeyEventsPerSec is the drain rate of the slowest hot key.
	GoalHotKeyEventsPerSec = 100
)

// RecoveryOptions size the recovery measurement. Zero fields take the
// defaults of the report (200,000 events over 1,000 keys, 10 of them hot
// holding half the events).
type RecoveryOptions struct {
	// Events is the backlog left by the outage, Keys the ordering keys it
	// is spread over, HotKeys the keys that hold HotShare of the events.
	Events, Keys, HotKeys int
	HotShare              float64
	// Interval is the reconciler's schedule: the harness fires the
	// pipeline's schedule when the outage ends and every Interval after,
	// as EventBridge Scheduler would. Default 5 minutes, the pipeline's
	// default schedule.
	Interval time.Duration
	// Retention is the stream retention of the stack the backlog is
	// written to (AWS keeps stream records 24 hours; the stack lets it be
	// shorter, so that the outage outlasts it in seconds). Default 5 s.
	Retention time.Duration
	// Deadline bounds the wait for the backlog to drain; default an hour.
	Deadline time.Duration
	// Log receives progress.
	Log io.Writer
}

func (o *RecoveryOptions) defaults() {
	orDefault(&o.Events, 200_000)
	orDefault(&o.Keys, 1000)
	orDefault(&o.HotKeys, 10)
	if o.HotShare <= 0 || o.HotShare > 1 {
		o.HotShare = 0.5
	}
	orDefault(&o.Interval, 5*time.Minute)
	orDefault(&o.Retention, 5*time.Second)
	orDefault(&o.Deadline, time.Hour)
	o.HotKeys = min(o.HotKeys, o.Keys)
	if o.Log == nil {
		o.Log = io.Discard
	}
}

// check refuses options that cannot make a backlog.
func (o RecoveryOptions) check() error {
	if o.Keys > o.Events {
		return fmt.Errorf("recovery keys (%d) exceed recovery events (%d): use at most one key per event", o.Keys, o.Events)
	}
	return nil
}

// Recovery is the recovery measurement: one run per target.
type Recovery struct {
	Options RecoveryOptions
	Runs    []RecoveryRun
}

// RecoveryRun is the drain of one backlog by the reconciler.
type RecoveryRun struct {
	// Name is the target's description, Ordered the relay's mode.
	Name    string
	Ordered bool
	// Rate is the pipeline's reconciler.max_events_per_second, Quota the
	// target's quota it is a share of.
	Rate   int32
	Quota  string
	Events int
	// First and Last are the receipt of the first and the last event, from
	// the end of the outage (the first fire of the schedule).
	First, Last time.Duration
	// Received counts the distinct events received; Duplicates those
	// received again.
	Received, Duplicates int
	// HotKeyRate is the slowest hot key's events over the time from the
	// end of the outage to the receipt of its last event.
	HotKeyRate float64
	// Calls are the pipeline's AWS calls during the recovery, by
	// "service Operation".
	Calls map[string]int64
	// Reconciles and RelayInvocations count the Lambda invocations: the
	// schedule's fires and the stream mapping's.
	Reconciles, RelayInvocations int64
	// Lost counts the events not received by the deadline.
	Lost int
	// FunctionCPU is the CPU time of the pipeline's Lambda processes (its
	// relay's and its reconciler's runs and workers) over the drain,
	// StackCPU that of the local stack and the harness beside them; both
	// zero where the system does not tell.
	FunctionCPU, StackCPU time.Duration
	// Memory is the reconciler function's memory (MB), Instances how many
	// of its invocations publish at once in a recovery: its max_workers
	// unordered, one ordered (one run at a time).
	Memory    int32
	Instances int
}

// PerEvent is cpu over the events received; zero when none was.
func (r RecoveryRun) PerEvent(cpu time.Duration) time.Duration {
	if r.Received == 0 {
		return 0
	}
	return cpu / time.Duration(r.Received)
}

// InstanceEventsPerSecond is the events a second one invocation of the
// reconciler can publish on AWS at its memory's share of a vCPU, if each
// costs the functions' CPU time per event measured here; zero when not
// measured.
func (r RecoveryRun) InstanceEventsPerSecond() float64 {
	per := r.PerEvent(r.FunctionCPU)
	if per <= 0 {
		return 0
	}
	return r.VCPU() / per.Seconds()
}

// VCPU is the share of a vCPU Lambda gives the reconciler at its memory.
func (r RecoveryRun) VCPU() float64 { return float64(r.Memory) / provision.LambdaMBPerVCPU }

// EventsPerSecond is the backlog over the time to its last event.
func (r RecoveryRun) EventsPerSecond() float64 {
	if r.Last <= 0 {
		return 0
	}
	return float64(r.Received) / r.Last.Seconds()
}

// Extrapolate is the time to drain n events at the run's rate after its
// first event.
func (r RecoveryRun) Extrapolate(n int) time.Duration {
	drain := r.Last - r.First
	if r.Received <= 1 || drain <= 0 {
		return 0
	}
	return r.First + time.Duration(float64(drain)*float64(n)/float64(r.Received))
}

// MeasureRecovery drains an outage's backlog on a stack of its own, once
// per target (an EventBridge bus, unordered; an SNS FIFO topic, ordered).
func MeasureRecovery(ctx context.Context, o RecoveryOptions) (*Recovery, error) {
	o.defaults()
	if err := o.check(); err != nil {
		return nil, err
	}
	calls := newCallCounter()
	stack, err := localaws.Start(ctx, localaws.Options{Addr: "127.0.0.1:0", StreamRetention: o.Retention, Logger: slog.New(calls)})
	if err != nil {
		return nil, fmt.Errorf("starting the local AWS stack: %w", err)
	}
	defer func() { _ = stack.Close() }()
	h := &recoveryHarness{o: o, cfg: awsConfig(stack), ctl: control.New(stack.Endpoint(), nil), calls: calls}
	res := &Recovery{Options: o}
	for _, t := range recoveryTargets {
		run, err := h.run(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("recovery to the %s: %w", t.name, err)
		}
		res.Runs = append(res.Runs, run)
	}
	return res, nil
}

// recoveryHarness measures recoveries on one stack.
type recoveryHarness struct {
	o     RecoveryOptions
	cfg   aws.Config
	ctl   *control.Client
	calls *callCounter
}

func (h *recoveryHarness) say(format string, args ...any) {
	_, _ = fmt.Fprintf(h.o.Log, format+"\n", args...)
}

// outage stops the relay's mapping and the reconciler's schedule, as an
// outage of the functions would, and waits until the mapping is disabled.
func (h *recoveryHarness) outage(ctx context.Context, st provision.State) error {
	if err := h.setSchedule(ctx, st, schedtypes.ScheduleStateDisabled); err != nil {
		return err
	}
	lc := lambda.NewFromConfig(h.cfg)
	if _, err := lc.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: aws.String(st.MappingUUID), Enabled: aws.Bool(false)}); err != nil {
		return fmt.Errorf("disabling the stream mapping: %w", err)
	}
	return waitFor(ctx, time.Minute, "the stream mapping to be disabled", func() (bool, error) {
		out, err := lc.GetEventSourceMapping(ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String(st.MappingUUID)})
		return err == nil && aws.ToString(out.State) == "Disabled", err
	})
}

// setSchedule sets the state of the reconciler's schedule, keeping the
// rest of it (UpdateSchedule replaces the whole schedule).
func (h *recoveryHarness) setSchedule(ctx context.Context, st provision.State, state schedtypes.ScheduleState) error {
	sc := scheduler.NewFromConfig(h.cfg)
	group := st.ScheduleGroup
	if group == "" {
		group = "default"
	}
	s, err := sc.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String(st.ScheduleName), GroupName: aws.String(group)})
	if err != nil {
		return fmt.Errorf("reading the reconciler's schedule: %w", err)
	}
	_, err = sc.UpdateSchedule(ctx, &scheduler.UpdateScheduleInput{
		Name: s.Name, GroupName: s.GroupName, ScheduleExpression: s.ScheduleExpression,
		ScheduleExpressionTimezone: s.ScheduleExpressionTimezone, FlexibleTimeWindow: s.FlexibleTimeWindow,
		Target: s.Target, Description: s.Description, StartDate: s.StartDate, EndDate: s.EndDate,
		KmsKeyArn: s.KmsKeyArn, ActionAfterCompletion: s.ActionAfterCompletion, State: state,
	})
	if err != nil {
		return fmt.Errorf("setting the reconciler's schedule %s: %w", state, err)
	}
	return nil
}

// waitTrimmed waits until the table's stream holds no record: the outage
// then outlasted the retention, and only the reconciler can publish the
// backlog.
func (h *recoveryHarness) waitTrimmed(ctx context.Context, streamARN string) error {
	ds := dynamodbstreams.NewFromConfig(h.cfg)
	return waitFor(ctx, h.o.Retention+2*time.Minute, "the stream's retention to pass", func() (bool, error) {
		n, err := streamRecords(ctx, ds, streamARN)
		return err == nil && n == 0, err
	})
}

// streamRecords counts the records readable from the stream's shards
// (up to 1,000 per shard: only none matters).
func streamRecords(ctx context.Context, ds *dynamodbstreams.Client, arn string) (int, error) {
	d, err := ds.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, sh := range d.StreamDescription.Shards {
		it, err := ds.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: sh.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			return 0, err
		}
		out, err := ds.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
		var trimmed *streamtypes.TrimmedDataAccessException
		switch {
		case errors.As(err, &trimmed):
			// The records the iterator pointed at expired after it was
			// taken: count the shard as not yet read, and read it again.
			n++
		case err != nil:
			return 0, err
		default:
			n += len(out.Records)
		}
	}
	return n, nil
}

// waitFor polls cond every 100 ms until it holds, fails or timeout
// passes.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		switch {
		case err != nil:
			return fmt.Errorf("waiting for %s: %w", what, err)
		case ok:
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case time.Now().After(deadline):
			return fmt.Errorf("%s: %w after %s", what, errTimedOut, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var errTimedOut = errors.New("timed out")

// callCounter is a log handler of the stack that counts its requests by
// service and operation: the calls seen from AWS's side, whoever makes
// them.
type callCounter struct {
	mu sync.Mutex
	n  map[string]int64
}

func newCallCounter() *callCounter { return &callCounter{n: map[string]int64{}} }

func (c *callCounter) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (c *callCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "request" {
		return nil
	}
	var svc, op string
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "service":
			svc = a.Value.String()
		case "operation":
			op = a.Value.String()
		}
		return true
	})
	c.mu.Lock()
	c.n[svc+" "+op]++
	c.mu.Unlock()
	return nil
}

func (c *callCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *callCounter) WithGroup(string) slog.Handler      { return c }

// snapshot copies the counts.
func (c *callCounter) snapshot() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// ddbClient is a DynamoDB client of the harness.
func (h *recoveryHarness) ddbClient() *dynamodb.Client { return dynamodb.NewFromConfig(h.cfg) }
