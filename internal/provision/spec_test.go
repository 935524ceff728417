package provision

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
)

// validateCases are Specs that Validate accepts (field "") or refuses on
// field: each case modifies a Spec with only a Name.
var validateCases = []struct {
	name   string
	modify func(*Spec)
	field  string // "" means valid
}{
	{"defaults", func(*Spec) {}, ""},
	{"empty name", func(s *Spec) { s.Name = "" }, "Name"},
	{"long name", func(s *Spec) { s.Name = strings.Repeat("a", MaxNameLength+1) }, "Name"},
	{"longest name", func(s *Spec) { s.Name = strings.Repeat("a", MaxNameLength) }, ""},
	{"name with a dot", func(s *Spec) { s.Name = "orders.v1" }, "Name"},
	{"existing table without name", func(s *Spec) { s.Table.Existing = true }, "Table.Name"},
	{"existing table", func(s *Spec) { s.Table = TableSpec{Existing: true, Name: "app"} }, ""},
	{"bad table name", func(s *Spec) { s.Table.Name = "a b" }, "Table.Name"},
	{"same keys", func(s *Spec) { s.Table.SortKey = "PK" }, "Table.SortKey"},
	{"reserved key", func(s *Spec) { s.Table.PartitionKey = "status" }, "Table.PartitionKey"},
	{"blank prefix", func(s *Spec) { s.Table.SortKeyPrefix = "  " }, "Table.SortKeyPrefix"},
	{"too many shards", func(s *Spec) { s.Table.PendingShards = 257 }, "Table.PendingShards"},
	{"short index name", func(s *Spec) { s.Table.PendingIndexName = "ix" }, "Table.PendingIndexName"},
	{"bus arn", func(s *Spec) { s.Target.EventBus = "arn:aws:events:us-east-1:123456789012:event-bus/orders" }, ""},
	{"bad bus", func(s *Spec) { s.Target.EventBus = "a bus" }, "Target.EventBus"},
	{"topic on eventbridge", func(s *Spec) { s.Target.TopicARN = "arn:aws:sns:us-east-1:123456789012:t" }, "Target.TopicARN"},
	{"sns without topic", func(s *Spec) { s.Target.Type = config.TargetSNS }, "Target.TopicARN"},
	{"sns", func(s *Spec) {
		s.Target = TargetSpec{Type: config.TargetSNS, TopicARN: "arn:aws:sns:us-east-1:123456789012:orders"}
	}, ""},
	{"fifo topic", func(s *Spec) {
		s.Target = TargetSpec{Type: config.TargetSNS, TopicARN: "arn:aws:sns:us-east-1:123456789012:orders.fifo"}
	}, ""},
	{"queue", func(s *Spec) {
		s.Target = TargetSpec{Type: targetkind.SQS, QueueARN: "arn:aws:sqs:us-east-1:123456789012:orders"}
	}, ""},
	{"fifo queue", func(s *Spec) {
		s.Target = TargetSpec{Type: targetkind.SQS, QueueARN: "arn:aws:sqs:us-east-1:123456789012:orders.fifo"}
	}, ""},
	{"sqs without queue", func(s *Spec) { s.Target.Type = targetkind.SQS }, "Target.QueueARN"},
	{"topic as queue", func(s *Spec) {
		s.Target = TargetSpec{Type: targetkind.SQS, QueueARN: "arn:aws:sns:us-east-1:123456789012:orders"}
	}, "Target.QueueARN"},
	{"queue on sns", func(s *Spec) {
		s.Target = TargetSpec{Type: config.TargetSNS, TopicARN: "arn:aws:sns:us-east-1:123456789012:orders", QueueARN: "arn:aws:sqs:us-east-1:123456789012:orders"}
	}, "Target.QueueARN"},
	{"unknown target", func(s *Spec) { s.Target.Type = "kinesis" }, "Target.Type"},
	{"unknown action", func(s *Spec) { s.PublishedAction = "archive" }, "PublishedAction"},
	{"negative ttl", func(s *Spec) { s.PublishedTTL = ptr(-time.Hour) }, "PublishedTTL"},
	{"zero ttl", func(s *Spec) { s.PublishedTTL = ptr(time.Duration(0)) }, ""},
	{"sub-second ttl", func(s *Spec) { s.PublishedTTL = ptr(time.Millisecond) }, "PublishedTTL"},
	{"architecture", func(s *Spec) { s.Architecture = "ppc64" }, "Architecture"},
	{"x86", func(s *Spec) { s.Architecture = ArchX86_64 }, ""},
	{"memory", func(s *Spec) { s.Relay.MemorySize = 64 }, "Relay.MemorySize"},
	{"timeout", func(s *Spec) { s.Relay.Timeout = 901 }, "Relay.Timeout"},
	{"concurrency", func(s *Spec) { s.Relay.ReservedConcurrency = ptr(int32(-1)) }, "Relay.ReservedConcurrency"},
	{"retention", func(s *Spec) { s.Relay.LogRetentionDays = 2 }, "Relay.LogRetentionDays"},
	{"batch size", func(s *Spec) { s.Mapping.BatchSize = 10001 }, "Mapping.BatchSize"},
	{"window", func(s *Spec) { s.Mapping.MaximumBatchingWindowSeconds = 301 }, "Mapping.MaximumBatchingWindowSeconds"},
	{"parallelization", func(s *Spec) { s.Mapping.ParallelizationFactor = 11 }, "Mapping.ParallelizationFactor"},
	{"retries", func(s *Spec) { s.Mapping.MaximumRetryAttempts = ptr(int32(-2)) }, "Mapping.MaximumRetryAttempts"},
	{"infinite retries", func(s *Spec) { s.Mapping.MaximumRetryAttempts = ptr(int32(-1)) }, ""},
	{"zero retries", func(s *Spec) { s.Mapping.MaximumRetryAttempts = ptr(int32(0)) }, ""},
	{"record age", func(s *Spec) { s.Mapping.MaximumRecordAgeSeconds = ptr(int32(30)) }, "Mapping.MaximumRecordAgeSeconds"},
	{"queue retention", func(s *Spec) { s.DeadLetterQueue.MessageRetentionSeconds = 30 }, "DeadLetterQueue.MessageRetentionSeconds"},
	{"schedule", schedule("every 5 minutes", 0), "Reconciler.ScheduleExpression"},
	{"cron", schedule("cron(0/5 * * * ? *)", 0), ""},
	{"bad schedule when disabled", func(s *Spec) {
		s.Reconciler = ReconcilerSpec{Disabled: true, ScheduleExpression: "never"}
	}, ""},
	{"rate shorter than the timeout", schedule("rate(1 minute)", 0), "Reconciler.ScheduleExpression"},
	{"rate one minute under the timeout", schedule("rate(4 minutes)", 0), "Reconciler.ScheduleExpression"},
	{"rate equal to the timeout", schedule("rate(1 minute)", 60), ""},
	{"rate one second under the timeout", schedule("rate(1 minute)", 61), "Reconciler.ScheduleExpression"},
	{"rate longer than a long timeout", schedule("rate(15 minutes)", 900), ""},
	{"rate in hours", schedule("rate(1 hour)", 900), ""},
	{"rate of zero", schedule("rate(0 minutes)", 0), "Reconciler.ScheduleExpression"},
	{"rate beyond int64", schedule("rate(99999999999999999999 days)", 0), ""},
	{"cron is not checked against the timeout", schedule("cron(* * * * ? *)", 900), ""},
	{"short rate when disabled", func(s *Spec) {
		s.Reconciler = ReconcilerSpec{Disabled: true, ScheduleExpression: "rate(1 minute)"}
	}, ""},
	{"min age", func(s *Spec) { s.Reconciler.MinAge = time.Millisecond }, "Reconciler.MinAge"},
	{"reconciler memory", func(s *Spec) { s.Reconciler.Function.MemorySize = 20000 }, "Reconciler.Function.MemorySize"},
	{"aws tag", func(s *Spec) { s.Tags = map[string]string{"aws:x": "y"} }, "Tags"},
}

