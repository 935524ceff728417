// Package relay is the outbox relay Lambda function: it publishes the events
// that applications store in their outbox table, and records that they were
// published.
//
// One function serves two modes, chosen by the payload:
//
//   - Stream mode: a DynamoDB stream batch (events.DynamoDBEvent) from the
//     event source mapping. Outbox INSERT records are published; every other
//     record is skipped. The response lists the records to retry in
//     batchItemFailures, by sequence number.
//   - Reconcile mode: {"action":"reconcile"} (optionally with
//     "minAgeSeconds"), sent by an EventBridge Scheduler schedule. Pending
//     events older than the minimum age are found in the pending index (or,
//     for a table without it, by a parallel Scan) and published; the
//     response is a Report. A run sweeps the shards it leases; under a
//     backlog it starts workers, asynchronous invocations of its own
//     function with {"action":"reconcile","worker":true,...}, and a
//     successor when its deadline comes first (OUTBOX_RECONCILE_MAX_WORKERS,
//     package reconcile's leases.go).
//
// Both modes share package batch: publish in parallel batch calls, then mark
// (or delete) in parallel writes. Poison events are marked FAILED and never
// block the stream. Every invocation logs a JSON summary and writes its
// metrics in CloudWatch embedded metric format.
//
// # Publish once unless a process dies
//
// Before publishing, stream mode reads the current state of its batch's
// items, one strongly consistent BatchGetItem per 100 records, all in
// parallel, and skips items already PUBLISHED, FAILED or gone; an item held
// by the reconciler is reported for a retry, by which time it is settled.
// Items old enough for the reconciler to take them (half the
// configured minimum age) are held instead (outbox.Table.Hold), as the
// reconciler holds every item it publishes: of two invocations that see one
// event, only the one whose conditional hold succeeds publishes it. The
// happy path adds one read unit per event of up to 4 KB and no write; a
// batch takes three sequential round trips (read or hold, publish, mark).
//
// # Failures
//
// Only a broken event is poison: an item that breaks the record contract,
// an event over the size limit, or an entry the target calls malformed or
// invalid. Every other failure (a permission, a missing bus or topic, a KMS
// key, throttling, an unknown code, a failed call) leaves the event pending,
// logged with a hint that names the probable fix and counted in the metric
// PublishErrors by ErrorClass (environment, throttling, poison, transient).
// An event whose publishing failed and that lacks the pending index keys
// gets them, so that the reconciler finds it. An event held by the
// invocation whose publishing failed is released (outbox.Table.Release),
// its attempt uncounted, in the same writing wave as the marks: its next
// try (the stream's retry of the record, or the next reconciler run) is
// not kept out by a hold. An event published but not marked stays held:
// the hold is its backoff.
//
// # Ordered mode
//
// With OUTBOX_ORDERED=true (a FIFO queue or topic only), events with a
// sequence go through package batch's gate: event n of an ordering key is
// published only once n-1 was accepted, as the key's cursor item
// (outbox.CursorSortKey) records. An event after a gap stays pending,
// registered on the cursor, and the invocation that publishes its
// predecessor publishes it next; one the cursor could not register is
// retried by the stream while it is young and its key is not held by a
// FAILED event (waitsForStream). The reconciler, which tries the waiting
// events again once it has swept every shard, is the backstop. DESIGN.md explains the order of publishing, advancing the cursor
// and settling, and what each costs.
//
// # What the function needs
//
// Configuration: the OUTBOX_* environment variables of package config.
// Event source mapping: TRIM_HORIZON, FunctionResponseTypes
// ["ReportBatchItemFailures"], the filter of outbox.Table.StreamFilterPattern,
// and a stream view type with new images (NEW_IMAGE or NEW_AND_OLD_IMAGES).
// Execution role, besides the stream read permissions of the mapping:
//
//   - dynamodb:BatchGetItem (the status check, the cursors of ordered
//     mode) and dynamodb:UpdateItem (holds, marks, poison events, pending
//     index keys, cursors) on the table, and
//     dynamodb:BatchWriteItem (delete mode);
//   - dynamodb:Query on the table's pending index (reconcile mode), or
//     dynamodb:Scan and dynamodb:DescribeTable on the table when it has no
//     pending index; in ordered mode dynamodb:Scan on the table in both
//     cases (the FAILED events of a key, before its cursor is started);
//   - lambda:InvokeFunction on the reconciler function itself, when
//     OUTBOX_RECONCILE_MAX_WORKERS is above 1 (its workers); the lease
//     items are written with dynamodb:UpdateItem;
//   - the publishing action of the target's kind on the target (package
//     target): events:PutEvents on the bus, sns:Publish on the topic
//     (which authorizes PublishBatch), sqs:SendMessage on the queue (which
//     authorizes SendMessageBatch).
//
// Without dynamodb:BatchGetItem the stream relay still publishes, from the
// stream images, and logs a warning: events may then be published twice.
//
// The reconcile schedule invokes the function with the fixed input
// {"action":"reconcile"}.
package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/batch"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/claimsweep"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/logging"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/store"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/takeover"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// ActionReconcile is the action of a reconcile payload.
const ActionReconcile = "reconcile"

