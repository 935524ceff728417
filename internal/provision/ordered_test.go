package provision

import (
	"slices"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
)

// TestOrderedSpec: ordered mode needs a FIFO target and a sort key prefix
// that the cursor items do not begin with; it reaches the relay's
// environment and is read back from it.
func TestOrderedSpec(t *testing.T) {
	t.Parallel()
	fifo := TargetSpec{Type: targetkind.SQS, QueueARN: "arn:aws:sqs:eu-west-1:123456789012:orders.fifo"}
	for _, tt := range []struct {
		name  string
		spec  Spec
		field string
	}{
		{"fifo queue", Spec{Name: "orders", Ordered: true, Target: fifo}, ""},
		{"bus", Spec{Name: "orders", Ordered: true}, "Ordered"},
		{"standard topic", Spec{Name: "orders", Ordered: true, Target: TargetSpec{Type: targetkind.SNS, TopicARN: "arn:aws:sns:eu-west-1:123456789012:orders"}}, "Ordered"},
		{"prefix of the cursor items", Spec{Name: "orders", Ordered: true, Target: fifo, Table: TableSpec{SortKeyPrefix: "OUTBOX-"}}, "Table.SortKeyPrefix"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantValidation(t, tt.spec, tt.field)
		})
	}
	s := Spec{Name: "orders", Ordered: true, Target: fifo}
	env := s.Environment("")
	c, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil || !c.Ordered {
		t.Fatalf("relay configuration of an ordered spec: ordered %t, %v", c.Ordered, err)
	}
	if back := specFromEnv("orders", c, env); !back.Ordered {
		t.Errorf("the spec read back from the relay's environment is not ordered")
	}
	if env := (Spec{Name: "orders", Target: fifo}).Environment(""); env[config.EnvOrdered] != "" {
		t.Errorf("an unordered spec sets %s=%q", config.EnvOrdered, env[config.EnvOrdered])
	}
	// The reconciler reads the cursors with BatchGetItem, and scans the
	// table for FAILED events before it starts a cursor, in ordered mode
	// only; the relay reads items with BatchGetItem in both.
	for ordered, want := range map[bool]bool{true: true, false: false} {
		doc := ReconcilerPolicy(Spec{Name: "orders", Ordered: ordered, Target: fifo}, Resources{TableARN: "arn:aws:dynamodb:eu-west-1:123456789012:table/orders-outbox"})
		for _, action := range []string{"dynamodb:BatchGetItem", "dynamodb:Scan"} {
			if got := slices.ContainsFunc(doc.Statement, func(st Statement) bool { return slices.Contains(st.Action, action) }); got != want {
				t.Errorf("ordered %t: the reconciler's policy grants %s: %t, want %t", ordered, action, got, want)
			}
		}
	}
}
