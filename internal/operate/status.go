package operate

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
)

// Status is the health of a pipeline.
type Status struct {
	Pipeline   string           `json:"pipeline"`
	Table      string           `json:"table"`
	Target     string           `json:"target"`
	Pending    PendingStatus    `json:"pending"`
	Failed     FailedStatus     `json:"failed"`
	DLQ        QueueStatus      `json:"deadLetterQueue"`
	Mapping    MappingStatus    `json:"mapping"`
	Reconciler ReconcilerStatus `json:"reconciler"`
	// Backlog is the publishing rate and when the pending events will be
	// done.
	Backlog BacklogStatus `json:"backlog"`
	// Regions are the Regions of a multi-Region pipeline; absent for a
	// single-Region one.
	Regions *RegionsStatus `json:"regions,omitempty"`
	// Problems says what is stuck and what to do; empty when healthy.
	Problems []string `json:"problems"`
	// Healthy is true when nothing is stuck.
	Healthy bool `json:"healthy"`
}

// PendingStatus counts pending events by age.
type PendingStatus struct {
	Total            int           `json:"total"`
	Buckets          []AgeBucket   `json:"buckets"`
	OldestAgeSeconds float64       `json:"oldestAgeSeconds"`
	Oldest           time.Duration `json:"-"`
}

// AgeBucket counts the pending events younger than Below (the last bucket
// has no bound).
type AgeBucket struct {
	Label string `json:"label"`
	Count int    `json:"count"`
}

// ageBuckets are the upper bounds of the pending age buckets.
var ageBuckets = []struct {
	label string
	below time.Duration
}{
	{"< 1m", time.Minute}, {"1m-5m", 5 * time.Minute}, {"5m-1h", time.Hour},
	{"1h-24h", 24 * time.Hour}, {">= 24h", 0},
}

// FailedStatus counts FAILED events.
type FailedStatus struct {
	Total      int           `json:"total"`
	Broken     int           `json:"broken"`
	TopReasons []ReasonCount `json:"topReasons"`
	// Keys are the ordering keys whose FAILED events hold later events,
	// the most held first.
	Keys []HeldKey `json:"keys"`
	// brokenEvents are the events that break the record contract, but for
	// those Keys shows holding their key.
	brokenEvents []FailedEvent
}

// HeldKey is an ordering key held by a FAILED event.
type HeldKey struct {
	OrderingKey string `json:"orderingKey"`
	// EventID and Sequence are the key's earliest FAILED event's.
	EventID  string `json:"eventId"`
	Sequence int64  `json:"sequence"`
	// WaitingBehind counts the events of the key written after it.
	WaitingBehind int64 `json:"waitingBehind"`
	// BrokenBecause is why that event's item breaks the record contract;
	// absent when it does not.
	BrokenBecause string `json:"brokenBecause,omitempty"`
}

// heldKeys returns the keys held among events (FailedEvent.HoldsKey), each
// with its earliest FAILED event, the most held first.
func heldKeys(events []FailedEvent) []HeldKey {
	byKey := map[string]HeldKey{}
	for _, e := range events {
		r := e.Record
		if h, ok := byKey[r.OrderingKey]; e.HoldsKey && (!ok || r.Sequence < h.Sequence) {
			byKey[r.OrderingKey] = HeldKey{OrderingKey: r.OrderingKey, EventID: r.EventID, Sequence: r.Sequence, WaitingBehind: e.WaitingBehind, BrokenBecause: e.Broken}
		}
	}
	keys := make([]HeldKey, 0, len(byKey))
	for _, h := range byKey {
		keys = append(keys, h)
	}
	slices.SortFunc(keys, func(a, b HeldKey) int {
		return cmp.Or(cmp.Compare(b.WaitingBehind, a.WaitingBehind), cmp.Compare(a.OrderingKey, b.OrderingKey))
	})
	return keys
}