// maxMinAgeSeconds bounds a reconcile request's minimum age, well within
// time.Duration, so that no value wraps around to a negative age.
const maxMinAgeSeconds = 365 * 24 * 3600

// ReconcileRequest is the payload that selects reconcile mode.
type ReconcileRequest struct {
	Action string `json:"action"`
	// MinAgeSeconds overrides OUTBOX_RECONCILE_MIN_AGE when set.
	MinAgeSeconds *float64 `json:"minAgeSeconds,omitempty"`
	// Worker marks a worker started by a run under a backlog (reconcile's
	// leases.go): it sweeps one share of the shards.
	Worker bool `json:"worker,omitempty"`
	// Region is the Region whose events a worker of a multi-Region
	// pipeline sweeps: its own, or one its run has taken over.
	Region string `json:"region,omitempty"`
}

// DynamoDBAPI is the part of the DynamoDB client the relay uses.
type DynamoDBAPI interface {
	store.DynamoDBAPI
	reconcile.ReadAPI
	takeover.API
}

// Clients are the AWS clients of the relay.
type Clients struct {
	DynamoDB DynamoDBAPI
	// AWS is the configuration the target's client is built from
	// (targetkind.NewPublisher).
	AWS aws.Config
	// Target, when not nil, is the target's client instead: a fake of the
	// kind's API (targetkind.EventBridgeAPI, SNSAPI, SQSAPI) in tests.
	Target any
	// S3, when not nil, is the claim sweep's client instead of one built
	// from AWS (see claims.go), and the publisher's, which reads and tags
	// claim-checked events' objects, when it has those calls
	// (targetkind.ObjectStore).
	S3 claimsweep.S3API
	// Lambda, when not nil, starts reconcile workers instead of a client
	// built from AWS.
	Lambda LambdaAPI
}

// objects is S3 as the publisher's object store; nil, for a client built
// from AWS, when S3 is nil or lacks the calls.
func (c Clients) objects() targetkind.ObjectStore {
	o, _ := c.S3.(targetkind.ObjectStore)
	return o
}

// Options tune a Relay; the zero value is the production setting.
type Options struct {
	// Log receives the relay's logs; nil discards them.
	Log *slog.Logger
	// Metrics receives the EMF documents; nil discards them.
	Metrics io.Writer
	// FunctionName is the value of the FunctionName metric dimension.
	FunctionName string
	// MemoryMB is the function's memory, which bounds what an ordered
	// reconciler run keeps (reconcile.KeptBytesFor); 0 takes the default.
	MemoryMB int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Retry overrides retry.Default.
	Retry *retry.Policy
	// Region is the function's region, named in hints.
	Region string
	// Hold overrides the hold policy of store.HoldPolicy's defaults.
	Hold *store.HoldPolicy
	// Remaining overrides how the ordered gate reads the time left before
	// an invocation's deadline (batch.Processor.Remaining).
	Remaining func(ctx context.Context) (time.Duration, bool)
}

