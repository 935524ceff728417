// Command naive is the naive outbox relay as a Lambda function (runtime
// provided.al2023, handler bootstrap): package internal/relay/naive behind
// the same environment configuration as ./relay-lambda (package
// internal/relay/config). It exists to measure the real relay against on
// the same infrastructure (cmd/outbox-bench); it publishes to EventBridge
// only and serves no reconcile requests.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/logging"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/naive"
)

func main() {
	log := logging.New(os.Stdout, logging.ParseLevel(os.Getenv("AWS_LAMBDA_LOG_LEVEL")))
	r, err := setup(context.Background(), os.Getenv, log)
	if err != nil {
		log.Error("naive relay cold start failed", "error", err)
		os.Exit(1)
	}
	lambda.Start(r.HandleStream)
}

// setup validates the configuration and wires the naive relay with the
// SDK's default clients.
func setup(ctx context.Context, getenv func(string) string, log *slog.Logger) (*naive.Relay, error) {
	cfg, err := config.FromEnv(getenv)
	if err != nil {
		return nil, err
	}
	if cfg.Target.Type != config.TargetEventBridge {
		return nil, errors.New("the naive relay publishes to EventBridge only: set OUTBOX_TARGET=eventbridge")
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	log.Info("naive relay configured", "table", cfg.Table.Name, "eventBus", cfg.Target.EventBus,
		"publishedAction", cfg.PublishedAction, "publishedTtl", cfg.PublishedTTL.String())
	return &naive.Relay{
		DynamoDB:    dynamodb.NewFromConfig(awsCfg),
		EventBridge: eventbridge.NewFromConfig(awsCfg),
		Config:      cfg,
	}, nil
}
