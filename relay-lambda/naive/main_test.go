package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsclient/awsclienttest"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/logging"
)

func TestSetup(t *testing.T) {
	awsclienttest.Isolate(t, map[string]string{"AWS_REGION": "us-east-1"})
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"eventbridge", map[string]string{"OUTBOX_TABLE_NAME": "orders", "OUTBOX_PUBLISHED_ACTION": "delete"}, ""},
		{"sns", map[string]string{"OUTBOX_TABLE_NAME": "orders", "OUTBOX_TARGET": "sns", "OUTBOX_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:orders"}, "EventBridge only"},
		{"no table", map[string]string{}, "OUTBOX_TABLE_NAME"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := setup(context.Background(), func(k string) string { return tt.env[k] }, logging.New(io.Discard, nil))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Config.Table.Name != "orders" || r.Config.PublishedAction != "delete" || r.DynamoDB == nil || r.EventBridge == nil {
				t.Errorf("relay %+v", r)
			}
		})
	}
}
