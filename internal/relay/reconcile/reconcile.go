// Package reconcile sweeps the sparse pending index for events the stream
// path has not published (a relay outage longer than the stream's retention,
// records dropped after the retries ran out, items marked while a write
// failed) and publishes them like the stream path does.
//
// It is safe to run alongside stream mode: an event both paths see is
// published twice (consumers deduplicate on its id), and the conditional
// marks make sure that nothing is lost.
package reconcile

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/pipeline"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Defaults of a Reconciler.
const (
	DefaultPageSize    = 100
	DefaultConcurrency = 4
	DefaultStopMargin  = 5 * time.Second
)

// QueryAPI is the part of the DynamoDB client the reconciler uses.
type QueryAPI interface {
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// Processor publishes and settles items; *pipeline.Pipeline is one.
type Processor interface {
	Process(ctx context.Context, items []pipeline.Item, m *metrics.Recorder) []pipeline.Outcome
}

// Reconciler queries every shard of the pending index for old pending
// events and processes them, page by page, shards in parallel.
type Reconciler struct {
	Client    QueryAPI
	Table     outbox.Table
	Processor Processor
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// PageSize is the Limit of each Query; 0 means DefaultPageSize.
	PageSize int32
	// Concurrency is the number of shards swept at once; 0 means
	// DefaultConcurrency.
	Concurrency int
	// StopMargin is the time kept before the deadline: no page is started
	// with less left. 0 means DefaultStopMargin. It is capped at a quarter
	// of the time the invocation has when Run starts.
	StopMargin time.Duration
	// Retry bounds the retries of throttled queries.
	Retry retry.Policy
	Log   *slog.Logger
}

// Report is the result of a run, returned as the invocation's response.
type Report struct {
	// Found counts pending events older than the minimum age.
	Found int `json:"found"`
	// Published counts events published and marked (or deleted).
	Published int `json:"published"`
	// Failed counts events left pending after publishing or marking failed;
	// the next run tries them again.
	Failed int `json:"failed"`
	// Poison counts events that can never be published, marked FAILED.
	Poison int `json:"poison"`
	// Skipped counts items found that were no longer pending.
	Skipped int `json:"skipped"`
	// Complete is true when every shard was swept to its end.
	Complete bool `json:"complete"`
	// RemainingShards counts shards not swept to their end, because the
	// deadline came near or a query failed.
	RemainingShards int `json:"remainingShards"`
	// OldestPendingAgeSeconds is the age of the oldest pending event found.
	OldestPendingAgeSeconds float64 `json:"oldestPendingAgeSeconds"`
	// MinAgeSeconds is the minimum age the run used.
	MinAgeSeconds float64 `json:"minAgeSeconds"`
}

// Run sweeps every shard for events pending since before now - minAge and
// processes them. It stops starting pages when the deadline comes near.
func (r *Reconciler) Run(ctx context.Context, minAge time.Duration, m *metrics.Recorder) Report {
	now := r.now()
	cutoff := now.Add(-minAge)
	margin := r.StopMargin
	if margin <= 0 {
		margin = DefaultStopMargin
	}
	if deadline, ok := ctx.Deadline(); ok {
		margin = min(margin, time.Until(deadline)/4)
	}
	concurrency := r.Concurrency
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}

	var mu sync.Mutex
	report := Report{MinAgeSeconds: minAge.Seconds()}
	var oldest int64 // pendingSince of the oldest event found, Unix ms
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	for shard := range r.Table.PendingShards {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			s := r.sweep(ctx, shard, cutoff, margin, m)
			mu.Lock()
			defer mu.Unlock()
			report.Found += s.found
			report.Published += s.published
			report.Failed += s.failed
			report.Poison += s.poison
			report.Skipped += s.skipped
			if !s.complete {
				report.RemainingShards++
			}
			if s.oldest > 0 && (oldest == 0 || s.oldest < oldest) {
				oldest = s.oldest
			}
		}()
	}
	wg.Wait()
	report.Complete = report.RemainingShards == 0
	if oldest > 0 {
		report.OldestPendingAgeSeconds = now.Sub(time.UnixMilli(oldest)).Seconds()
	}
	m.Add(metrics.PendingFound, report.Found)
	m.Observe(metrics.OldestPendingAge, metrics.Seconds, report.OldestPendingAgeSeconds)
	return report
}

type sweepResult struct {
	found, published, failed, poison, skipped int
	complete                                  bool
	oldest                                    int64
}

// sweep processes one shard, page by page, oldest first.
func (r *Reconciler) sweep(ctx context.Context, shard int, cutoff time.Time, margin time.Duration, m *metrics.Recorder) sweepResult {
	var res sweepResult
	var start map[string]types.AttributeValue
	pageSize := r.PageSize
	if pageSize <= 0 {
		pageSize = DefaultPageSize
	}
	for {
		if !retry.TimeLeft(ctx, margin) {
			r.log().InfoContext(ctx, "reconcile stopped before the deadline", "shard", shard)
			return res
		}
		in := r.Table.PendingQuery(shard, cutoff)
		in.Limit = aws.Int32(pageSize)
		if start != nil {
			in.ExclusiveStartKey = maps.Clone(start)
		}
		out, err := r.query(ctx, in)
		if err != nil {
			r.log().ErrorContext(ctx, "querying the pending index failed", "shard", shard, "error", err)
			return res
		}
		items := make([]pipeline.Item, len(out.Items))
		for i, raw := range out.Items {
			items[i] = pipeline.Parse(r.Table, raw)
			if since := items[i].Record.PendingSince; since > 0 && (res.oldest == 0 || since < res.oldest) {
				res.oldest = since
			}
		}
		res.found += len(items)
		if len(items) > 0 {
			for _, o := range r.Processor.Process(ctx, items, m) {
				switch o.Status {
				case pipeline.Published:
					res.published++
				case pipeline.Poison:
					res.poison++
				case pipeline.LeftPending:
					res.failed++
				case pipeline.Skipped:
					res.skipped++
				}
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			res.complete = true
			return res
		}
		start = out.LastEvaluatedKey
	}
}

func (r *Reconciler) query(ctx context.Context, in *dynamodb.QueryInput) (*dynamodb.QueryOutput, error) {
	for attempt := 1; ; attempt++ {
		out, err := r.Client.Query(ctx, in)
		if err == nil {
			return out, nil
		}
		if !retry.IsTransient(err) || !r.Retry.Backoff(ctx, attempt) {
			return nil, err
		}
	}
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.New(slog.DiscardHandler)
}
