package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
)

// LambdaAPI is the part of the Lambda client that starts reconcile workers.
type LambdaAPI interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, opts ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// workerInvoker starts reconcile workers: asynchronous invocations of the
// function itself (InvocationType Event) with a worker's reconcile request,
// naming the Region whose events the worker sweeps in a multi-Region
// pipeline (regions.go).
type workerInvoker struct {
	client   LambdaAPI
	function string
	region   string
}

// StartWorker invokes the function as a worker of a run of minimum age minAge.
func (w workerInvoker) StartWorker(ctx context.Context, minAge time.Duration) error {
	seconds := minAge.Seconds()
	payload, err := json.Marshal(ReconcileRequest{Action: ActionReconcile, MinAgeSeconds: &seconds, Worker: true, Region: w.region})
	if err != nil {
		return err
	}
	if _, err := w.client.Invoke(ctx, &lambda.InvokeInput{
		FunctionName: aws.String(w.function), InvocationType: types.InvocationTypeEvent, Payload: payload,
	}); err != nil {
		return fmt.Errorf("invoking %s as a reconcile worker: %w", w.function, err)
	}
	return nil
}

// scaleOut sets the reconciler's publishing rate, leases and workers: the
// leases unless the sort key prefix covers their items
// (outbox.Table.LeaseProblem: the reconciler then sweeps every shard, one
// run at a time, as without leases), workers when more than one may run
// and the function's name is known.
func scaleOut(rec *reconcile.Reconciler, cfg config.Config, clients Clients, function string, log *slog.Logger) {
	rec.MaxEventsPerSecond = float64(cfg.ReconcileMaxEventsPerSecond)
	if err := cfg.Table.LeaseProblem(); err != nil {
		log.Warn("the reconciler takes no shard leases and starts no workers", "error", err)
		return
	}
	rec.Leases = clients.DynamoDB
	rec.MaxWorkers = cfg.ReconcileMaxWorkers
	if cfg.ReconcileMaxWorkers <= 1 || function == "" {
		return
	}
	client := clients.Lambda
	if client == nil {
		client = lambda.NewFromConfig(clients.AWS)
	}
	rec.Invoker = workerInvoker{client: client, function: function}
}
