package logging

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

func TestRequestID(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := New(&buf, slog.LevelInfo).With("component", "relay")
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-123"})
	log.InfoContext(ctx, "stream batch processed", "published", 3)
	log.Debug("hidden")
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("not one JSON line: %q", buf.String())
	}
	if line["requestId"] != "req-123" || line["msg"] != "stream batch processed" || line["component"] != "relay" || line["published"] != float64(3) {
		t.Errorf("line %v", line)
	}
}

func TestParseLevel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]slog.Level{"DEBUG": slog.LevelDebug, "TRACE": slog.LevelDebug, "WARN": slog.LevelWarn, "ERROR": slog.LevelError, "": slog.LevelInfo, "INFO": slog.LevelInfo} {
		if got := ParseLevel(in); got != want {
			t.Errorf("ParseLevel(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestOrDiscard(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := New(&buf, slog.LevelInfo)
	if OrDiscard(log) != log {
		t.Error("OrDiscard replaced a logger")
	}
	discard := OrDiscard(nil)
	if discard == nil || discard.Enabled(context.Background(), slog.LevelError) {
		t.Errorf("OrDiscard(nil) = %v, want a logger that discards every record", discard)
	}
}
