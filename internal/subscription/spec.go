// Package subscription provisions one consumer of a pipeline's events on
// AWS: an EventBridge rule that matches the events by source and detail type
// (or by a full event pattern) and delivers them to the consumer's own SQS
// queue, with its own dead-letter queue (redrive) and a queue policy that
// lets only that rule send. For a pipeline that publishes to an SNS topic,
// the queue is subscribed to the topic instead (raw message delivery, a
// filter policy on the source and detail-type message attributes), and to
// a FIFO topic both queues are FIFO queues.
//
// It knows nothing of Terraform. The provider maps its schema to a Spec,
// records the State that Create and Update return, and plans repairs from
// the drift that Read reports.
//
// Create builds the components in dependency order (dead-letter queue,
// queue with its redrive policy, queue policy, rule, target) and removes
// what it built if a step fails; Delete removes them in reverse order and
// tolerates components already gone.
package subscription

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/validation"
)

// Defaults of a Spec.
const (
	DefaultEventBus                   = "default"
	DefaultVisibilityTimeoutSeconds   = 30
	DefaultMessageRetentionSeconds    = 345600
	DefaultMaxReceiveCount            = 5
	DefaultDeadLetterRetentionSeconds = 1209600
	MaxNameLength                     = 64
	suffixDeadLetterQueue             = "-dlq"
	tagSubscription                   = "outbox:subscription"
	queueTargetID                     = "outbox-subscription"
	eventBridgeServicePrincipal       = "events.amazonaws.com"
	snsServicePrincipal               = "sns.amazonaws.com"
	fifoSuffix                        = ".fifo"
	queuePolicySid                    = "AllowSubscriptionRule"
	queuePolicyVersion                = "2012-10-17"
)

// TagSubscription is set on every tagged component to the subscription's
// name.
const TagSubscription = tagSubscription

// TargetID is the id of the rule's target, the queue.
const TargetID = queueTargetID

// Spec is the desired configuration of a subscription. The zero value of a
// field means its default (see WithDefaults); pointer fields are those whose
// zero is a meaningful setting.
type Spec struct {
	// Name is the name of the rule and the queue; the dead-letter queue is
	// Name followed by "-dlq". Changing it replaces the subscription.
	Name string
	// EventBus is the name or ARN of the bus the rule is on; default
	// "default". Changing it replaces the subscription.
	EventBus string
	// Sources and DetailTypes build the rule's pattern
	// {"source":[...],"detail-type":[...]}; an empty list matches any value.
	Sources     []string
	DetailTypes []string
	// EventPattern is a complete EventBridge pattern (a JSON object); it
	// excludes Sources and DetailTypes.
	EventPattern string
	// TopicARN, when set, is the SNS topic the queue subscribes to instead
	// of a rule on EventBus: Sources and DetailTypes become the
	// subscription's filter policy on the message attributes, and a FIFO
	// topic (".fifo") gets FIFO queues. Changing it replaces the
	// subscription.
	TopicARN string
	// Queue is the consumer's queue.
	Queue QueueSpec
	// DeadLetter is the queue that receives what the consumer failed to
	// process MaxReceiveCount times.
	DeadLetter DeadLetterSpec
	// Inbox, when set, is the consumer kit's inbox table, <Name>-inbox;
	// nil means none.
	Inbox *InboxSpec
	// Tags of the rule, both queues and the inbox table.
	Tags map[string]string
}

// QueueSpec configures the consumer's queue.
type QueueSpec struct {
	// VisibilityTimeoutSeconds; nil: 30. The limits of the numeric fields
	// are in limits.go.
	VisibilityTimeoutSeconds *int32
	// MessageRetentionSeconds; default 345600 (4 days).
	MessageRetentionSeconds int32
	// ReceiveWaitTimeSeconds: long polling of ReceiveMessage.
	ReceiveWaitTimeSeconds int32
	// MaxReceiveCount is how many receives a message gets
	// before SQS moves it to the dead-letter queue; default 5.
	MaxReceiveCount int32
	// KMSMasterKeyID encrypts both queues with a KMS key; empty uses
	// SQS-managed encryption (SSE-SQS).
	KMSMasterKeyID string
}

