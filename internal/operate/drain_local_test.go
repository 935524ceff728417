package operate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/pipeline"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// With the mapping paused, drain times out, says what is left and that it
// does not stop writers; once the mapping resumes, drain ends with nothing
// pending.
func TestLocalDrain(t *testing.T) {
	t.Parallel()
	d := deploy(t, pipeline.Spec{Name: "drain", Reconciler: pipeline.ReconcilerSpec{Disabled: true}})
	ctl := localawstest.Control(d.stack)
	if _, err := ctl.PauseMapping(d.ctx, d.state.MappingUUID); err != nil {
		t.Fatal(err)
	}
	events := make([]outbox.Event, 3)
	for i := range events {
		events[i] = outbox.Event{Source: "com.example.drain", DetailType: "OrderPlaced", Detail: json.RawMessage(`{}`)}
	}
	d.write(events...)

	out, errOut, code := d.run("drain", "drain", "--timeout", "2s", "--interval", "200ms")
	if code != ExitStuck {
		t.Errorf("drain with the mapping paused exited %d, want %d", code, ExitStuck)
	}
	for _, want := range []string{"does not stop the application's writers", "timed out after", "3 events still pending"} {
		if !strings.Contains(out, want) {
			t.Errorf("drain's output lacks %q", want)
		}
	}
	if !strings.Contains(errOut, "3 events of drain are still pending") {
		t.Errorf("drain's error lacks what is left: %q", errOut)
	}
	if out, _, _ := d.run("status", "drain"); !strings.Contains(out, "reconciler          disabled") {
		t.Errorf("status does not say the reconciler is disabled")
	}

	if _, err := ctl.ResumeMapping(d.ctx, d.state.MappingUUID); err != nil {
		t.Fatal(err)
	}
	out, _, code = d.run("drain", "drain", "--timeout", "2m", "--interval", "200ms")
	if code != ExitOK || !strings.Contains(out, "drained: no event of drain is pending") {
		t.Errorf("drain after resuming: exit %d", code)
	}
}
