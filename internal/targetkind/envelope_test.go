package targetkind

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2/event"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/validation"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// capturingEventBridge accepts every entry and keeps its detail.
type capturingEventBridge struct {
	mu      sync.Mutex
	details []string
}

func (c *capturingEventBridge) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &eventbridge.PutEventsOutput{}
	for _, e := range in.Entries {
		c.details = append(c.details, aws.ToString(e.Detail))
		out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{EventId: aws.String("id")})
	}
	return out, nil
}

// envelopeRecords are an unordered event and two ordered ones.
func envelopeRecords() []outbox.Record {
	at := time.Date(2026, 12, 2, 10, 0, 0, 123_000_000, time.UTC)
	rs := []outbox.Record{{PartitionKey: "CUSTOMER#7", EventID: "01JDQ8Z7K5V6W3X2Y1Z0ABCDE0", Source: "com.example.shop",
		DetailType: "CustomerRegistered", Detail: []byte(`{"customer":7}`), OccurredAt: at}}
	for i := 1; i <= 2; i++ {
		rs = append(rs, outbox.Record{PartitionKey: "ORDER#1", EventID: "01JDQ8Z7K5V6W3X2Y1Z0ABCDE" + strconv.Itoa(i), Source: "com.example.orders",
			DetailType: "OrderChanged", Detail: []byte(`{"order":1,"n":` + strconv.Itoa(i) + `}`), OccurredAt: at,
			OrderingKey: "ORDER#1", Sequence: int64(i)})
	}
	return rs
}

// TestCloudEventsEnvelope: with the cloudevents envelope, what every kind
// publishes parses as a valid CloudEvent with the CloudEvents SDK and
// carries the event's id, source, type, subject, time and data, and, for an
// ordered event, the sequence and partitionkey extensions.
func TestCloudEventsEnvelope(t *testing.T) {
	t.Parallel()
	bodies := map[Type]func(Settings) []string{
		EventBridge: func(s Settings) []string {
			c := &capturingEventBridge{}
			publishAll(t, s, c)
			return c.details
		},
		SNS: func(s Settings) []string { return fakeBodies(t, s) },
		SQS: func(s Settings) []string { return fakeBodies(t, s) },
	}
	for _, k := range Kinds() {
		publishBodies, ok := bodies[k.Type()]
		if !ok {
			t.Fatalf("kind %s has no envelope test", k.Type())
		}
		s := samples[k.Type()]
		s.Envelope = outbox.FormatCloudEvents
		got := publishBodies(s)
		want := envelopeRecords()
		if len(got) != len(want) {
			t.Fatalf("%s: %d bodies, want %d", k.Type(), len(got), len(want))
		}
		for i, body := range got {
			checkCloudEvent(t, k.Type(), body, want[i])
		}
	}
}

func publishAll(t *testing.T, s Settings, client any) {
	t.Helper()
	p, err := NewPublisher(aws.Config{}, s, PublisherOptions{Retry: noWait, Client: client, Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i, res := range p.Publish(context.Background(), envelopeRecords()) {
		if res.Status != publish.Published {
			t.Fatalf("%s: record %d: %+v", s.Type, i, res)
		}
	}
}

func fakeBodies(t *testing.T, s Settings) []string {
	f := &fakeBatchTarget{}
	publishAll(t, s, f)
	var out []string
	for _, m := range f.accepted {
		out = append(out, m.body)
	}
	return out
}

func checkCloudEvent(t *testing.T, kind Type, body string, r outbox.Record) {
	t.Helper()
	var e cloudevents.Event
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("%s: %s does not parse as a CloudEvent: %v", kind, body, err)
	}
	if err := e.Validate(); err != nil {
		t.Errorf("%s: %s is no valid CloudEvent: %v", kind, body, err)
	}
	subject := r.PartitionKey
	if r.OrderingKey != "" {
		subject = r.OrderingKey
	}
	if e.SpecVersion() != "1.0" || e.ID() != r.EventID || e.Source() != r.Source || e.Type() != r.DetailType ||
		e.Subject() != subject || !e.Time().Equal(r.OccurredAt) || e.DataContentType() != "application/json" || string(e.Data()) != string(r.Detail) {
		t.Errorf("%s: %s does not carry the record %+v", kind, body, r)
	}
	ext := e.Extensions()
	if r.OrderingKey == "" {
		if len(ext) != 0 {
			t.Errorf("%s: an unordered event has the extensions %v", kind, ext)
		}
		return
	}
	seq, err := strconv.ParseInt(toString(ext["sequence"]), 10, 64)
	if err != nil || seq != r.Sequence || ext["partitionkey"] != r.OrderingKey {
		t.Errorf("%s: extensions %v, want sequence %d and partitionkey %s", kind, ext, r.Sequence, r.OrderingKey)
	}
}

func toString(v any) string {
	s, _ := v.(string)
	return s
}

// TestEnvelopeSetting: the envelope defaults to outbox, travels in
// OUTBOX_ENVELOPE, and an unknown one is refused naming the field.
func TestEnvelopeSetting(t *testing.T) {
	t.Parallel()
	s := samples[SQS]
	s.Envelope = outbox.FormatCloudEvents
	env := s.Env()
	if env[EnvEnvelope] != "cloudevents" {
		t.Errorf("Env() = %v", env)
	}
	if got, err := FromEnv(testSubject, func(n string) string { return env[n] }); err != nil || got != s {
		t.Errorf("FromEnv = %+v, %v", got, err)
	}
	_, err := FromEnv(testSubject, func(n string) string { return map[string]string{EnvEnvelope: "avro"}[n] })
	var ve *validation.Error
	if !errors.As(err, &ve) || ve.Field != EnvEnvelope {
		t.Errorf("FromEnv with OUTBOX_ENVELOPE=avro = %v", err)
	}
	s.Envelope = "avro"
	err = s.Validate(testSubject, "Target")
	if !errors.As(err, &ve) || ve.Field != "Target.Envelope" {
		t.Errorf("Validate with envelope avro = %v", err)
	}
}
