package targetkind

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// EventBridge is the kind that publishes to an event bus with PutEvents.
const EventBridge Type = outbox.TargetEventBridge

// The eventbridge kind's settings.
const (
	// EnvEventBus is the bus name or ARN.
	EnvEventBus = "OUTBOX_EVENT_BUS"
	// DefaultEventBus is the account's default bus.
	DefaultEventBus = "default"
)

var (
	// Event bus names: EventBridge's pattern for EventBusName.
	busNamePattern = regexp.MustCompile(`^[/\.\-_A-Za-z0-9]{1,256}$`)
	busARNPattern  = regexp.MustCompile(`^arn:aws[a-z-]*:events:[a-z0-9-]+:\d{12}:event-bus/[/\.\-_A-Za-z0-9]{1,256}$`)
)

func init() { register(eventBridgeKind{}) }

type eventBridgeKind struct{}

func (eventBridgeKind) Type() Type      { return EventBridge }
func (eventBridgeKind) Service() string { return "events" }
func (eventBridgeKind) What() string    { return "event bus" }

func (eventBridgeKind) Settings() []Setting {
	return []Setting{{
		Field: "EventBus", Env: EnvEventBus, Default: DefaultEventBus,
		Value: func(s *Settings) *string { return &s.EventBus },
		Check: func(v string) (string, string) {
			if busNamePattern.MatchString(v) || busARNPattern.MatchString(v) {
				return "", ""
			}
			return fmt.Sprintf("is %q, not an event bus name or ARN", v), `use a bus name such as "default" or an ARN such as "arn:aws:events:us-east-1:123456789012:event-bus/orders"`
		},
	}}
}

// ARN is the bus's ARN: the bus given by ARN, or the account's bus of
// that name.
func (eventBridgeKind) ARN(s Settings, a Account) string {
	if strings.HasPrefix(s.EventBus, "arn:") {
		return s.EventBus
	}
	if a.ID == "" || a.Partition == "" || a.Region == "" {
		return ""
	}
	return a.arn("events", "event-bus/"+s.EventBus)
}

// Limits: PutEvents takes 10 entries under 1 MB in all (PutEvents,
// EventBridge API reference, since 2026-01-29).
func (eventBridgeKind) Limits() outbox.Limits { return outbox.TargetLimits[outbox.TargetEventBridge] }

func (eventBridgeKind) Permission() Permission {
	return Permission{Sid: "PublishToBus", Actions: []string{"events:PutEvents"}}
}

func (eventBridgeKind) Exists(ctx context.Context, cfg aws.Config, s Settings) error {
	_, err := eventbridge.NewFromConfig(cfg).DescribeEventBus(ctx, &eventbridge.DescribeEventBusInput{Name: aws.String(s.EventBus)})
	return err
}

func (eventBridgeKind) Publisher(cfg aws.Config, s Settings, o PublisherOptions) (publish.Publisher, error) {
	c, err := client(o, EventBridge, func() EventBridgeAPI { return eventbridge.NewFromConfig(cfg) })
	if err != nil {
		return nil, err
	}
	return &EventBridgePublisher{Client: c, EventBus: s.EventBus, Envelope: s.Envelope, Retry: o.Retry, Concurrency: o.Concurrency, Region: o.Region}, nil
}

// EventBridgeAPI is the part of the EventBridge client the relay uses.
type EventBridgeAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// EventBridgePublisher publishes with PutEvents: up to the kind's Limits
// (10 entries under 1 MB) per call, calls in parallel. An entry's source and detail type are the
// record's, its detail is the record's DetailIn the Envelope, its time the record's
// OccurredAt, and its trace header the record's, when set.
type EventBridgePublisher struct {
	Client EventBridgeAPI
	// EventBus is the bus name or ARN.
	EventBus string
	// Envelope is the detail's format; "" is outbox.FormatOutbox.
	Envelope outbox.Format
	// Retry bounds the retries of throttled and internally failed entries.
	Retry retry.Policy
	// Concurrency bounds the calls in flight; 0 means DefaultConcurrency.
	Concurrency int
	// Region is the function's region, named in hints; "" when unknown.
	Region string
}

