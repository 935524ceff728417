package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsclient/awsclienttest"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/logging"
)

func TestSetup(t *testing.T) {
	awsclienttest.Isolate(t, map[string]string{"AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": "http://127.0.0.1:4566"})
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"eventbridge", map[string]string{"OUTBOX_TABLE_NAME": "orders"}, ""},
		{"sns", map[string]string{"OUTBOX_TABLE_NAME": "orders", "OUTBOX_TARGET": "sns", "OUTBOX_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:orders"}, ""},
		{"no table", map[string]string{}, "OUTBOX_TABLE_NAME"},
		{"bad ttl", map[string]string{"OUTBOX_TABLE_NAME": "orders", "OUTBOX_PUBLISHED_TTL": "a month"}, "OUTBOX_PUBLISHED_TTL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			getenv := func(k string) string { return tt.env[k] }
			r, err := setup(context.Background(), getenv, logging.New(&logs, nil))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || r == nil {
				t.Fatalf("setup: %v", err)
			}
			if !strings.Contains(logs.String(), `"relay configured"`) {
				t.Errorf("logs %q", logs.String())
			}
		})
	}
}

// TestHandlerShape invokes the handler as the Lambda runtime does, through
// aws-lambda-go's reflection, with payloads that need no AWS call.
func TestHandlerShape(t *testing.T) {
	awsclienttest.Isolate(t, map[string]string{"AWS_REGION": "us-east-1"})
	r, err := setup(context.Background(), func(k string) string {
		return map[string]string{"OUTBOX_TABLE_NAME": "orders"}[k]
	}, logging.New(io.Discard, nil))
	if err != nil {
		t.Fatal(err)
	}
	h := lambda.NewHandler(r.Handle)
	out, err := h.Invoke(context.Background(), []byte(`{"Records":[{"eventName":"MODIFY","eventSource":"aws:dynamodb","dynamodb":{"Keys":{"PK":{"S":"a"},"SK":{"S":"OUTBOX#1"}},"SequenceNumber":"1"}}]}`))
	if err != nil || string(out) != `{"batchItemFailures":[]}` {
		t.Errorf("stream batch: %s, %v", out, err)
	}
	if _, err := h.Invoke(context.Background(), []byte(`{"hello":"world"}`)); err == nil || !strings.Contains(err.Error(), "unsupported payload") {
		t.Errorf("unknown payload: %v", err)
	}
}
