package operate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Events of three hours are published; a replay of the middle hour to a
// second bus reaches that bus's consumer with exactly the events of the
// window, their original ids and details, and nothing else.
func TestLocalReplayToSecondBus(t *testing.T) {
	t.Parallel()
	d := deploy(t, provision.Spec{Name: "replay"})
	const source = "com.example.replay"
	own := d.subscribe("replay-own", "default", source)
	if _, err := eventbridge.NewFromConfig(d.cfg).CreateEventBus(d.ctx, &eventbridge.CreateEventBusInput{Name: aws.String("analytics")}); err != nil {
		t.Fatal(err)
	}
	analytics := d.subscribe("replay-analytics", "analytics", source)

	now := time.Now().UTC().Truncate(time.Second)
	var events []outbox.Event
	for hour := 3; hour >= 1; hour-- {
		for i := range 10 {
			events = append(events, outbox.Event{
				Source: source, DetailType: fmt.Sprintf("Hour%d", hour),
				Detail:     json.RawMessage(fmt.Sprintf(`{"hour":%d,"i":%d}`, hour, i)),
				OccurredAt: now.Add(-time.Duration(hour)*time.Hour + time.Duration(i)*time.Second),
			})
		}
	}
	recs := d.write(events...)
	own.waitFor(t, idsOf(recs))
	d.waitPublished()

	since, until := now.Add(-2*time.Hour-time.Minute), now.Add(-time.Hour-time.Minute)
	out, _, code := d.run("replay", "replay", "--since", since.Format(time.RFC3339), "--until", until.Format(time.RFC3339), "--target", "analytics", "--rate", "20")
	if code != ExitOK || !strings.Contains(out, "replayed 10 of 10 events to analytics") {
		t.Fatalf("replay: exit %d", code)
	}
	window := recs[10:20]
	analytics.waitFor(t, idsOf(window))
	// A marker sent to the second bus after the replay arrives after
	// anything the replay sent beyond the window.
	marker := outbox.Record{EventID: "marker", Source: source, DetailType: "Marker", Detail: json.RawMessage(`{}`), OccurredAt: now}
	if _, err := eventbridge.NewFromConfig(d.cfg).PutEvents(d.ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
		EventBusName: aws.String("analytics"), Source: aws.String(source), DetailType: aws.String("Marker"), Detail: aws.String(string(marker.DetailJSON())),
	}}}); err != nil {
		t.Fatal(err)
	}
	analytics.waitFor(t, []string{"marker"})
	got := analytics.ids()
	delete(got, "marker")
	if len(got) != len(window) {
		t.Errorf("the second bus received %d events, want the %d of the window", len(got), len(window))
	}
	byID := map[string]outbox.Record{}
	for _, r := range window {
		byID[r.EventID] = r
	}
	analytics.mu.Lock()
	defer analytics.mu.Unlock()
	for _, ev := range analytics.seen {
		if ev.DetailType == "Marker" {
			continue
		}
		r, ok := byID[ev.Detail.Metadata.EventID]
		if !ok {
			t.Errorf("event %s of %s is outside the window", ev.Detail.Metadata.EventID, ev.DetailType)
			continue
		}
		if ev.DetailType != "Hour2" || string(ev.Detail.Data) != string(r.Detail) || ev.Detail.Metadata.OccurredAt != r.OccurredAt.Format(outbox.TimeFormat) {
			t.Errorf("replayed event %s = %+v, want the original %s %s", r.EventID, ev, r.DetailType, r.Detail)
		}
	}
}

// A replay to an SNS topic sends each event in the relay's envelope, byte
// for byte.
func TestLocalReplayToTopic(t *testing.T) {
	t.Parallel()
	d := deploy(t, provision.Spec{Name: "topic"})
	const source = "com.example.topic"
	own := d.subscribe("topic-own", "default", source)
	topicSink, topic := d.topicConsumer("topic-replay")
	recs := d.write(
		outbox.Event{Source: source, DetailType: "A", Detail: json.RawMessage(`{"n":1.50,"s":"x"}`)},
		outbox.Event{Source: source, DetailType: "B", Detail: json.RawMessage(`{"n":2}`), TraceHeader: "Root=1-5759e988-bd862e3fe1be46a994272793"},
	)
	own.waitFor(t, idsOf(recs))
	d.waitPublished()
	out, errOut, code := d.run("replay", "topic", "--since", "1h", "--target", topic, "--json")
	var res ReplayOutput
	parseJSON(t, out, &res)
	if code != ExitOK || res.Pipeline != "topic" || res.Target != topic || res.Selected != 2 || res.Published != 2 || res.Failed != 0 || len(res.Reasons) != 0 {
		t.Fatalf("replay --json to a topic: exit %d, %+v", code, res)
	}
	if res.FirstOccurredAt == nil || !res.FirstOccurredAt.Equal(recs[0].OccurredAt) || res.LastOccurredAt == nil || !res.LastOccurredAt.Equal(recs[1].OccurredAt) ||
		time.Since(res.Since) < time.Hour || !res.Until.After(res.Since) {
		t.Errorf("replay --json reports the window %v to %v, events %v to %v", res.Since, res.Until, res.FirstOccurredAt, res.LastOccurredAt)
	}
	if strings.Contains(errOut, "outbox: ") {
		t.Errorf("replay --json wrote an error: %q", errOut)
	}
	topicSink.waitFor(t, idsOf(recs))
	topicSink.mu.Lock()
	defer topicSink.mu.Unlock()
	for _, r := range recs {
		if got, want := topicSink.bodies[r.EventID], string(r.EnvelopeJSON()); got != want {
			t.Errorf("replayed message of %s:\n got %s\nwant %s", r.EventID, got, want)
		}
	}
}
