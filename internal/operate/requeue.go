package operate

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// requeueConcurrency is the number of updates in flight at once.
const requeueConcurrency = 16

// RequeueResult counts what Requeue did.
type RequeueResult struct {
	// Requeued counts events put back to PENDING.
	Requeued int
	// Skipped counts events that were no longer FAILED when updated.
	Skipped int
	// Broken counts events left FAILED because their items break the
	// record contract (FailedEvent.Broken): fix the items first.
	Broken int
}

// Requeue puts the given FAILED events back to PENDING with their pending
// index keys (outbox.Table.Requeue), so that the next reconciler run
// publishes them. It leaves FAILED the events whose items break the record
// contract: the relay would only mark them FAILED again. progress, when not
// nil, is called after each event.
func (c *Clients) Requeue(ctx context.Context, p *Pipeline, events []FailedEvent, progress func(done int)) (RequeueResult, error) {
	t := p.Table()
	var requeued, skipped, done atomic.Int64
	var firstErr error
	var once sync.Once
	work := make(chan outbox.Record)
	var wg sync.WaitGroup
	for range requeueConcurrency {
		wg.Go(func() {
			for r := range work {
				_, err := c.DynamoDB.UpdateItem(ctx, t.Requeue(r))
				switch {
				case err == nil:
					requeued.Add(1)
				case hasCode(err, "ConditionalCheckFailedException"):
					skipped.Add(1)
				default:
					once.Do(func() { firstErr = call("dynamodb:UpdateItem", "table "+t.Name, err) })
				}
				if progress != nil {
					progress(int(done.Add(1)))
				}
			}
		})
	}
	broken := 0
	for _, e := range events {
		if ctx.Err() != nil {
			break
		}
		if e.Broken != "" {
			broken++
			continue
		}
		work <- e.Record
	}
	close(work)
	wg.Wait()
	res := RequeueResult{Requeued: int(requeued.Load()), Skipped: int(skipped.Load()), Broken: broken}
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	return res, firstErr
}

// maxReconcileRuns bounds how many times Reconcile invokes the reconciler.
const maxReconcileRuns = 20

// Reconcile invokes p's reconciler with no minimum age, again while a run
// stops before sweeping every shard, and returns the sum of the runs'
// reports. report, when not nil, receives each run's report.
func (c *Clients) Reconcile(ctx context.Context, p *Pipeline, report func(reconcile.Report)) (reconcile.Report, error) {
	if !p.Reconciler {
		return reconcile.Report{}, fmt.Errorf("pipeline %q has no reconciler (function %s does not exist): enable reconciler in its configuration and apply, then try again: %w", p.Name, p.Names.ReconcilerFunction, ErrNotFound)
	}
	zero := 0.0
	payload, err := json.Marshal(relay.ReconcileRequest{Action: relay.ActionReconcile, MinAgeSeconds: &zero})
	if err != nil {
		return reconcile.Report{}, err
	}
	var total reconcile.Report
	for run := 0; run < maxReconcileRuns; run++ {
		out, err := c.Lambda.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(p.Names.ReconcilerFunction), Payload: payload})
		if err != nil {
			return total, call("lambda:InvokeFunction", "function "+p.Names.ReconcilerFunction, err)
		}
		if out.FunctionError != nil {
			return total, fmt.Errorf("the reconciler %s failed (%s): %s; see its log group %s", p.Names.ReconcilerFunction, aws.ToString(out.FunctionError), out.Payload, p.Names.ReconcilerLogGroup)
		}
		var r reconcile.Report
		if err := json.Unmarshal(out.Payload, &r); err != nil {
			return total, fmt.Errorf("decoding the reconciler's report %q: %w", out.Payload, err)
		}
		if report != nil {
			report(r)
		}
		total.Found += r.Found
		total.Published += r.Published
		total.Failed += r.Failed
		total.Poison += r.Poison
		total.Skipped += r.Skipped
		// Each run finds the events still waiting: the last one's count is
		// what is left.
		total.Complete, total.RemainingShards, total.Waiting, total.Blocked = r.Complete, r.RemainingShards, r.Waiting, r.Blocked
		total.OldestPendingAgeSeconds = max(total.OldestPendingAgeSeconds, r.OldestPendingAgeSeconds)
		if r.Complete || (r.Published == 0 && r.Poison == 0) {
			break
		}
	}
	return total, nil
}
