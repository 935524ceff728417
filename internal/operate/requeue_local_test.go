package operate

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// A thousand FAILED events: status reports them and exits 1, failed lists
// them by filter, requeue --dry-run changes nothing, and requeue --now
// delivers every one of them; status is healthy afterwards.
func TestLocalStatusFailedRequeue(t *testing.T) {
	t.Parallel()
	d := deploy(t, provision.Spec{Name: "ops"})
	const source = "com.example.ops"
	sub := d.subscribe("ops-consumer", "default", source)

	delivered := d.write(outbox.Event{Source: source, DetailType: "OrderPlaced", Detail: json.RawMessage(`{"ok":true}`)})
	sub.waitFor(t, idsOf(delivered))

	const n = 1000
	failed := d.putFailed(n, source, func(i int) string {
		if i%4 == 0 {
			return "EventBridge: AccessDeniedException: not authorized on bus default"
		}
		return "EventBridge: ResourceNotFoundException: bus default does not exist"
	})

	out, _, code := d.run("status", "ops")
	if code != ExitStuck {
		t.Errorf("status with FAILED events exited %d, want %d", code, ExitStuck)
	}
	for _, want := range []string{"failed              1000", "   750  EventBridge: ResourceNotFoundException", "   250  EventBridge: AccessDeniedException", "STUCK", "outbox requeue ops"} {
		if !strings.Contains(out, want) {
			t.Errorf("status output lacks %q", want)
		}
	}

	out, _, code = d.run("failed", "ops", "--reason", "AccessDenied", "--source", source, "--since", "1h")
	if code != ExitOK || !strings.Contains(out, "250 FAILED events") || !strings.Contains(out, failed[0].EventID) || strings.Contains(out, failed[1].EventID) {
		t.Errorf("failed --reason AccessDenied: exit %d, output does not list exactly the 250 events", code)
	}
	if !regexp.MustCompile(`\n`+failed[0].EventID+` .* OrderPlaced +[0-9.]+m?s +20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ +EventBridge: AccessDenied`).MatchString(out) || !strings.Contains(out, " AGE ") || !strings.Contains(out, " FAILED AT ") {
		t.Errorf("failed does not show the time of failure:\n%s", out[:min(len(out), 400)])
	}
	if out, _, _ := d.run("failed", "ops", "--source", "com.example.other"); !strings.Contains(out, "0 FAILED events") {
		t.Errorf("failed --source of another source lists events")
	}

	if out, _, code := d.run("requeue", "ops", "--dry-run"); code != ExitOK || !strings.Contains(out, fmt.Sprintf("would requeue %d FAILED events", n)) {
		t.Errorf("requeue --dry-run: exit %d", code)
	}
	if out, _, _ := d.run("failed", "ops"); !strings.Contains(out, fmt.Sprintf("%d FAILED events", n)) {
		t.Errorf("requeue --dry-run changed the FAILED events")
	}

	// On a terminal, the bar is drawn on standard error; the result is
	// one JSON document on standard output.
	out, errOut, code := d.runOn(true, "requeue", "ops", "--now", "--json")
	var res RequeueOutput
	parseJSON(t, out, &res)
	if code != ExitOK || res.Pipeline != "ops" || res.DryRun || res.Selected != n || res.Requeued != n || res.Skipped != 0 || len(res.Events) != n {
		t.Fatalf("requeue --now --json: exit %d, selected %d, requeued %d, skipped %d, %d events", code, res.Selected, res.Requeued, res.Skipped, len(res.Events))
	}
	if r := res.Reconciler; r == nil || len(r.Runs) == 0 || r.Runs[0].Found != n || r.Runs[0].Published != n || r.LeftPending != 0 || !r.Complete {
		t.Errorf("requeue --now --json reports the reconciler as %+v", r)
	}
	if !strings.Contains(errOut, "\r\033[Krequeueing [") || !strings.HasSuffix(errOut, "\r\033[K") || strings.Contains(out, "\r") {
		t.Errorf("the progress on a terminal is not a bar on standard error, cleared at the end: %q", errOut)
	}
	sub.waitFor(t, idsOf(failed))

	// status reads the reconciler's runs from its log group. The stack
	// waits at most 50 ms for a function's output before answering its
	// invocation, so on a loaded machine a run's line may reach the log
	// group after requeue has returned: wait for the runs' lines to count
	// every event published, then check the whole status.
	var s Status
	waitUntil(t, "status reporting the reconciler's run", func() bool {
		out, _, code = d.run("status", "ops", "--json")
		s = Status{}
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("status --json is not JSON: %v", err)
		}
		return s.Reconciler.LastRun != nil && s.Backlog.Published >= n
	})
	if code != ExitOK || !s.Healthy || s.Failed.Total != 0 || s.Pending.Total != 0 || s.Mapping.State != "Enabled" {
		t.Errorf("status after the requeue: exit %d, %+v", code, s)
	}
	if s.Reconciler.LastRun == nil || s.Reconciler.LastRun.Published < 1 {
		t.Errorf("status does not report the reconciler's run: %+v", s.Reconciler)
	}
	// The run's own log line counts in the publishing rate.
	if b := s.Backlog; b.ReconcilerRuns < 1 || b.Published < n || b.RatePerSecond <= 0 || b.State != BacklogNone || b.ETA != "none" {
		t.Errorf("status's backlog after the reconciler's run: %+v, want %d published or more and nothing pending", b, n)
	}
}

