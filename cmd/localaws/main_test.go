package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
)

func TestRunServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--port", "0", "--stream-retention", "1h", "--log-level", "warn"}, pw, io.Discard)
		_ = pw.Close() // an io.PipeWriter's Close always returns nil
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the endpoint: %v", err)
	}
	endpoint := strings.TrimSpace(line)
	if !strings.HasPrefix(endpoint, "http://127.0.0.1:") {
		t.Fatalf("endpoint = %q", endpoint)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	if err := control.New(endpoint, nil).WaitReady(wctx); err != nil {
		t.Fatal(err)
	}
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

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--log-level", "loud"}, {"--log-format", "yaml"}, {"--nope"}} {
		if err := run(context.Background(), append(args, "--port", "0"), io.Discard, io.Discard); err == nil {
			t.Errorf("run(%v) succeeded", args)
		}
	}
}
