package acctest

import (
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	cloudevents "github.com/cloudevents/sdk-go/v2/event"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// ReceiveCloudEvents drains the queue until every id in want has arrived,
// each message body parsed as a CloudEvent (structured JSON mode) by the
// CloudEvents SDK and valid by its rules, and returns them by id.
func (s Sink) ReceiveCloudEvents(want []outbox.Record) (map[string]cloudevents.Event, error) {
	got := map[string]cloudevents.Event{}
	err := s.Drain("receiving the published CloudEvents", want, func(m sqstypes.Message) (string, error) {
		var ev cloudevents.Event
		if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &ev); err != nil {
			return "", fmt.Errorf("message %q is no CloudEvent: %w", aws.ToString(m.Body), err)
		}
		if err := ev.Validate(); err != nil {
			return "", fmt.Errorf("message %q is no valid CloudEvent: %w", aws.ToString(m.Body), err)
		}
		got[ev.ID()] = ev
		return ev.ID(), nil
	})
	return got, err
}

// missing counts the records whose event id has not arrived.
func missing(want []outbox.Record, arrived func(id string) bool) int {
	n := 0
	for _, r := range want {
		if !arrived(r.EventID) {
			n++
		}
	}
	return n
}

// CheckCloudEvents checks every received CloudEvent against the record
// written: id, source, type, subject (the aggregate), time and data.
func CheckCloudEvents(want []outbox.Record, got map[string]cloudevents.Event) error {
	for _, r := range want {
		ev := got[r.EventID]
		subject := r.PartitionKey
		if r.OrderingKey != "" {
			subject = r.OrderingKey
		}
		if ev.Source() != r.Source || ev.Type() != r.DetailType || ev.Subject() != subject || !ev.Time().Equal(r.OccurredAt) {
			return fmt.Errorf("event %s arrived as %s; want source %q, type %q, subject %q, time %s", r.EventID, ev, r.Source, r.DetailType, subject, r.OccurredAt)
		}
		var wantData, gotData any
		_ = json.Unmarshal(r.Detail, &wantData)
		if err := json.Unmarshal(ev.Data(), &gotData); err != nil || fmt.Sprint(wantData) != fmt.Sprint(gotData) {
			return fmt.Errorf("event %s: data = %s, want %s", r.EventID, ev.Data(), r.Detail)
		}
	}
	return nil
}