// schedule sets the reconciler's schedule expression and, when not 0, its
// function's timeout.
func schedule(expr string, timeout int32) func(*Spec) {
	return func(s *Spec) {
		s.Reconciler.ScheduleExpression = expr
		if timeout != 0 {
			s.Reconciler.Function.Timeout = timeout
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	valid := func() Spec { return Spec{Name: "orders"} }
	for _, tt := range validateCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := valid()
			tt.modify(&s)
			err := s.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate() = %v, want a *ValidationError on %s", err, tt.field)
			}
			if ve.Field != tt.field || ve.Fix == "" {
				t.Fatalf("Validate() = %v (field %q), want field %q with a fix", err, ve.Field, tt.field)
			}
		})
	}
}

func TestWithDefaults(t *testing.T) {
	t.Parallel()
	s := Spec{Name: "orders"}.WithDefaults()
	if s.Table.Name != "orders-outbox" || s.Table.PartitionKey != "PK" || s.Table.SortKeyPrefix != "OUTBOX#" {
		t.Errorf("table defaults: %+v", s.Table)
	}
	if s.Target.Type != config.TargetEventBridge || s.Target.EventBus != "default" {
		t.Errorf("target defaults: %+v", s.Target)
	}
	if *s.Mapping.MaximumRetryAttempts != 10 || *s.Mapping.MaximumRecordAgeSeconds != -1 || !*s.Mapping.BisectBatchOnFunctionError {
		t.Errorf("mapping defaults: %+v", s.Mapping)
	}
	if s.Architecture != ArchARM64 || s.Relay.MemorySize != 256 || s.Relay.LogRetentionDays != 14 {
		t.Errorf("function defaults: %+v %+v", s.Architecture, s.Relay)
	}
	if s.Reconciler.ScheduleExpression != "rate(5 minutes)" || s.Reconciler.MinAge != 5*time.Minute {
		t.Errorf("reconciler defaults: %+v", s.Reconciler)
	}
	// Defaults are idempotent.
	again := s.WithDefaults()
	if !reflect.DeepEqual(again.Table, s.Table) || *again.PublishedTTL != *s.PublishedTTL {
		t.Errorf("WithDefaults is not idempotent")
	}
}