// QueueStatus is the dead-letter queue's depth.
type QueueStatus struct {
	Name     string `json:"name"`
	Messages int    `json:"messages"`
	InFlight int    `json:"inFlight"`
	// Missing is set when the queue does not exist.
	Missing bool `json:"missing,omitempty"`
}

// MappingStatus is the event source mapping's state.
type MappingStatus struct {
	UUID                 string `json:"uuid"`
	State                string `json:"state"`
	LastProcessingResult string `json:"lastProcessingResult"`
}

// ReconcilerStatus is the reconciler and its last logged run.
type ReconcilerStatus struct {
	Function string `json:"function,omitempty"`
	Enabled  bool   `json:"enabled"`
	// LastRun is the report of the last run in the last 24 hours, if any.
	LastRun *ReconcileRun `json:"lastRun,omitempty"`
	// runs are the runs logged since the start of the day or of the rate
	// window, whichever is earlier.
	runs []ReconcileRun
}

// ReconcileRun is what the reconciler logged at the end of a run.
type ReconcileRun struct {
	Time      time.Time `json:"time"`
	Found     int       `json:"found"`
	Published int       `json:"published"`
	Failed    int       `json:"failed"`
	Poison    int       `json:"poison"`
	// Waiting counts the events the run left pending behind an earlier
	// event of their ordering key (held behind their key); Blocked those
	// of them behind a FAILED event. Both are 0 on an unordered pipeline.
	Waiting  int  `json:"waiting"`
	Blocked  int  `json:"blocked"`
	Complete bool `json:"complete"`
	// oldestPendingAge is the age in seconds of the oldest pending event
	// the run found, when it started.
	oldestPendingAge float64
}

// newReconcileRun is the ReconcileRun of the reconciler's report r.
func newReconcileRun(at time.Time, r reconcile.Report) ReconcileRun {
	return ReconcileRun{Time: at, Found: r.Found, Published: r.Published, Failed: r.Failed, Poison: r.Poison,
		Waiting: r.Waiting, Blocked: r.Blocked, Complete: r.Complete}
}

// StatusOptions tune what counts as stuck.
type StatusOptions struct {
	// StuckAfter is the pending age from which an event counts as stuck;
	// default 15 minutes.
	StuckAfter time.Duration
	// RateWindow is the window, ending now, over which the publishing
	// rate is measured; default DefaultRateWindow.
	RateWindow time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Status reports on p.
func (c *Clients) Status(ctx context.Context, p *Pipeline, o StatusOptions) (Status, error) {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	if o.StuckAfter <= 0 {
		o.StuckAfter = 15 * time.Minute
	}
	s := Status{Pipeline: p.Name, Table: p.Table().Name, Target: p.Target()}
	s.Backlog.window = cmp.Or(o.RateWindow, DefaultRateWindow)
	scope, err := p.originScope(Origins{})
	if err != nil {
		return s, err
	}
	s.Regions = newRegionsStatus(p, scope)
	at := now()
	steps := []func() error{
		func() error { return c.pendingStatus(ctx, p, scope, at, &s.Pending, s.Regions) },
		func() error { return c.failedStatus(ctx, p, &s.Failed, s.Regions) },
		func() error {
			err := c.queueStatus(ctx, p, &s.DLQ)
			if errors.Is(err, ErrNotFound) {
				s.DLQ.Missing, err = true, nil
			}
			return err
		},
		func() error { return c.mappingStatus(ctx, p, &s.Mapping) },
		func() error { return c.reconcilerStatus(ctx, p, at, s.Backlog.window, &s.Reconciler) },
		func() error { return c.relayRate(ctx, p, at, &s.Backlog) },
	}
	if s.Regions != nil {
		steps = append(steps, func() error { return c.regionsStatus(ctx, p, at, s.Regions) })
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return s, err
		}
	}
	s.Backlog.estimate(at, s.Pending, s.Reconciler.runs)
	s.Problems = append(problems(p.Name, s, o.StuckAfter), regionProblems(p.Name, s.Regions, at, o.StuckAfter)...)
	s.Healthy = len(s.Problems) == 0
	return s, nil
}

