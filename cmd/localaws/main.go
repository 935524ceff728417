// Command localaws runs the local AWS stack: an AWS-compatible endpoint for
// the provider, the relay and their tests.
//
//	go run ./cmd/localaws --port 4566
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/s3"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "localaws:", err)
		os.Exit(1)
	}
}

// defaultGCPercent is the collector target of the stack process: it keeps
// every table in memory, and with Go's default (100) a large table makes
// each collection mark more, so writes slow down as tables grow
// (BenchmarkWriteRateBySize in internal/localaws/dynamodb measures both).
const defaultGCPercent = 400

// gcTarget is the collector target to set: the flag's, or 0 (keep the
// runtime's) when GOGC is set and the flag was not given.
func gcTarget(fs *flag.FlagSet, percent int) int {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "gc-percent" })
	if !given && os.Getenv("GOGC") != "" {
		return 0
	}
	return percent
}

// run starts the stack, prints its endpoint on stdout and serves until ctx
// is done.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("localaws", flag.ContinueOnError)
	fs.SetOutput(stderr)
	host := fs.String("host", "127.0.0.1", "listen host")
	port := fs.Int("port", 4566, "listen port (0 picks a free port)")
	region := fs.String("region", "us-east-1", "the stack's region")
	account := fs.String("account", "000000000000", "the stack's account id")
	retention := fs.Duration("stream-retention", localaws.DefaultStreamRetention, "DynamoDB stream record retention")
	ttlSweep := fs.Duration("ttl-sweep-interval", localaws.DefaultTTLSweepInterval, "interval of the DynamoDB TTL sweeper")
	lifecycleSweep := fs.Duration("lifecycle-sweep-interval", s3.DefaultLifecycleSweepInterval, "interval of the S3 lifecycle expiration sweep (negative: never)")
	iterLife := fs.Duration("stream-iterator-lifetime", 15*time.Minute, "how long a DynamoDB Streams shard iterator stays valid")
	shards := fs.Int("stream-shards", 1, "shards per DynamoDB stream; records go to a shard by a hash of the partition key")
	shardLife := fs.Duration("stream-shard-lifetime", 0, "how long stream shards take records before they close and child shards open (0: never)")
	replicationLag := fs.Duration("replication-lag", dynamodb.DefaultReplicationLag, "how long a DynamoDB global table's write takes to reach the other Regions' replicas")
	gcPercent := fs.Int("gc-percent", defaultGCPercent, "the Go garbage collector target of this process, as GOGC (0 keeps GOGC or Go's default)")
	logFormat := fs.String("log-format", "text", "log format: text or json")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn, error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *shards < 1 || *shards > 1000 {
		return fmt.Errorf("--stream-shards: %d is not between 1 and 1000", *shards)
	}
	if *shardLife < 0 {
		return fmt.Errorf("--stream-shard-lifetime: %s is negative; use 0 for shards that never roll over", *shardLife)
	}
	if *replicationLag <= 0 {
		return fmt.Errorf("--replication-lag: %s is not positive", *replicationLag)
	}
	if *gcPercent < 0 {
		return fmt.Errorf("--gc-percent: %d is negative; use 0 to keep GOGC or Go's default", *gcPercent)
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	hopts := &slog.HandlerOptions{Level: level}
	var handler slog.Handler = slog.NewTextHandler(stderr, hopts)
	switch *logFormat {
	case "text":
	case "json":
		handler = slog.NewJSONHandler(stderr, hopts)
	default:
		return fmt.Errorf("--log-format: %q is neither text nor json", *logFormat)
	}
	logger := slog.New(handler)

	stack, err := localaws.Start(ctx, localaws.Options{
		Addr:                   net.JoinHostPort(*host, strconv.Itoa(*port)),
		Region:                 *region,
		AccountID:              *account,
		StreamRetention:        *retention,
		TTLSweepInterval:       *ttlSweep,
		LifecycleSweepInterval: *lifecycleSweep,
		StreamIteratorLifetime: *iterLife,
		StreamShards:           *shards,
		StreamShardLifetime:    *shardLife,
		ReplicationLag:         *replicationLag,
		GCPercent:              gcTarget(fs, *gcPercent),
		Logger:                 logger,
	})
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(stdout, stack.Endpoint()); err != nil {
		return errors.Join(fmt.Errorf("printing the endpoint: %w", err), stack.Close())
	}
	<-ctx.Done()
	logger.Info("stopping")
	return stack.Close()
}
