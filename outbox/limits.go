package outbox

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Limits are what a kind of target accepts, as AWS documents it: the
// largest message (or event) and the totals of one batch call. The
// relay's target kinds (the Limits method of each) and the Writer take
// them from here, the record contract, so that the writer's check, the
// claim check and the relay's packing agree.
type Limits struct {
	// MessageBytes is the largest message or event, as the service counts
	// it (an SNS or SQS message's body and attributes; an EventBridge
	// event as delivered to a rule's target, whose entry it holds).
	MessageBytes int
	// BatchBytes is the total of one batch call (PutEvents,
	// PublishBatch, SendMessageBatch).
	BatchBytes int
	// BatchEntries is the number of entries of one batch call.
	BatchEntries int
}

// The target kinds' names (a pipeline's target.type; the relay's
// OUTBOX_TARGET).
const (
	TargetEventBridge = "eventbridge"
	TargetSNS         = "sns"
	TargetSQS         = "sqs"
)

const (
	kib = 1024
	mib = 1024 * kib
)

// TargetLimits are the limits of each target kind, by name:
//
//   - EventBridge: PutEvents takes 10 entries whose total is under 1 MB
//     (PutEvents, EventBridge API reference; 256 KB until 2026-01-29).
//   - SNS: PublishBatch takes 10 messages of 256 KiB (262,144 bytes) in
//     all, bodies and attributes counted, unless the topic's
//     MaximumMessageSize is raised (PublishBatch, SNS API reference).
//   - SQS: SendMessageBatch takes 10 messages of 1 MiB (1,048,576 bytes)
//     in all, attributes counted (SendMessageBatch, SQS API reference).
var TargetLimits = map[string]Limits{
	TargetEventBridge: {MessageBytes: mib, BatchBytes: mib, BatchEntries: 10},
	TargetSNS:         {MessageBytes: 256 * kib, BatchBytes: 256 * kib, BatchEntries: 10},
	TargetSQS:         {MessageBytes: mib, BatchBytes: mib, BatchEntries: 10},
}

// LimitsOf returns the limits of the target kind named target.
func LimitsOf(target string) (Limits, bool) {
	l, ok := TargetLimits[target]
	return l, ok
}

// targetNames are the kinds of TargetLimits, sorted, quoted, for messages.
func targetNames() string {
	var names []string
	for t := range TargetLimits {
		names = append(names, fmt.Sprintf("%q", t))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// MaxItemBytes is DynamoDB's item size limit, 400 KB (binary, attribute
// names and values counted): an event's data stored in its item must fit
// it whatever the target takes ("Constraints in Amazon DynamoDB").
const MaxItemBytes = 400 * kib

// itemHeadroom is room kept in an item for the attributes the relay adds
// later (its failures' reason and hint, the time of publishing).
const itemHeadroom = 4 * kib

// MaxStoredItemBytes is the largest item the Writer writes.
const MaxStoredItemBytes = MaxItemBytes - itemHeadroom

// ItemSize is the size DynamoDB counts for an item: each attribute's name
// and value, maps and lists with their overhead ("DynamoDB item sizes and
// formats").
func ItemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name) + attributeSize(v)
	}
	return n
}

func attributeSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return len(v.Value)/2 + 2
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberM:
		return 3 + len(v.Value) + ItemSize(v.Value)
	case *types.AttributeValueMemberL:
		n := 3 + len(v.Value)
		for _, e := range v.Value {
			n += attributeSize(e)
		}
		return n
	}
	return 1
}

// WithTarget tells the Writer the kind of target its events are published
// to ("eventbridge", "sns" or "sqs", the pipeline's target.type), so that
// it allows events up to that kind's limit (TargetLimits) and a claim
// check stores only what that kind would refuse or what the item cannot
// hold. Without it, an event must fit every kind: 256 KiB, SNS's limit.
// NewWriter refuses an unknown kind.
func WithTarget(target string) WriterOption {
	return func(w *Writer) { w.target = target }
}

// limit is the largest published size the Writer allows, and what it is.
func (w *Writer) limit() (int, string) {
	if l, ok := LimitsOf(w.target); ok && w.target != "" {
		return l.MessageBytes, "the " + w.target + " target's limit"
	}
	return MaxEntryBytes, "the limit every target kind accepts (give the Writer WithTarget to use its target's)"
}

// targetProblem is what is wrong with the Writer's target kind.
func (w *Writer) targetProblem() error {
	if _, ok := LimitsOf(w.target); w.target != "" && !ok {
		return fmt.Errorf("outbox: WithTarget(%q): not a target kind: use %s", w.target, targetNames())
	}
	return nil
}

// publishedSizeOn is the size of r on the Writer's target kind
// (PublishedSizeOn).
func (w *Writer) publishedSizeOn(r Record) int { return r.PublishedSizeOn(w.target) }

// PublishedSizeOn is the size of r on the target kind named target: its
// largest form there in any format (on EventBridge, the event delivered
// to a rule's target too); for "" or an unknown kind, PublishedSize. The
// Writer checks an event against its kind's limit with it, and the relay
// a claim-checked event's data before publishing it inline.
func (r Record) PublishedSizeOn(target string) int {
	switch target {
	case TargetEventBridge:
		return r.eventBridgeSize()
	case TargetSNS, TargetSQS:
		return r.messageSizeAny()
	}
	return r.PublishedSize()
}

// checkSize fails when r, the event at index, is larger than the Writer's
// target accepts, or its item larger than DynamoDB stores.
func (w *Writer) checkSize(r Record, index int) error {
	limit, what := w.limit()
	if size := w.publishedSizeOn(r); size > limit {
		return &EventError{Index: index, Field: "Detail", Err: ErrEventTooLarge,
			Fix: fmt.Sprintf("the published event would be %d bytes, over %d bytes, %s; keep it under that, or give the Writer WithClaimCheck and write it with Write, which stores data of up to 10 MiB in S3 and publishes its reference", size, limit, what)}
	}
	if size := ItemSize(w.table.Item(r)); size > MaxStoredItemBytes {
		return &EventError{Index: index, Field: "Detail", Err: ErrEventTooLarge,
			Fix: fmt.Sprintf("its outbox item would be %d bytes, over %d bytes, DynamoDB's 400 KB item limit less room for the relay's attributes; give the Writer WithClaimCheck and write it with Write, which stores the data in S3", size, MaxStoredItemBytes)}
	}
	return nil
}

// fits reports whether r can be written whole, without a claim check, by
// w at threshold (0: the target's limit).
func (w *Writer) fits(r Record, threshold int) bool {
	limit, _ := w.limit()
	if threshold > 0 {
		limit = min(limit, threshold)
	}
	return w.publishedSizeOn(r) <= limit && ItemSize(w.table.Item(r)) <= MaxStoredItemBytes
}