// DeadLetterSpec configures the dead-letter queue.
type DeadLetterSpec struct {
	// MessageRetentionSeconds; default 1209600 (14 days).
	MessageRetentionSeconds int32
}

// Names are the names of a subscription's components.
type Names struct {
	Rule            string
	Queue           string
	DeadLetterQueue string
}

// NamesFor returns the component names of the subscription called name.
func NamesFor(name string) Names { return NamesOf(name, false) }

// NamesOf returns the component names of the subscription called name,
// whose queues are FIFO queues when fifo is set (their names end in
// ".fifo").
func NamesOf(name string, fifo bool) Names {
	n := Names{Rule: name, Queue: name, DeadLetterQueue: name + suffixDeadLetterQueue}
	if fifo {
		n.Queue, n.DeadLetterQueue = n.Queue+fifoSuffix, n.DeadLetterQueue+fifoSuffix
	}
	return n
}

// Names returns the component names of s.
func (s Spec) Names() Names { return NamesOf(s.Name, s.FIFO()) }

// FIFO reports whether s subscribes to a FIFO topic, with FIFO queues.
func (s Spec) FIFO() bool { return strings.HasSuffix(s.TopicARN, fifoSuffix) }

// FilterPolicy is the topic subscription's filter policy, on the source
// and detail-type message attributes the relay sets: the same document as
// the pattern that Sources and DetailTypes build.
func (s Spec) FilterPolicy() string { return BuildPattern(s.Sources, s.DetailTypes) }

// WithDefaults returns s with every unset field set to its default.
func (s Spec) WithDefaults() Spec {
	s.EventBus = cmp.Or(s.EventBus, DefaultEventBus)
	if s.Queue.VisibilityTimeoutSeconds == nil {
		v := int32(DefaultVisibilityTimeoutSeconds)
		s.Queue.VisibilityTimeoutSeconds = &v
	}
	s.Queue.MessageRetentionSeconds = cmp.Or(s.Queue.MessageRetentionSeconds, DefaultMessageRetentionSeconds)
	s.Queue.MaxReceiveCount = cmp.Or(s.Queue.MaxReceiveCount, DefaultMaxReceiveCount)
	s.DeadLetter.MessageRetentionSeconds = cmp.Or(s.DeadLetter.MessageRetentionSeconds, DefaultDeadLetterRetentionSeconds)
	return s
}

// BusName returns the name of the bus given by name or ARN.
func BusName(bus string) string {
	if bus == "" {
		return DefaultEventBus
	}
	if strings.HasPrefix(bus, "arn:") {
		if i := strings.Index(bus, ":event-bus/"); i >= 0 {
			return bus[i+len(":event-bus/"):]
		}
	}
	return bus
}

// Pattern returns the rule's event pattern: EventPattern as given, or the
// pattern built from Sources and DetailTypes, with sorted and deduplicated
// values so that it does not depend on the order of a set.
func (s Spec) Pattern() string {
	if s.EventPattern != "" {
		return s.EventPattern
	}
	return BuildPattern(s.Sources, s.DetailTypes)
}

// BuildPattern returns {"source":[...],"detail-type":[...]}, leaving out an
// empty list (which matches any value).
func BuildPattern(sources, detailTypes []string) string {
	p := map[string][]string{}
	if v := sortedUnique(sources); len(v) > 0 {
		p["source"] = v
	}
	if v := sortedUnique(detailTypes); len(v) > 0 {
		p["detail-type"] = v
	}
	b, err := json.Marshal(p) // map keys are sorted
	if err != nil {
		panic("subscription: marshalling pattern: " + err.Error())
	}
	return string(b)
}

