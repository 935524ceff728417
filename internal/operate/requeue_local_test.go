package operate

import (
	"encoding/json"
	"fmt"
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
	if out, _, _ := d.run("failed", "ops", "--source", "com.example.other"); !strings.Contains(out, "0 FAILED events") {
		t.Errorf("failed --source of another source lists events")
	}

	if out, _, code := d.run("requeue", "ops", "--dry-run"); code != ExitOK || !strings.Contains(out, fmt.Sprintf("would requeue %d FAILED events", n)) {
		t.Errorf("requeue --dry-run: exit %d", code)
	}
	if out, _, _ := d.run("failed", "ops"); !strings.Contains(out, fmt.Sprintf("%d FAILED events", n)) {
		t.Errorf("requeue --dry-run changed the FAILED events")
	}

	out, _, code = d.run("requeue", "ops", "--now")
	if code != ExitOK || !strings.Contains(out, fmt.Sprintf("requeued %d events to PENDING", n)) {
		t.Fatalf("requeue --now: exit %d", code)
	}
	sub.waitFor(t, idsOf(failed))

	out, _, code = d.run("status", "ops", "--json")
	var s Status
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("status --json is not JSON: %v", err)
	}
	if code != ExitOK || !s.Healthy || s.Failed.Total != 0 || s.Pending.Total != 0 || s.Mapping.State != "Enabled" {
		t.Errorf("status after the requeue: exit %d, %+v", code, s)
	}
	if s.Reconciler.LastRun == nil || s.Reconciler.LastRun.Published < 1 {
		t.Errorf("status does not report the reconciler's run: %+v", s.Reconciler)
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
	if _, errOut, code := d.run("requeue", "byid", "--id", failed[1].EventID+",01M8RGR9R8HAZQ43G0GT5HEM5C"); code != ExitStuck || !strings.Contains(errOut, "no FAILED event has the id 01M8RGR9R8HAZQ43G0GT5HEM5C") {
		t.Errorf("requeue of an unknown id: exit %d", code)
	}
	out, _, code := d.run("requeue", "byid", "--id", failed[1].EventID)
	if code != ExitOK || !strings.Contains(out, "requeued 1 events") {
		t.Fatalf("requeue --id: exit %d", code)
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