// Relay handles invocations. It is safe for concurrent use.
type Relay struct {
	table        outbox.Table
	minAge       time.Duration
	store        *store.Store
	hold         store.HoldPolicy
	processor    *batch.Processor
	reconciler   *reconcile.Reconciler
	regions      *regionRuns
	claims       *claimsweep.Sweeper
	log          *slog.Logger
	metricsOut   io.Writer
	functionName string
	now          func() time.Time
}

// New wires a Relay for cfg.
func New(cfg config.Config, clients Clients, opts Options) (*Relay, error) {
	if clients.DynamoDB == nil {
		return nil, errors.New("relay: a DynamoDB client is required")
	}
	policy := retry.Default
	if opts.Retry != nil {
		policy = *opts.Retry
	}
	log := logging.OrDiscard(opts.Log)
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	pub, err := targetkind.NewPublisher(clients.AWS, cfg.Target, targetkind.PublisherOptions{Retry: policy, Region: opts.Region, Client: clients.Target, Objects: clients.objects()})
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	st := &store.Store{Client: clients.DynamoDB, Table: cfg.Table, TTL: cfg.PublishedTTL, Now: now, Retry: policy}
	if cfg.PublishedAction == config.ActionDelete {
		st.TTL = 0
	}
	p := &batch.Processor{Publisher: pub, Store: st, Action: cfg.PublishedAction, Now: now, Log: log,
		Table: cfg.Table.Name, NoPendingIndex: cfg.Table.NoPendingIndex, Remaining: opts.Remaining}

	out := opts.Metrics
	if out == nil {
		out = io.Discard
	}
	var hold store.HoldPolicy
	if opts.Hold != nil {
		hold = *opts.Hold
	}
	if cfg.Ordered {
		p.Cursors, p.Layout, p.Hold, p.MultiRegion = st, cfg.Table, hold, len(cfg.Regions) > 0
	}
	shards := max(cfg.ReconcileShards, cfg.Table.PendingShards)
	claims, err := newClaimSweeper(cfg, clients, opts)
	if err != nil {
		return nil, err
	}
	if err := checkOwnRegion(cfg, opts.Region); err != nil {
		return nil, err
	}
	rec := &reconcile.Reconciler{
		Client: clients.DynamoDB, Table: cfg.Table, Shards: shards, Processor: p, Holder: st, Hold: hold,
		Now: now, Retry: policy, Log: log, Ordered: orderedCursors(cfg, st),
	}
	if opts.MemoryMB > 0 {
		rec.MaxKeptBytes = reconcile.KeptBytesFor(opts.MemoryMB)
	}
	scaleOut(rec, cfg, clients, opts.FunctionName, log)
	regions, err := newRegionRuns(rec, cfg, clients, opts, now, log)
	if err != nil {
		return nil, err
	}
	return &Relay{
		claims:       claims,
		table:        cfg.Table,
		minAge:       cfg.ReconcileMinAge,
		store:        st,
		hold:         hold,
		processor:    p,
		reconciler:   rec,
		regions:      regions,
		log:          log,
		metricsOut:   out,
		functionName: opts.FunctionName,
		now:          now,
	}, nil
}

// orderedCursors is the cursor store of an ordered relay, nil otherwise.
func orderedCursors(cfg config.Config, st *store.Store) reconcile.Cursors {
	if !cfg.Ordered {
		return nil
	}
	return st
}