func sortedUnique(v []string) []string {
	out := slices.Clone(v)
	slices.Sort(out)
	return slices.Compact(out)
}

// Validation patterns, from the limits of the services involved.
var (
	// A rule name allows [.-_A-Za-z0-9]{1,64} and a queue name
	// [-_A-Za-z0-9]{1,80}: the name must fit both, with "-dlq".
	namePattern      = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	busNamePattern   = regexp.MustCompile(`^[/\.\-_A-Za-z0-9]{1,256}$`)
	busARNPattern    = regexp.MustCompile(`^arn:aws[a-z-]*:events:[a-z0-9-]+:\d{12}:event-bus/[/\.\-_A-Za-z0-9]{1,256}$`)
	kmsKeyARNPattern = regexp.MustCompile(`^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[A-Za-z0-9-]+$`)
	topicPattern     = regexp.MustCompile(`^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$`)
)

// ValidationError names the field of a Spec at fault and the fix; its
// Field is the path of the field, as in Go ("Queue.MaxReceiveCount").
type ValidationError = validation.Error

// subscriptionSettings opens the message of every ValidationError of a Spec.
const subscriptionSettings validation.Subject = "outbox subscription"

func invalid(field, fix, problem string, args ...any) error {
	return subscriptionSettings.Invalid(field, fix, problem, args...)
}

// Validate reports the first problem of s that can be found without AWS. It
// applies the defaults first.
func (s Spec) Validate() error {
	s = s.WithDefaults()
	switch {
	case s.Name == "":
		return invalid("Name", `set a name such as "billing-orders"; it names the rule and the queues`, "is empty")
	case len(s.Name) > MaxNameLength:
		return invalid("Name", fmt.Sprintf("use at most %d characters", MaxNameLength), "is %d characters long", len(s.Name))
	case !namePattern.MatchString(s.Name):
		return invalid("Name", "use letters, digits, hyphens and underscores", "%q has characters that EventBridge rule and SQS queue names do not allow", s.Name)
	}
	if !busNamePattern.MatchString(s.EventBus) && !busARNPattern.MatchString(s.EventBus) {
		return invalid("EventBus", `use a bus name such as "default" or an event bus ARN, such as an outbox_pipeline's target_arn`, "is %q", s.EventBus)
	}
	if err := s.validateTopic(); err != nil {
		return err
	}
	if err := s.validatePattern(); err != nil {
		return err
	}
	if err := s.validateLimits(); err != nil {
		return err
	}
	q, d := s.Queue, s.DeadLetter
	if strings.TrimSpace(q.KMSMasterKeyID) != q.KMSMasterKeyID {
		return invalid("Queue.KMSMasterKeyID", "remove the surrounding spaces", "is %q", q.KMSMasterKeyID)
	}
	if d.MessageRetentionSeconds < q.MessageRetentionSeconds {
		// A dead letter keeps its original enqueue time: it would expire
		// from the dead-letter queue sooner than from the queue.
		return invalid("DeadLetter.MessageRetentionSeconds",
			fmt.Sprintf("use at least the queue's message_retention_seconds (%d): a dead letter keeps the time it was first enqueued, so it would expire before anyone could inspect it", q.MessageRetentionSeconds),
			"is %d", d.MessageRetentionSeconds)
	}
	if err := s.validateInbox(); err != nil {
		return err
	}
	return subscriptionSettings.Tags("Tags", s.Tags)
}

// CheckInPlace returns an error when the subscription recorded in st has
// another name, event bus or topic than s: each replaces the subscription.
func (s Spec) CheckInPlace(st State) error {
	if st.Name != "" && st.Name != s.Name {
		return fmt.Errorf("updating outbox subscription (%s): the name changed to %s, which requires replacing the subscription", st.Name, s.Name)
	}
	bus := BusName(s.EventBus)
	if st.EventBusName != "" && st.EventBusName != bus {
		return fmt.Errorf("updating outbox subscription (%s): the event bus changed from %s to %s, which requires replacing the subscription", s.Name, st.EventBusName, bus)
	}
	if st.TopicARN != "" && st.TopicARN != s.TopicARN {
		return fmt.Errorf("updating outbox subscription (%s): the topic changed from %s to %s, which requires replacing the subscription", s.Name, st.TopicARN, s.TopicARN)
	}
	return nil
}