func TestEnvironmentIsValidRelayConfig(t *testing.T) {
	t.Parallel()
	for _, s := range []Spec{
		{Name: "orders"},
		{Name: "orders", Table: TableSpec{Existing: true, Name: "app", PartitionKey: "pk", SortKey: "sk", SortKeyPrefix: "EVT#"},
			Target:          TargetSpec{Type: config.TargetSNS, TopicARN: "arn:aws:sns:eu-west-1:123456789012:orders"},
			PublishedAction: config.ActionDelete, PublishedTTL: ptr(time.Duration(0)), Reconciler: ReconcilerSpec{MinAge: time.Minute}},
		{Name: "orders", Target: TargetSpec{Type: targetkind.SQS, QueueARN: "arn:aws:sqs:eu-west-1:123456789012:orders.fifo"}},
	} {
		env := s.Environment("ttl")
		c, err := config.FromEnv(func(k string) string { return env[k] })
		if err != nil {
			t.Fatalf("config.FromEnv(%v) = %v", env, err)
		}
		want := s.WithDefaults()
		if c.Table.Name != want.Table.Name || c.Table.SortKeyPrefix != want.Table.SortKeyPrefix || c.Table.TTLAttribute != "ttl" ||
			c.Target != want.Target || c.PublishedAction != want.PublishedAction ||
			c.PublishedTTL != *want.PublishedTTL || c.ReconcileMinAge != want.Reconciler.MinAge {
			t.Errorf("relay configuration %+v does not match the spec %+v", c, want)
		}
	}
}

func TestReplacementFields(t *testing.T) {
	t.Parallel()
	old := Spec{Name: "orders"}
	inPlace := old
	inPlace.Mapping.BatchSize = 10
	inPlace.Relay.MemorySize = 1024
	inPlace.Architecture = ArchX86_64
	inPlace.Table.SortKeyPrefix = "EVT#"
	inPlace.Reconciler.Disabled = true
	inPlace.Tags = map[string]string{"team": "a"}
	if got := ReplacementFields(old, inPlace); len(got) != 0 {
		t.Errorf("ReplacementFields(in-place changes) = %v", got)
	}
	renamed := old
	renamed.Name = "payments"
	if got := ReplacementFields(old, renamed); strings.Join(got, ",") != "Name,Table.Name" {
		t.Errorf("ReplacementFields(rename) = %v", got)
	}
	adopt := old
	adopt.Table = TableSpec{Existing: true, Name: "orders-outbox"}
	if got := ReplacementFields(old, adopt); strings.Join(got, ",") != "Table.Existing" {
		t.Errorf("ReplacementFields(adopt) = %v", got)
	}
}

func TestValidateScheduleOverlapMessage(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		r    ReconcilerSpec
		want string
	}{
		{"default timeout", ReconcilerSpec{ScheduleExpression: "rate(1 minute)"},
			`outbox pipeline Reconciler.ScheduleExpression is "rate(1 minute)", every 60 seconds, shorter than the reconciler's timeout (300 seconds): ` +
				`a run could start before the previous one ends: use an interval of at least the timeout, such as "rate(5 minutes)", ` +
				`or lower the reconciler's timeout to at most 60 seconds`},
		{"timeout in between minutes", ReconcilerSpec{ScheduleExpression: "rate(2 minutes)", Function: FunctionSpec{Timeout: 181}},
			`is "rate(2 minutes)", every 120 seconds, shorter than the reconciler's timeout (181 seconds): a run could start before the previous one ends: ` +
				`use an interval of at least the timeout, such as "rate(4 minutes)", or lower the reconciler's timeout to at most 120 seconds`},
	} {
		err := Spec{Name: "orders", Reconciler: c.r}.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate() = %v, want an error containing %q", c.name, err, c.want)
		}
	}
	// The defaults are valid, and the suggested schedule fixes the error.
	for _, timeout := range []int32{DefaultReconcilerTimeout, 61, 181, 900} {
		s := Spec{Name: "orders", Reconciler: ReconcilerSpec{Function: FunctionSpec{Timeout: timeout}}}
		s.Reconciler.ScheduleExpression = fmt.Sprintf("rate(%d minutes)", (timeout+59)/60)
		if err := s.Validate(); err != nil {
			t.Errorf("timeout %d with the suggested schedule: %v", timeout, err)
		}
	}
	if err := (Spec{Name: "orders"}).Validate(); err != nil {
		t.Errorf("the default schedule and timeout: %v", err)
	}
}