// Handle is the Lambda handler: it chooses the mode from the payload.
func (r *Relay) Handle(ctx context.Context, payload json.RawMessage) (any, error) {
	var probe struct {
		Records json.RawMessage `json:"Records"`
		Action  *string         `json:"action"`
	}
	trimmed := bytes.TrimSpace(payload)
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &probe) != nil {
		return nil, errUnknownPayload
	}
	switch {
	case len(probe.Records) > 0 && !bytes.Equal(probe.Records, []byte("null")):
		var ev events.DynamoDBEvent
		if err := json.Unmarshal(trimmed, &ev); err != nil {
			return nil, fmt.Errorf("decoding the DynamoDB stream batch: %w", err)
		}
		for _, rec := range ev.Records {
			if rec.EventSource != "" && rec.EventSource != "aws:dynamodb" {
				return nil, fmt.Errorf("%w: a record comes from %q, not from a DynamoDB stream", errUnknownPayload, rec.EventSource)
			}
		}
		return r.HandleStream(ctx, ev)
	case probe.Action != nil:
		var req ReconcileRequest
		if err := json.Unmarshal(trimmed, &req); err != nil {
			return nil, fmt.Errorf("decoding the reconcile request: %w", err)
		}
		return r.Reconcile(ctx, req)
	}
	return nil, errUnknownPayload
}

var errUnknownPayload = errors.New(`unsupported payload: expected a DynamoDB stream batch ({"Records":[...]}) or a reconcile request ({"action":"reconcile","minAgeSeconds":300})`)

// Reconcile runs reconcile mode, then the claim sweep (claims.go).
func (r *Relay) Reconcile(ctx context.Context, req ReconcileRequest) (ReconcileReport, error) {
	if req.Action != ActionReconcile {
		return ReconcileReport{}, fmt.Errorf(`unknown action %q: the only action is "reconcile"`, req.Action)
	}
	minAge := r.minAge
	if req.MinAgeSeconds != nil {
		if *req.MinAgeSeconds < 0 || *req.MinAgeSeconds > maxMinAgeSeconds {
			return ReconcileReport{}, fmt.Errorf("minAgeSeconds is %v: expected a number of seconds from 0 to %d (a year)", *req.MinAgeSeconds, maxMinAgeSeconds)
		}
		minAge = time.Duration(*req.MinAgeSeconds * float64(time.Second))
	}
	m := metrics.New()
	start := r.now()
	if req.Worker {
		ctx = reconcile.AsWorker(ctx)
	}
	report, regions, err := r.run(ctx, req, minAge, m)
	if err != nil {
		return ReconcileReport{}, err
	}
	r.flush(ctx, m)
	r.log.InfoContext(ctx, "reconcile finished",
		"found", report.Found, "published", report.Published, "failed", report.Failed,
		"poison", report.Poison, "skipped", report.Skipped, "waiting", report.Waiting, "blocked", report.Blocked, "complete", report.Complete,
		"remainingShards", report.RemainingShards, "oldestPendingAgeSeconds", report.OldestPendingAgeSeconds,
		"minAgeSeconds", report.MinAgeSeconds, "publishRate", report.PublishRate, "worker", req.Worker, "workers", report.Workers,
		"shardsLeased", report.ShardsLeased, "continued", report.Continued, "durationMs", r.now().Sub(start).Milliseconds())
	out := r.sweepClaims(ctx, report)
	out.Regions = regions
	return out, nil
}

// run runs the reconciler: across Regions for a multi-Region pipeline
// (regions.go), at once otherwise.
func (r *Relay) run(ctx context.Context, req ReconcileRequest, minAge time.Duration, m *metrics.Recorder) (reconcile.Report, *RegionsReport, error) {
	if r.regions == nil {
		return r.reconciler.Run(ctx, minAge, m), nil, nil
	}
	regions, report, err := r.regions.run(ctx, req, minAge, m)
	if err != nil {
		return reconcile.Report{}, nil, err
	}
	return report, &regions, nil
}

func (r *Relay) flush(ctx context.Context, m *metrics.Recorder) {
	if err := m.Flush(r.metricsOut, r.functionName, r.now()); err != nil {
		r.log.WarnContext(ctx, "writing metrics failed", "error", err)
	}
}
