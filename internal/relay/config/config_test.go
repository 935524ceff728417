package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/internal/validation"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

func env(vars map[string]string) func(string) string {
	return func(name string) string { return vars[name] }
}

func TestFromEnvDefaults(t *testing.T) {
	t.Parallel()
	c, err := FromEnv(env(map[string]string{EnvTableName: "orders"}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Table:           outbox.Table{Name: "orders"}.WithDefaults(),
		Target:          targetkind.Settings{Type: TargetEventBridge, EventBus: "default", Envelope: outbox.FormatOutbox},
		PublishedAction: ActionMark,
		PublishedTTL:    720 * time.Hour,
		ReconcileMinAge: 5 * time.Minute,
		ReconcileShards: 16,
		// No claim-check bucket, no sweep; its window keeps its default.
		ClaimSweepWindow: DefaultClaimSweepWindow,
		// One run at a time, at EventBridge's rate.
		ReconcileMaxWorkers: 1, ReconcileMaxEventsPerSecond: 1000,
		// Three intervals of the default 5-minute schedule.
		TakeoverAfter: 15 * time.Minute, TakeoverSettle: 30 * time.Second,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
}

func TestFromEnvAll(t *testing.T) {
	t.Parallel()
	c, err := FromEnv(env(map[string]string{
		EnvTableName: "app", EnvPartitionKey: "pk", EnvSortKey: "sk", EnvSortKeyPrefix: "EVT#",
		EnvTTLAttribute: "ttl", EnvPendingIndexName: "pending", EnvPendingShards: "32",
		EnvTarget: "sns", EnvTopicARN: "arn:aws:sns:eu-west-1:123456789012:orders",
		EnvPublishedAction: "delete", EnvPublishedTTL: "0", EnvReconcileMinAge: "90s",
		EnvFormerSortKeyPrefixes: "OUTBOX#, OLD#", EnvReconcileShards: "64", EnvPendingIndexEnabled: "false",
		EnvClaimBucket: "app-claims", EnvClaimSweepWindow: "10h", EnvRegions: "us-east-1, eu-west-1,ap-southeast-2",
		EnvReconcileMaxWorkers: "4", EnvReconcileMaxEventsPerSecond: "250",
		EnvTakeoverAfter: "2m", EnvTakeoverSettle: "5s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		Table: outbox.Table{Name: "app", Layout: outbox.LayoutDedicated, PartitionKey: "pk", SortKey: "sk", SortKeyPrefix: "EVT#",
			TTLAttribute: "ttl", PendingIndexName: "pending", PendingShards: 32,
			FormerSortKeyPrefixes: []string{"OUTBOX#", " OLD#"}, NoPendingIndex: true},
		Target:          targetkind.Settings{Type: TargetSNS, TopicARN: "arn:aws:sns:eu-west-1:123456789012:orders", Envelope: outbox.FormatOutbox},
		PublishedAction: ActionDelete, PublishedTTL: 0, ReconcileMinAge: 90 * time.Second,
		ReconcileShards: 64, ClaimBucket: "app-claims", ClaimSweepWindow: 10 * time.Hour,
		ReconcileMaxWorkers: 4, ReconcileMaxEventsPerSecond: 250,
		Regions:       []string{"us-east-1", "eu-west-1", "ap-southeast-2"},
		TakeoverAfter: 2 * time.Minute, TakeoverSettle: 5 * time.Second,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
}

// TestFromEnvOrdered: ordered mode is off by default and on for a FIFO
// queue or topic.
func TestFromEnvOrdered(t *testing.T) {
	t.Parallel()
	vars := map[string]string{EnvTableName: "t", EnvTarget: "sns", EnvTopicARN: "arn:aws:sns:us-east-1:123456789012:orders.fifo"}
	if c, err := FromEnv(env(vars)); err != nil || c.Ordered {
		t.Fatalf("without %s: ordered %t, error %v; want off", EnvOrdered, c.Ordered, err)
	}
	vars[EnvOrdered] = "TRUE"
	if c, err := FromEnv(env(vars)); err != nil || !c.Ordered {
		t.Fatalf("with %s=TRUE: ordered %t, error %v; want on", EnvOrdered, c.Ordered, err)
	}
}

func TestFromEnvBusARN(t *testing.T) {
	t.Parallel()
	arn := "arn:aws:events:us-east-1:123456789012:event-bus/orders"
	c, err := FromEnv(env(map[string]string{EnvTableName: "t", EnvEventBus: arn, EnvTopicARN: "ignored"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Target.EventBus != arn || c.Target.TopicARN != "" {
		t.Errorf("target %+v", c.Target)
	}
}

// TestFromEnvTargets: each kind reads its own variable, FIFO queues and
// topics included, and ignores the others'; every kind reads the envelope.
func TestFromEnvTargets(t *testing.T) {
	t.Parallel()
	for _, want := range []targetkind.Settings{
		{Type: targetkind.SNS, TopicARN: "arn:aws:sns:us-east-1:123456789012:orders.fifo", Envelope: outbox.FormatOutbox},
		{Type: targetkind.SQS, QueueARN: "arn:aws:sqs:us-east-1:123456789012:orders", Envelope: outbox.FormatCloudEvents},
		{Type: targetkind.SQS, QueueARN: "arn:aws:sqs:us-east-1:123456789012:orders.fifo", Envelope: outbox.FormatOutbox},
	} {
		vars := map[string]string{EnvTableName: "t", EnvEventBus: "ignored"}
		for k, v := range want.Env() {
			vars[k] = v
		}
		c, err := FromEnv(env(vars))
		if err != nil {
			t.Fatal(err)
		}
		if c.Target != want {
			t.Errorf("target %+v, want %+v", c.Target, want)
		}
	}
}

func TestFromEnvErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		vars    map[string]string
		wantVar string
		want    string // in the message
	}{
		{"no table", map[string]string{}, EnvTableName, "DynamoDB table"},
		{"shards not a number", map[string]string{EnvPendingShards: "many"}, EnvPendingShards, "1 to 256"},
		{"shards zero", map[string]string{EnvPendingShards: "0"}, EnvPendingShards, "1 to 256"},
		{"shards too many", map[string]string{EnvPendingShards: "257"}, EnvPendingShards, "1 to 256"},
		{"same keys", map[string]string{EnvPartitionKey: "id", EnvSortKey: "id"}, EnvSortKey, "different"},
		{"reserved key", map[string]string{EnvSortKey: "status"}, EnvSortKey, "outbox item"},
		{"reserved ttl", map[string]string{EnvTTLAttribute: "eventId"}, EnvTTLAttribute, "outbox item"},
		{"blank prefix", map[string]string{EnvSortKeyPrefix: "  "}, EnvSortKeyPrefix, "prefix"},
		{"key with space", map[string]string{EnvPartitionKey: "my key"}, EnvPartitionKey, "without spaces"},
		{"unknown target", map[string]string{EnvTarget: "kinesis"}, EnvTarget, `"eventbridge", "sns", "sqs"`},
		{"bad bus", map[string]string{EnvEventBus: "my bus!"}, EnvEventBus, "bus name"},
		{"bad bus arn", map[string]string{EnvEventBus: "arn:aws:sns:us-east-1:123456789012:orders"}, EnvEventBus, "ARN"},
		{"sns without topic", map[string]string{EnvTarget: "sns"}, EnvTopicARN, "not set"},
		{"bad topic", map[string]string{EnvTarget: "sns", EnvTopicARN: "orders"}, EnvTopicARN, "arn:aws:sns"},
		{"sqs without queue", map[string]string{EnvTarget: "sqs"}, targetkind.EnvQueueARN, "not set"},
		{"bad queue", map[string]string{EnvTarget: "SQS", targetkind.EnvQueueARN: "arn:aws:sns:us-east-1:123456789012:orders"}, targetkind.EnvQueueARN, "arn:aws:sqs"},
		{"unknown action", map[string]string{EnvPublishedAction: "archive"}, EnvPublishedAction, `"mark" or "delete"`},
		{"ttl not a duration", map[string]string{EnvPublishedTTL: "30 days"}, EnvPublishedTTL, "Go duration"},
		{"ttl negative", map[string]string{EnvPublishedTTL: "-1h"}, EnvPublishedTTL, "Go duration"},
		{"min age not a duration", map[string]string{EnvReconcileMinAge: "300"}, EnvReconcileMinAge, "Go duration"},
		{"empty former prefix", map[string]string{EnvFormerSortKeyPrefixes: "OLD#,,X#"}, EnvFormerSortKeyPrefixes, "comma-separated"},
		{"reconcile shards below pending shards", map[string]string{EnvPendingShards: "8", EnvReconcileShards: "4"}, EnvReconcileShards, "from OUTBOX_PENDING_SHARDS (8) to 256"},
		{"reconcile shards not a number", map[string]string{EnvReconcileShards: "all"}, EnvReconcileShards, "256"},
		{"pending index not a boolean", map[string]string{EnvPendingIndexEnabled: "no"}, EnvPendingIndexEnabled, `"true" or "false"`},
		{"no pending index in mark mode", map[string]string{EnvPendingIndexEnabled: "false"}, EnvPendingIndexEnabled, `set OUTBOX_PUBLISHED_ACTION to "delete"`},
		{"ordered not a boolean", map[string]string{EnvOrdered: "yes"}, EnvOrdered, `"true" or "false"`},
		{"ordered to a bus", map[string]string{EnvOrdered: "true"}, EnvOrdered, "SNS FIFO topic or an SQS FIFO queue"},
		{"ordered to a standard queue", map[string]string{EnvOrdered: "true", EnvTarget: "sqs", targetkind.EnvQueueARN: "arn:aws:sqs:us-east-1:123456789012:orders"}, EnvOrdered, "does not keep an order per key"},
		{"one Region", map[string]string{EnvRegions: "us-east-1"}, EnvRegions, "needs at least 2"},
		{"not a Region", map[string]string{EnvRegions: "us-east-1,mars"}, EnvRegions, `"mars", which is not an AWS Region name`},
		{"a Region twice", map[string]string{EnvRegions: "us-east-1,eu-west-1,us-east-1"}, EnvRegions, `"us-east-1" twice`},
		{"no takeover delay", map[string]string{EnvTakeoverAfter: "0s"}, EnvTakeoverAfter, "is zero"},
		{"a takeover delay not a duration", map[string]string{EnvTakeoverAfter: "15"}, EnvTakeoverAfter, "is not a duration"},
		{"a settle time as long as the delay", map[string]string{EnvTakeoverAfter: "1m", EnvTakeoverSettle: "1m"}, EnvTakeoverSettle, "is not below OUTBOX_TAKEOVER_AFTER 1m0s"},
		{"ordered with a prefix of the cursor", map[string]string{EnvOrdered: "true", EnvSortKeyPrefix: "OUTBOX-", EnvTarget: "sqs", targetkind.EnvQueueARN: "arn:aws:sqs:us-east-1:123456789012:orders.fifo"}, EnvSortKeyPrefix, "OUTBOX#"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			vars := map[string]string{EnvTableName: "orders"}
			if tt.wantVar == EnvTableName {
				vars = map[string]string{}
			}
			for k, v := range tt.vars {
				vars[k] = v
			}
			_, err := FromEnv(env(vars))
			var e *validation.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want *validation.Error", err, err)
			}
			if e.Field != tt.wantVar {
				t.Errorf("error names %s, want %s: %v", e.Field, tt.wantVar, err)
			}
			if msg := err.Error(); !strings.Contains(msg, tt.wantVar) || !strings.Contains(msg, tt.want) {
				t.Errorf("message %q lacks %q or %q", msg, tt.wantVar, tt.want)
			}
		})
	}
}

// TestFromEnvReconcileScale: the reconciler's workers and publishing rate,
// whose default depends on the target kind, and their bounds.
func TestFromEnvReconcileScale(t *testing.T) {
	t.Parallel()
	base := map[string]string{EnvTableName: "outbox"}
	c, err := FromEnv(env(base))
	if err != nil || c.ReconcileMaxWorkers != 1 || c.ReconcileMaxEventsPerSecond != 1000 {
		t.Errorf("defaults: %d workers, %d events/s, %v; want 1 and 1000 (EventBridge)", c.ReconcileMaxWorkers, c.ReconcileMaxEventsPerSecond, err)
	}
	queue := map[string]string{EnvTableName: "outbox", EnvTarget: "sqs", "OUTBOX_QUEUE_ARN": "arn:aws:sqs:us-east-1:123456789012:q",
		EnvReconcileMaxWorkers: "8"}
	if c, err := FromEnv(env(queue)); err != nil || c.ReconcileMaxWorkers != 8 || c.ReconcileMaxEventsPerSecond != 3000 {
		t.Errorf("a standard queue: %d workers, %d events/s, %v; want 8 and 3000", c.ReconcileMaxWorkers, c.ReconcileMaxEventsPerSecond, err)
	}
	for name, value := range map[string]string{EnvReconcileMaxWorkers: "0", EnvReconcileMaxEventsPerSecond: "x"} {
		vars := map[string]string{EnvTableName: "outbox", name: value}
		if _, err := FromEnv(env(vars)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: %v, want an error naming the variable", name, value, err)
		}
	}
}
