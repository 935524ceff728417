// Command localaws runs the local AWS stack: an AWS-compatible endpoint for
// the provider, the relay and their tests.
//
//	go run ./cmd/localaws --port 4566
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "localaws:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("localaws", flag.ContinueOnError)
	host := fs.String("host", "127.0.0.1", "listen host")
	port := fs.Int("port", 4566, "listen port (0 picks a free port)")
	region := fs.String("region", "us-east-1", "the stack's region")
	account := fs.String("account", "000000000000", "the stack's account id")
	retention := fs.Duration("stream-retention", localaws.DefaultStreamRetention, "DynamoDB stream record retention")
	ttlSweep := fs.Duration("ttl-sweep-interval", localaws.DefaultTTLSweepInterval, "interval of the DynamoDB TTL sweeper")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	if err := fs.Parse(args); err != nil {
		return err
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	hopts := &slog.HandlerOptions{Level: level}
	var handler slog.Handler = slog.NewTextHandler(os.Stderr, hopts)
	if *logFormat == "json" {
		handler = slog.NewJSONHandler(os.Stderr, hopts)
	}
	logger := slog.New(handler)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	stack, err := localaws.Start(ctx, localaws.Options{
		Addr:             net.JoinHostPort(*host, strconv.Itoa(*port)),
		Region:           *region,
		AccountID:        *account,
		StreamRetention:  *retention,
		TTLSweepInterval: *ttlSweep,
		Logger:           logger,
	})
	if err != nil {
		return err
	}
	fmt.Println(stack.Endpoint())
	<-ctx.Done()
	logger.Info("stopping")
	return stack.Close()
}
