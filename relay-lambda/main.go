// Command relay-lambda is the outbox relay Lambda function (runtime
// provided.al2023, handler bootstrap). It reads its configuration from the
// environment (see package internal/relay/config), builds the AWS clients
// from the standard AWS configuration (AWS_REGION, AWS_ENDPOINT_URL, ...), and
// serves DynamoDB stream batches and reconcile requests.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	awsretry "github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/logging"
)

func main() {
	log := logging.New(os.Stdout, logging.ParseLevel(os.Getenv("AWS_LAMBDA_LOG_LEVEL")))
	r, err := setup(context.Background(), os.Getenv, log)
	if err != nil {
		log.Error("relay cold start failed", "error", err)
		os.Exit(1)
	}
	lambda.Start(r.Handle)
}

// setup validates the configuration and wires the relay.
func setup(ctx context.Context, getenv func(string) string, log *slog.Logger) (*relay.Relay, error) {
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return nil, err
	}
	// A batch is written with up to ~100 requests in parallel: keep their
	// connections open between invocations. The relay bounds its own retries
	// by the deadline, so the SDK's client-side retry quota is not needed.
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConns = 256
		t.MaxIdleConnsPerHost = 128
	})
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx,
		awsconfig.WithHTTPClient(httpClient),
		awsconfig.WithRetryer(func() aws.Retryer {
			return awsretry.NewStandard(func(o *awsretry.StandardOptions) { o.RateLimiter = ratelimit.None })
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	clients := relay.Clients{DynamoDB: dynamodb.NewFromConfig(awsCfg), AWS: awsCfg}
	log.Info("relay configured", "table", cfg.Table.Name, "target", cfg.Target.Type, "targetAddress", cfg.Target.Address(),
		"publishedAction", cfg.PublishedAction, "publishedTtl", cfg.PublishedTTL.String(),
		"pendingShards", cfg.Table.PendingShards, "reconcileShards", cfg.ReconcileShards,
		"formerSortKeyPrefixes", cfg.Table.FormerSortKeyPrefixes, "pendingIndexEnabled", !cfg.Table.NoPendingIndex,
		"reconcileMinAge", cfg.ReconcileMinAge.String(), "claimBucket", cfg.ClaimBucket, "claimSweepWindow", cfg.ClaimSweepWindow.String())
	return relay.New(cfg, clients, relay.Options{
		Log:          log,
		Metrics:      os.Stdout,
		FunctionName: lambdacontext.FunctionName,
		MemoryMB:     lambdacontext.MemoryLimitInMB,
		Region:       awsCfg.Region,
	})
}
