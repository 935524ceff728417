package provision

import (
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// A pipeline created again right after its deletion waits until SQS accepts
// the dead-letter queue's name again.
func TestLocalCreateWaitsForQueueDeletedRecently(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, coreServices...)
	ctl := localawstest.Control(stack)
	rule, err := ctl.AddFault(ctx, control.FaultRule{
		Service: "sqs", Operation: "CreateQueue", Count: 2,
		Code: "AWS.SimpleQueueService.QueueDeletedRecently", Message: "You must wait 60 seconds after deleting a queue before you can create another with the same name.",
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Create(ctx, Spec{Name: "again", Reconciler: ReconcilerSpec{Disabled: true}})
	if err != nil {
		t.Fatalf("Create while the queue name is refused: %v", err)
	}
	if st.QueueURL == "" {
		t.Errorf("Create recorded no queue: %+v", st)
	}
	faults, err := ctl.Faults(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range faults {
		if f.ID == rule.ID {
			t.Errorf("the injected refusal did not fire twice: %+v", f)
		}
	}
	must.Delete(t, ctx, c, st, "Delete")
}
