package operate

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

// With the mapping paused, drain times out, says what is left and that it
// does not stop writers; once the mapping resumes, drain ends with nothing
// pending.
func TestLocalDrain(t *testing.T) {
	t.Parallel()
	d := deploy(t, provision.Spec{Name: "drain", Reconciler: provision.ReconcilerSpec{Disabled: true}})
	ctl := localawstest.Control(d.stack)
	if _, err := ctl.PauseMapping(d.ctx, d.state.MappingUUID); err != nil {
		t.Fatal(err)
	}
	d.write(orderPlaced("com.example.drain", 3)...)

	out, errOut, code := d.run("drain", "drain", "--timeout", "2s", "--interval", "200ms")
	if code != ExitStuck {
		t.Errorf("drain with the mapping paused exited %d, want %d", code, ExitStuck)
	}
	if !strings.Contains(out, "timed out after") || !strings.Contains(out, "3 events still pending") {
		t.Errorf("drain's result does not say what is left: %q", out)
	}
	for _, want := range []string{"does not stop the application's writers", "pipeline drain still has 3 events pending"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("drain's standard error lacks %q: %q", want, errOut)
		}
	}
	out, _, code = d.runOn(true, "drain", "drain", "--timeout", "1s", "--interval", "200ms", "--json")
	var res DrainOutput
	parseJSON(t, out, &res)
	if code != ExitStuck || res.Drained || res.Pending != 3 || res.Pipeline != "drain" || res.TimeoutSeconds != 1 || res.ElapsedSeconds < 1 {
		t.Errorf("drain --json with the mapping paused: exit %d, %+v", code, res)
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
	out, _, code = d.run("drain", "drain", "--json")
	res = DrainOutput{}
	parseJSON(t, out, &res)
	if code != ExitOK || !res.Drained || res.Pending != 0 || res.TimeoutSeconds != 600 {
		t.Errorf("drain --json once drained: exit %d, %+v", code, res)
	}

	// A component deleted out of band is named, with the fix.
	if _, err := sqs.NewFromConfig(d.cfg).DeleteQueue(d.ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(d.state.QueueURL)}); err != nil {
		t.Fatal(err)
	}
	out, _, code = d.run("status", "drain")
	if code != ExitStuck || !strings.Contains(out, "dead-letter queue   missing (drain-relay-dlq)") || !strings.Contains(out, "run terraform apply to recreate it") {
		t.Errorf("status without its DLQ: exit %d", code)
	}
	if _, errOut, code := d.run("redrive", "drain"); code != ExitNotFound || !strings.Contains(errOut, "dead-letter queue drain-relay-dlq does not exist: run terraform apply") {
		t.Errorf("redrive without its DLQ: exit %d, %q", code, errOut)
	}
}
