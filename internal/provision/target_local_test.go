package provision

import (
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/component/componenttest"
)

func TestLocalCreateRefusesMissingTarget(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, append(coreServices, "events", "sns")...)
	before := componenttest.Inventory(t, ctx, stack)
	for _, tc := range []struct {
		target TargetSpec
		want   string
	}{
		{TargetSpec{EventBus: "no-such-bus"}, "event bus (no-such-bus): it does not exist in us-east-1"},
		{TargetSpec{EventBus: "arn:aws:events:eu-west-1:000000000000:event-bus/default"}, "it is in eu-west-1, but the pipeline is in us-east-1"},
		{TargetSpec{Type: "sns", TopicARN: "arn:aws:sns:us-east-1:000000000000:no-such-topic"}, "SNS topic (arn:aws:sns:us-east-1:000000000000:no-such-topic): it does not exist"},
	} {
		st, err := c.Create(ctx, Spec{Name: "untargeted", Target: tc.target, Reconciler: ReconcilerSpec{Disabled: true}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Create with target %+v: %v, want an error saying %q", tc.target, err, tc.want)
		}
		if st.Exists() {
			t.Errorf("Create with target %+v recorded %+v", tc.target, st)
		}
	}
	componenttest.CheckInventory(t, ctx, stack, before, "refused creations")
}
