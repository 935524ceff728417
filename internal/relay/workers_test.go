package relay_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// selfInvoker is the Lambda API of a function that invokes itself: an
// asynchronous invocation runs the relay's handler in a goroutine.
type selfInvoker struct {
	relay   *relay.Relay
	wg      sync.WaitGroup
	mu      sync.Mutex
	inputs  []*lambda.InvokeInput
	reports []relay.ReconcileReport
	errs    []error
}

func (s *selfInvoker) Invoke(_ context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	s.mu.Lock()
	s.inputs = append(s.inputs, in)
	s.mu.Unlock()
	s.wg.Go(func() {
		got, err := s.relay.Handle(context.Background(), in.Payload)
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			s.errs = append(s.errs, err)
			return
		}
		s.reports = append(s.reports, got.(relay.ReconcileReport))
	})
	return &lambda.InvokeOutput{StatusCode: 202}, nil
}

// newSelfInvokingRelay is the reconciler of table, with 300 pending events
// and at most two workers, whose function invokes itself through self.
func newSelfInvokingRelay(t *testing.T, table outbox.Table) (*relay.Relay, *relaytest.AWS, *selfInvoker, []outbox.Record) {
	t.Helper()
	cfg := testConfig(table, config.TargetEventBridge, config.ActionMark)
	cfg.ReconcileMaxWorkers, cfg.ReconcileMaxEventsPerSecond = 2, 100000
	fake := relaytest.New(t, table)
	records := relaytest.Records(table, 300, 32)
	fake.PutRecords(records)
	self := &selfInvoker{}
	r, err := relay.New(cfg, relay.Clients{DynamoDB: fake, Target: fake, Lambda: self},
		relay.Options{FunctionName: "orders-reconciler", Now: func() time.Time { return now }, Retry: &noSleep})
	if err != nil {
		t.Fatal(err)
	}
	self.relay = r
	return r, fake, self, records
}

// TestReconcileStartsWorkers: with more than one worker allowed, a
// reconcile run that cannot publish its backlog in one round invokes its
// own function asynchronously with a worker's request, which leases the
// shard the run handed over; every event is published once.
func TestReconcileStartsWorkers(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "outbox", PendingShards: 2}.WithDefaults()
	r, fake, self, records := newSelfInvokingRelay(t, table)
	got, err := r.Handle(context.Background(), json.RawMessage(`{"action":"reconcile","minAgeSeconds":60}`))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { self.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the worker did not finish within 2 minutes")
	}
	rep := got.(relay.ReconcileReport)
	if rep.Workers != 1 || rep.ShardsLeased != 2 || len(self.inputs) != 1 || len(self.errs) != 0 {
		t.Fatalf("run %+v, %d invocations, errors %v; want one worker", rep.Report, len(self.inputs), self.errs)
	}
	in := self.inputs[0]
	var req relay.ReconcileRequest
	if err := json.Unmarshal(in.Payload, &req); err != nil || aws.ToString(in.FunctionName) != "orders-reconciler" ||
		in.InvocationType != types.InvocationTypeEvent || !req.Worker || req.MinAgeSeconds == nil || *req.MinAgeSeconds != 60 {
		t.Errorf("invocation %s of %s (%s): want an Event invocation of the function itself, a worker's request with minAgeSeconds 60",
			in.Payload, aws.ToString(in.FunctionName), in.InvocationType)
	}
	worker := self.reports[0]
	if worker.ShardsLeased < 1 || worker.Workers != 0 || rep.Published+worker.Published != len(records) {
		t.Errorf("worker %+v after run %+v: want a shard at least (the one handed over, after the other if the run had swept it), the rest of the %d events", worker.Report, rep.Report, len(records))
	}
	times := map[string]int{}
	for _, p := range fake.Published() {
		times[p.EventID]++
	}
	for _, rec := range records {
		if times[rec.EventID] != 1 || fake.Status(rec) != string(outbox.StatusPublished) {
			t.Errorf("event %s: published %d times, %s", rec.EventID, times[rec.EventID], fake.Status(rec))
		}
	}
}

// TestReconcileWithoutLeases: a sort key prefix that begins the lease
// items' sort key would let the stream pass their insertions to the relay;
// the reconciler then takes no lease, starts no worker and sweeps every
// shard itself.
func TestReconcileWithoutLeases(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "outbox", PendingShards: 2, SortKeyPrefix: "OUTBOX-"}.WithDefaults()
	r, _, self, records := newSelfInvokingRelay(t, table)
	got, err := r.Reconcile(context.Background(), relay.ReconcileRequest{Action: relay.ActionReconcile})
	if err != nil {
		t.Fatal(err)
	}
	if got.ShardsLeased != 0 || got.Workers != 0 || len(self.inputs) != 0 || got.Published != len(records) || !got.Complete {
		t.Errorf("report %+v, %d invocations; want no lease, no worker, all %d published", got.Report, len(self.inputs), len(records))
	}
}
