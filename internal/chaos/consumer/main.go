// Command consumer is the consumer Lambda function of the consumer chaos
// suite (TestConsumeChaos): a subscription's queue consumer built with the
// consumer kit, as a user would write it, whose effect is chaos.Effect,
// committed in the transaction that completes the event's inbox entry.
//
// Its environment: INBOX_TABLE and LEDGER_TABLE, the tables; LEASE_MS, the
// inbox lease; WORK_MS, how long the handler works on each event before its
// effect (the window in which the suite's kills land mid-handler).
package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
	"github.com/outboxkit/terraform-provider-outbox/internal/chaos"
)

func main() {
	log := consumer.NewLogger(os.Stdout, slog.LevelInfo)
	c, err := setup(context.Background(), os.Getenv, log)
	if err != nil {
		log.Error("consumer cold start failed", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(c.HandleSQS)
}

// setup reads the environment and builds the consumer.
func setup(ctx context.Context, getenv func(string) string, log *slog.Logger) (*consumer.Consumer[chaos.Order], error) {
	inboxTable, ledger := getenv("INBOX_TABLE"), getenv("LEDGER_TABLE")
	if inboxTable == "" || ledger == "" {
		return nil, fmt.Errorf("INBOX_TABLE (%q) and LEDGER_TABLE (%q) must be set", inboxTable, ledger)
	}
	lease, err := millis(getenv, "LEASE_MS", consumer.DefaultLease)
	if err != nil {
		return nil, err
	}
	work, err := millis(getenv, "WORK_MS", 0)
	if err != nil {
		return nil, err
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	inbox, err := consumer.NewInbox(dynamodb.NewFromConfig(cfg), inboxTable, consumer.WithLease(lease), consumer.WithLogger(log))
	if err != nil {
		return nil, err
	}
	var opts []consumer.ConsumerOption
	if effectsOnly, err := strconv.ParseBool(cmp.Or(getenv("EFFECTS_ONLY"), "false")); err != nil {
		return nil, fmt.Errorf("EFFECTS_ONLY=%q: want true or false", getenv("EFFECTS_ONLY"))
	} else if effectsOnly {
		opts = append(opts, consumer.EffectsOnly())
	}
	return consumer.New(inbox, func(ctx context.Context, e consumer.Event[chaos.Order], tx *consumer.Tx) error {
		if work > 0 {
			time.Sleep(work)
		}
		tx.Add(chaos.Effect(ledger, e))
		return nil
	}, opts...)
}

// millis reads a duration in milliseconds from the environment.
func millis(getenv func(string) string, name string, def time.Duration) (time.Duration, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a whole number of milliseconds", name, v)
	}
	return time.Duration(n) * time.Millisecond, nil
}