// requeue --id requeues only the events named.
func TestLocalRequeueByID(t *testing.T) {
	t.Parallel()
	d := deploy(t, provision.Spec{Name: "byid"})
	failed := d.putFailed(3, "com.example.byid", func(int) string { return "EventBridge: AccessDeniedException" })
	// An application's own item with a status of its own is not an event.
	if _, err := d.ddb.PutItem(d.ctx, &dynamodb.PutItemInput{TableName: aws.String(d.writer.Table().Name), Item: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "ORDER#1"}, "SK": &types.AttributeValueMemberS{Value: "ORDER#1"},
		outbox.AttrStatus: &types.AttributeValueMemberS{Value: string(outbox.StatusFailed)},
	}}); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := d.run("requeue", "byid", "--id", failed[1].EventID+",01M8RGR9R8HAZQ43G0GT5HEM5C", "--json"); code != ExitNotFound || out != "" || !strings.Contains(errOut, "no FAILED event has the id 01M8RGR9R8HAZQ43G0GT5HEM5C") {
		t.Errorf("requeue of an unknown id: exit %d, stdout %q", code, out)
	}
	out, _, code := d.run("requeue", "byid", "--id", failed[1].EventID, "--dry-run", "--json")
	var dry RequeueOutput
	parseJSON(t, out, &dry)
	if code != ExitOK || !dry.DryRun || dry.Selected != 1 || dry.Requeued != 0 || len(dry.Events) != 1 || dry.Events[0].Record.EventID != failed[1].EventID || dry.Reconciler != nil {
		t.Errorf("requeue --dry-run --json: exit %d, %+v", code, dry)
	}
	// Off a terminal, short work writes no progress.
	out, errOut, code := d.run("requeue", "byid", "--id", failed[1].EventID)
	if code != ExitOK || !strings.Contains(out, "requeued 1 event to PENDING (0 were no longer FAILED)\n") {
		t.Fatalf("requeue --id: exit %d", code)
	}
	if strings.ContainsAny(errOut, "\r\033") || strings.Contains(errOut, "requeueing") || !strings.Contains(errOut, "pass --now to run it at once") {
		t.Errorf("requeue off a terminal wrote %q on standard error, want only the note about --now", errOut)
	}
	out, _, _ = d.run("failed", "byid")
	if !strings.Contains(out, "2 FAILED events\n") || strings.Contains(out, failed[1].EventID) || strings.Contains(out, "record contract") {
		t.Errorf("after requeue --id, failed lists:\n%s", out)
	}
	out, _, _ = d.run("failed", "byid", "--json")
	var list struct {
		Events []struct{ EventID, LastError, FailedAt string }
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Events) != 2 || list.Events[0].EventID != failed[0].EventID || list.Events[0].LastError == "" || list.Events[0].FailedAt == "" {
		t.Errorf("failed --json = %+v, %v", list, err)
	}
	if out, _, _ := d.run("status", "byid"); !strings.Contains(out, "pending             1, oldest") {
		t.Errorf("status does not count the requeued event as pending")
	}
}