// pendingStatus counts the pending events in scope by age into ps, and
// every Region's into regions (nil for a single-Region pipeline).
func (c *Clients) pendingStatus(ctx context.Context, p *Pipeline, scope originScope, now time.Time, ps *PendingStatus, regions *RegionsStatus) error {
	ps.Buckets = make([]AgeBucket, len(ageBuckets))
	for i, b := range ageBuckets {
		ps.Buckets[i].Label = b.label
	}
	return c.eachPendingSince(ctx, p.pending(), farFuture(now), func(since int64, origin string) {
		age := max(now.Sub(time.UnixMilli(since)), 0)
		if regions != nil {
			regions.addPending(scope.of(origin), age)
		}
		if !scope.includes(origin) {
			return
		}
		ps.Total++
		ps.Oldest = max(ps.Oldest, age)
		ps.OldestAgeSeconds = ps.Oldest.Seconds()
		for i, b := range ageBuckets {
			if b.below == 0 || age < b.below {
				ps.Buckets[i].Count++
				break
			}
		}
	})
}

func (c *Clients) failedStatus(ctx context.Context, p *Pipeline, fs *FailedStatus, regions *RegionsStatus) error {
	list, err := c.Failed(ctx, p, Filter{})
	if err != nil {
		return err
	}
	if regions != nil {
		regions.addFailed(len(list.Events), list.Origins.LeftOut)
	}
	fs.Total, fs.Broken, fs.TopReasons = len(list.Events), list.Broken, topReasons(list.Events, 5)
	fs.Keys = heldKeys(list.Events)
	heads := map[string]bool{}
	for _, k := range fs.Keys {
		heads[k.EventID] = true
	}
	for _, e := range list.Events {
		if e.Broken != "" && !heads[e.Record.EventID] {
			fs.brokenEvents = append(fs.brokenEvents, e)
		}
	}
	return nil
}

func (c *Clients) queueStatus(ctx context.Context, p *Pipeline, qs *QueueStatus) error {
	qs.Name = p.Names.DeadLetterQueue
	url, err := c.queueURL(ctx, p)
	if err != nil {
		return err
	}
	out, err := c.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{
			sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		},
	})
	if err != nil {
		return call("sqs:GetQueueAttributes", "queue "+qs.Name, err)
	}
	qs.Messages, _ = strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
	qs.InFlight, _ = strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	return nil
}

func (c *Clients) mappingStatus(ctx context.Context, p *Pipeline, ms *MappingStatus) error {
	out, err := c.Lambda.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{FunctionName: aws.String(p.Names.RelayFunction)})
	if err != nil {
		return call("lambda:ListEventSourceMappings", "function "+p.Names.RelayFunction, err)
	}
	if len(out.EventSourceMappings) == 0 {
		ms.State = "Missing"
		return nil
	}
	m := out.EventSourceMappings[0]
	ms.UUID, ms.State, ms.LastProcessingResult = aws.ToString(m.UUID), aws.ToString(m.State), aws.ToString(m.LastProcessingResult)
	return nil
}

// reconcileFinished is the message the reconciler logs at the end of a run.
const reconcileFinished = "reconcile finished"

func (c *Clients) reconcilerStatus(ctx context.Context, p *Pipeline, now time.Time, window time.Duration, rs *ReconcilerStatus) error {
	rs.Enabled = p.Reconciler
	if !p.Reconciler {
		return nil
	}
	rs.Function = p.Names.ReconcilerFunction
	return c.eachLogLine(ctx, p.Names.ReconcilerLogGroup, reconcileFinished, now.Add(-max(24*time.Hour, window)), func(msg string, ts int64) {
		run, ok := parseReconcileRun(msg, ts)
		if !ok {
			return
		}
		rs.runs = append(rs.runs, run)
		if run.Time.After(now.Add(-24*time.Hour)) && (rs.LastRun == nil || !run.Time.Before(rs.LastRun.Time)) {
			rs.LastRun = &run
		}
	})
}