// validateTopic checks the topic of a topic subscription, which has no
// rule: neither a bus nor a full event pattern.
func (s Spec) validateTopic() error {
	switch {
	case s.TopicARN == "":
		return nil
	case !topicPattern.MatchString(s.TopicARN):
		return invalid("TopicARN", `use an SNS topic ARN, such as an outbox_pipeline's target_arn`, "is %q", s.TopicARN)
	case BusName(s.EventBus) != DefaultEventBus:
		return invalid("EventBus", "remove it: a topic subscription has no rule on a bus", "is set with TopicARN")
	case s.EventPattern != "":
		return invalid("EventPattern", "use sources and detail_types, which become the filter policy on the message attributes", "is set with TopicARN")
	}
	return nil
}

func (s Spec) validatePattern() error {
	if s.EventPattern != "" {
		if len(s.Sources) > 0 || len(s.DetailTypes) > 0 {
			return invalid("EventPattern", "set either event_pattern or sources and detail_types, not both", "is set with Sources or DetailTypes")
		}
		return ValidatePattern(s.EventPattern)
	}
	if len(s.Sources) == 0 && len(s.DetailTypes) == 0 {
		return invalid("Sources", `set sources and/or detail_types (such as ["com.example.orders"]), or a full event_pattern`, "and DetailTypes are empty, and there is no EventPattern")
	}
	for _, f := range []struct {
		field  string
		values []string
	}{{"Sources", s.Sources}, {"DetailTypes", s.DetailTypes}} {
		for _, v := range f.values {
			if strings.TrimSpace(v) == "" || len(v) > 256 {
				return invalid(f.field, "use non-blank values of at most 256 characters, as the outbox writer requires of events", "has the value %q", v)
			}
		}
	}
	return nil
}

// ValidatePattern checks that p is an EventBridge event pattern: a JSON
// object, not empty, whose leaves are arrays of values or matchers.
func ValidatePattern(p string) error {
	var v any
	if err := json.Unmarshal([]byte(p), &v); err != nil {
		return invalid("EventPattern", `use a JSON object such as {"source":["com.example.orders"]}, for example with jsonencode()`, "is not valid JSON (%v)", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return invalid("EventPattern", `use a JSON object such as {"source":["com.example.orders"]}`, "is not a JSON object")
	}
	if len(obj) == 0 {
		return invalid("EventPattern", `match at least one field, such as {"source":["com.example.orders"]}`, "is an empty object")
	}
	return checkLeaves(obj, "")
}

func checkLeaves(obj map[string]any, at string) error {
	for k, v := range obj {
		field := strings.TrimPrefix(at+"."+k, ".")
		switch t := v.(type) {
		case map[string]any:
			if len(t) == 0 {
				return invalid("EventPattern", "remove the empty object, or match a field in it", "has an empty object at %s", field)
			}
			if err := checkLeaves(t, field); err != nil {
				return err
			}
		case []any:
			if len(t) == 0 {
				return invalid("EventPattern", "list at least one value, or remove the field", "has an empty array at %s", field)
			}
		default:
			return invalid("EventPattern", fmt.Sprintf(`put the value in an array, as in {%q:[%s]}`, k, jsonOf(v)), "has the value %s at %s, which is not an array", jsonOf(v), field)
		}
	}
	return nil
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// SameJSON reports whether two JSON documents mean the same (key order and
// layout aside). Documents that are not JSON compare as strings.
func SameJSON(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	return jsonOf(x) == jsonOf(y)
}
