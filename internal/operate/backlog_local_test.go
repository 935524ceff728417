package operate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	logstypes "github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

// logLine is a JSON line a function logged at a time.
type logLine struct {
	at     time.Time
	fields string
}

// putLogLines writes lines, as the function's slog handler writes them,
// to a new stream of the log group.
func (d *deployed) putLogLines(group, stream string, lines ...logLine) {
	d.t.Helper()
	logs := cloudwatchlogs.NewFromConfig(d.cfg)
	if _, err := logs.CreateLogStream(d.ctx, &cloudwatchlogs.CreateLogStreamInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream)}); err != nil {
		d.t.Fatal(err)
	}
	events := make([]logstypes.InputLogEvent, len(lines))
	for i, l := range lines {
		msg := fmt.Sprintf(`{"time":%q,"level":"INFO",%s}`, l.at.UTC().Format(time.RFC3339Nano), l.fields)
		events[i] = logstypes.InputLogEvent{Timestamp: aws.Int64(l.at.UnixMilli()), Message: aws.String(msg)}
	}
	if _, err := logs.PutLogEvents(d.ctx, &cloudwatchlogs.PutLogEventsInput{LogGroupName: aws.String(group), LogStreamName: aws.String(stream), LogEvents: events}); err != nil {
		d.t.Fatal(err)
	}
}