var _ publish.Publisher = (*EventBridgePublisher)(nil)

// eventBridgePoison are the PutEvents entry codes that mean the entry itself
// is invalid (PutEventsResultEntry in the EventBridge API reference).
var eventBridgePoison = map[string]struct{}{"MalformedDetail": {}, "InvalidArgument": {}}

// hint names the probable fix of a PutEvents error code.
func (p *EventBridgePublisher) hint(code string) string {
	where := "the function's region"
	if p.Region != "" {
		where = p.Region
	}
	switch {
	case strings.HasPrefix(code, "AccessDenied"), code == "UnrecognizedClientException", code == "InvalidSignatureException":
		return fmt.Sprintf("the relay role may lack events:PutEvents on the bus %s", p.EventBus)
	case strings.HasPrefix(code, "NotAuthorizedFor"):
		return fmt.Sprintf("a policy of the bus %s may refuse this source or detail type for the relay role", p.EventBus)
	case strings.HasPrefix(code, "ResourceNotFound"), strings.Contains(code, "NotFound"):
		return fmt.Sprintf("the bus %s may not exist in %s", p.EventBus, where)
	case strings.HasPrefix(code, "KMS"):
		return fmt.Sprintf("the KMS key of the bus %s may be disabled, or its policy may deny the relay role", p.EventBus)
	case code == "InvalidAccountIdException":
		return fmt.Sprintf("the account of the bus %s may be wrong", p.EventBus)
	}
	return "unknown error code: the event stays pending and is retried; check the bus " + p.EventBus + " and the relay role"
}

// Publish implements publish.Publisher.
func (p *EventBridgePublisher) Publish(ctx context.Context, records []outbox.Record) []publish.Result {
	limits := eventBridgeKind{}.Limits()
	results := make([]publish.Result, len(records))
	entries := make([]types.PutEventsRequestEntry, len(records))
	var sizes []int
	var index []int // position in records of each entry that is sent
	for i, r := range records {
		size := r.EventBridgeEntrySizeIn(p.Envelope)
		if size > limits.MessageBytes {
			results[i] = publish.TooLarge("EventBridge", size, limits.MessageBytes)
			continue
		}
		entries[i] = types.PutEventsRequestEntry{
			EventBusName: aws.String(p.EventBus),
			Source:       aws.String(r.Source),
			DetailType:   aws.String(r.DetailType),
			Detail:       aws.String(string(r.DetailIn(p.Envelope))),
			Time:         aws.Time(r.OccurredAt),
		}
		entries[i].TraceHeader = traceHeader(r)
		sizes = append(sizes, size)
		index = append(index, i)
	}
	chunks := publish.AcceptedChunks(sizes, index, limits.BatchBytes)
	send := func(ctx context.Context, idx []int) ([]publish.EntryResult, error) {
		in := &eventbridge.PutEventsInput{Entries: make([]types.PutEventsRequestEntry, len(idx))}
		for k, i := range idx {
			in.Entries[k] = entries[i]
		}
		out, err := p.Client.PutEvents(ctx, in)
		if err != nil {
			return nil, err
		}
		res := make([]publish.EntryResult, len(idx))
		for k := range idx {
			if k >= len(out.Entries) {
				res[k] = publish.EntryResult{Code: "InternalFailure", Message: "PutEvents returned no result for the entry"}
				continue
			}
			e := out.Entries[k]
			if code := aws.ToString(e.ErrorCode); code != "" {
				res[k] = publish.EntryResult{Code: code, Message: aws.ToString(e.ErrorMessage)}
			} else {
				res[k] = publish.EntryResult{OK: true}
			}
		}
		return res, nil
	}
	publish.Batcher{Target: "EventBridge", Policy: p.Retry, Concurrency: p.Concurrency, Poison: eventBridgePoison, Hint: p.hint}.Run(ctx, chunks, send, results)
	return results
}