// parseReconcileRun reads the reconciler's JSON log line.
func parseReconcileRun(msg string, ts int64) (ReconcileRun, bool) {
	i := strings.IndexByte(msg, '{')
	if i < 0 {
		return ReconcileRun{}, false
	}
	var line struct {
		Msg string `json:"msg"`
		ReconcileRun
		OldestPendingAgeSeconds float64 `json:"oldestPendingAgeSeconds"`
	}
	if json.Unmarshal([]byte(msg[i:]), &line) != nil || line.Msg != reconcileFinished {
		return ReconcileRun{}, false
	}
	run := line.ReconcileRun
	run.oldestPendingAge = line.OldestPendingAgeSeconds
	if run.Time.IsZero() {
		run.Time = time.UnixMilli(ts)
	}
	return run, true
}

// problems lists what is stuck in s, each with what to do.
func problems(name string, s Status, stuckAfter time.Duration) []string {
	var out []string
	if s.Failed.Total > 0 {
		out = append(out, fmt.Sprintf("%s FAILED: list them with `outbox failed %s`, fix the cause, then `outbox requeue %s --now`", plural(s.Failed.Total, "event is", "events are"), name, name))
	}
	for _, k := range s.Failed.Keys {
		cause, broken := "the cause", ""
		if k.BrokenBecause != "" {
			cause, broken = "its item", fmt.Sprintf(", whose item breaks the record contract (%s)", k.BrokenBecause)
		}
		out = append(out, fmt.Sprintf("ordering key %s is held by its FAILED event %s (event %d)%s, %s behind it: fix %s and `outbox requeue %s --id %s --now`, or `outbox skip %s --event-id %s --yes`",
			k.OrderingKey, k.EventID, k.Sequence, broken, plural(int(k.WaitingBehind), "event waits", "events wait"), cause, name, k.EventID, name, k.EventID))
	}
	for _, e := range s.Failed.brokenEvents {
		out = append(out, fmt.Sprintf("FAILED event %s breaks the record contract (%s): it can never be published as it is; fix its item, then `outbox requeue %s --id %s --now`",
			e.Record.EventID, e.Broken, name, e.Record.EventID))
	}
	if s.DLQ.Missing {
		out = append(out, fmt.Sprintf("the dead-letter queue %s does not exist: the mapping cannot record the batches that run out of retries; run terraform apply to recreate it", s.DLQ.Name))
	}
	if s.DLQ.Messages+s.DLQ.InFlight > 0 {
		out = append(out, fmt.Sprintf("the dead-letter queue holds %s that ran out of retries: `outbox redrive %s`", plural(s.DLQ.Messages+s.DLQ.InFlight, "batch", "batches"), name))
	}
	if s.Pending.Oldest >= stuckAfter {
		waiting := ""
		if run := s.Reconciler.LastRun; run != nil && run.Waiting > 0 {
			waiting = fmt.Sprintf("; the reconciler's last run left %s behind an earlier event of their ordering key (`outbox failed %s` lists the FAILED events that hold keys)",
				plural(run.Waiting, "event", "events"), name)
		}
		out = append(out, fmt.Sprintf("the oldest pending event is %s old (stuck after %s)%s: check the mapping, the relay's log group and the reconciler%s", round(s.Pending.Oldest), stuckAfter, s.Backlog.progress(), waiting))
	}
	switch {
	case s.Mapping.State != "Enabled" && s.Mapping.State != "Enabling" && s.Mapping.State != "Updating":
		out = append(out, fmt.Sprintf("the event source mapping is %s: nothing reaches the relay from the stream; run terraform apply to repair it", s.Mapping.State))
	case strings.HasPrefix(s.Mapping.LastProcessingResult, "PROBLEM"):
		out = append(out, "the event source mapping reports "+s.Mapping.LastProcessingResult)
	}
	return out
}

func round(d time.Duration) time.Duration {
	if d >= time.Minute {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}