// status measures the publishing rate from the reconciler's reports (two
// workers' runs summed) and the relay's stream invocations in the window,
// and estimates when the backlog is done; with nothing published in the
// window, the backlog is stuck and the estimate unknown.
func TestLocalStatusBacklog(t *testing.T) {
	t.Parallel()
	d := deploy(t, provision.Spec{Name: "backlog", Reconciler: provision.ReconcilerSpec{ScheduleExpression: "rate(1 day)"}})
	if _, err := localawstest.Control(d.stack).PauseMapping(d.ctx, d.state.MappingUUID); err != nil {
		t.Fatal(err)
	}
	d.write(orderPlaced("com.example.backlog", 30)...)
	clients := NewClients(d.cfg)
	p, err := clients.Find(d.ctx, "backlog")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Millisecond)
	run := func(found, published int, oldest float64) string {
		return fmt.Sprintf(`"msg":"reconcile finished","found":%d,"published":%d,"failed":0,"poison":0,"complete":true,"oldestPendingAgeSeconds":%g`, found, published, oldest)
	}
	// A run before the window, then two workers' runs and a stream
	// invocation in it; a line of another message is not a report.
	d.putLogLines(p.Names.ReconcilerLogGroup, "earlier", logLine{now.Add(-20 * time.Minute), run(200, 100, 7200)})
	d.putLogLines(p.Names.ReconcilerLogGroup, "worker-1",
		logLine{now.Add(-4 * time.Minute), run(80, 50, 3600)},
		logLine{now.Add(-4*time.Minute + time.Second), `"msg":"reconcile stopped before the deadline","published":1000`})
	d.putLogLines(p.Names.ReconcilerLogGroup, "worker-2", logLine{now.Add(-3 * time.Minute), run(40, 10, 3000)})
	d.putLogLines(p.Names.RelayLogGroup, "relay", logLine{now.Add(-2 * time.Minute), `"msg":"stream batch processed","records":15,"published":15,"poison":0`})

	// 75 events in 5 minutes: 0.25 a second, 30 pending done in 2 minutes,
	// fewer than the window's first run found.
	s, err := clients.Status(d.ctx, p, StatusOptions{RateWindow: 5 * time.Minute, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	b := s.Backlog
	if b.Pending != 30 || b.Published != 75 || b.ReconcilerRuns != 2 || b.RelayInvocations != 1 || b.RatePerSecond != 0.25 || b.RateWindowSeconds != 300 {
		t.Errorf("backlog %+v: want 30 pending, 75 published by 2 reconciler runs and 1 relay invocation, 0.25 events/s over 300 s", b)
	}
	if b.ETA != "2m" || b.ETASeconds == nil || *b.ETASeconds != 120 || b.DoneAt == nil || !b.DoneAt.Equal(now.Add(2*time.Minute)) {
		t.Errorf("estimate: eta %q, %v s, done at %v; want 2m, 120 s, at %v", b.ETA, b.ETASeconds, b.DoneAt, now.Add(2*time.Minute))
	}
	if b.State != BacklogCatchingUp || !strings.Contains(b.Compared, "found 80 pending, the oldest 1h0m0s old") {
		t.Errorf("state %q (%s), want catching-up against the run that found 80", b.State, b.Compared)
	}
	if s.Reconciler.LastRun == nil || s.Reconciler.LastRun.Found != 40 {
		t.Errorf("last run %+v, want the second worker's", s.Reconciler.LastRun)
	}

	// An hour later nothing was published in the window: stuck.
	later := now.Add(time.Hour)
	s, err = clients.Status(d.ctx, p, StatusOptions{RateWindow: 5 * time.Minute, Now: func() time.Time { return later }})
	if err != nil {
		t.Fatal(err)
	}
	if b := s.Backlog; b.State != BacklogStuck || b.ETA != "unknown" || b.ETASeconds != nil || b.DoneAt != nil || b.Published != 0 || b.RatePerSecond != 0 {
		t.Errorf("an hour later: %+v, want stuck with an unknown estimate", b)
	}
	if len(s.Problems) != 1 || !strings.Contains(s.Problems[0], "the oldest pending event is 1h0m0s old (stuck after 15m0s) and nothing was published in the last 5m") {
		t.Errorf("problems an hour later: %q", s.Problems)
	}

	// The command: a window of 30 minutes holds every report, the one
	// before the window of 5 minutes too.
	out, _, code := d.run("status", "backlog", "--rate-window", "30m", "--json")
	var got Status
	parseJSON(t, out, &got)
	if b := got.Backlog; code != ExitOK || b.Published != 175 || b.ReconcilerRuns != 3 || b.RateWindowSeconds != 1800 || b.State != BacklogCatchingUp || b.ETASeconds == nil || b.DoneAt == nil {
		t.Errorf("status --rate-window 30m --json: exit %d, %+v", code, b)
	}
	var raw struct {
		Backlog map[string]json.RawMessage `json:"backlog"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil || string(raw.Backlog["eta"]) == "" || string(raw.Backlog["state"]) != `"catching-up"` {
		t.Errorf("status --json backlog: %s (%v)", raw.Backlog, err)
	}
	out, _, _ = d.run("status", "backlog", "--rate-window", "30m")
	for _, want := range []string{"rate                0.0972 events/s over the last 30m: 175 published (3 reconciler runs, 1 relay invocation)",
		"done                in 5m9s, at ", "progress            catching up: 30 pending, the oldest ", "old, where the reconciler's run at "} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q", want)
		}
	}
	// A role that may read only the reconciler's log group, as status
	// needed before, gets the reconciler's share and what to grant.
	statements := []map[string]any{
		{"Effect": "Allow", "Action": slices.Concat(findPermissions, commands()[0].permissions), "Resource": "*"},
		{"Effect": "Deny", "Action": "logs:FilterLogEvents", "Resource": []string{
			"arn:aws:logs:*:*:log-group:" + p.Names.RelayLogGroup, "arn:aws:logs:*:*:log-group:" + p.Names.RelayLogGroup + ":*"}},
	}
	out, _, code = d.runWithPolicy("reconciler-logs-only", statements, "status", "backlog", "--rate-window", "30m", "--json")
	got = Status{}
	parseJSON(t, out, &got)
	want := "logs:FilterLogEvents on log group " + p.Names.RelayLogGroup + " was denied: grant it to count the relay's invocations"
	if b := got.Backlog; code != ExitOK || b.Published != 160 || b.RelayInvocations != 0 || b.ReconcilerRuns != 3 || b.RelayUnread != want {
		t.Errorf("status without the relay's log group: exit %d, %+v; want 160 published by the reconciler and %q", code, b, want)
	}
	if _, errOut, code := d.run("status", "backlog", "--rate-window", "0s"); code != ExitUsage || !strings.Contains(errOut, "--rate-window must be longer than 0s") {
		t.Errorf("status --rate-window 0s: exit %d, %q", code, errOut)
	}
}
