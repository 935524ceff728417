package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
)

// startRun runs the command with args and returns its endpoint once it is
// ready, and a stop function that cancels it and checks that it ends
// cleanly.
func startRun(t *testing.T, args ...string) (endpoint string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"--port", "0", "--log-level", "warn"}, args...), pw, io.Discard)
		_ = pw.Close() // an io.PipeWriter's Close always returns nil
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("reading the endpoint: %v", err)
	}
	endpoint = strings.TrimSpace(line)
	if !strings.HasPrefix(endpoint, "http://127.0.0.1:") {
		cancel()
		t.Fatalf("endpoint = %q", endpoint)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	if err := control.New(endpoint, nil).WaitReady(wctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	return endpoint, func() {
		t.Helper()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("run did not stop")
		}
	}
}

func TestRunServesUntilCancelled(t *testing.T) {
	_, stop := startRun(t, "--stream-retention", "1h")
	stop()
}

// TestRunStreamShards: --stream-shards gives each new stream that many
// shards.
func TestRunStreamShards(t *testing.T) {
	endpoint, stop := startRun(t, "--stream-shards", "4", "--stream-shard-lifetime", "1h")
	defer stop()
	ctx := context.Background()
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDLOCALADMIN", "secret", "")}
	out, err := dynamodb.NewFromConfig(cfg).CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String("sharded"),
		BillingMode:          ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: ddbtypes.KeyTypeHash}},
		StreamSpecification:  &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewTypeKeysOnly},
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := dynamodbstreams.NewFromConfig(cfg).DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: out.TableDescription.LatestStreamArn})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(d.StreamDescription.Shards); n != 4 {
		t.Fatalf("the stream has %d shards, want 4", n)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--log-level", "loud"}, {"--log-format", "yaml"}, {"--nope"},
		{"--stream-shards", "0"}, {"--stream-shard-lifetime", "-1s"}, {"--gc-percent", "-5"},
		{"--replication-lag", "0s"},
	} {
		if err := run(context.Background(), append(args, "--port", "0"), io.Discard, io.Discard); err == nil {
			t.Errorf("run(%v) succeeded", args)
		}
	}
}
