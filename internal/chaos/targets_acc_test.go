package chaos

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/tfrun"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// chaosTarget is one kind of target the suite runs on: what the
// configuration takes as given, the relay's publish call and its faults.
// Everything else (the writers, the kills, the stream, the record
// contract, the consumer of the subscription's queue) is the same for every
// kind. Adding a kind is one row of chaosTargets.
type chaosTarget struct {
	// name is the value of CHAOS_TARGET and the line's target=.
	name string
	// fifo says the target deduplicates by MessageDeduplicationId, so that
	// the run's duplicates must stay within MaxFIFODuplicateShare.
	fifo bool
	// what names the target in the log ("bus", "topic").
	what string
	// prepare creates what testdata/main.tf is given rather than builds,
	// and returns the variables that name it; nil for nothing.
	prepare func(ctx context.Context, cfg aws.Config, name string) ([]tfrun.Var, error)
	// service, operation and permission are the relay's publish call and
	// the IAM action that allows it.
	service, operation, permission string
	// faults are the publish call's faults for the whole run: entries and
	// calls that fail with retryable codes, and entries refused for the
	// environment (a denied principal, an unusable KMS key).
	faults []control.FaultRule
	// missing is how the target answers while it does not exist.
	missing control.FaultRule
	// fresh, on a deduplicating target, reads how many messages the
	// target at arn took as new (not duplicates of the window); nil when
	// it does not deduplicate. With it, the run counts the entries of the
	// publish call that the target accepted (countingRule), which must be
	// the entries it authorized and validated.
	fresh func(ctx context.Context, ctl *control.Client, arn string) (int, error)
	// ordered, on a FIFO target, applies the pipeline in ordered mode and
	// writes ordered events on a few hot keys among many
	// (ordered_acc_test.go), whose order per key the consumer checks.
	ordered bool
}

// chaosTargets are the kinds the suite runs on; the first is the default.
var chaosTargets = []chaosTarget{
	{
		name: "eventbridge", what: "bus", service: "events", operation: "PutEvents", permission: "events:PutEvents",
		faults: []control.FaultRule{
			{Entry: true, Code: "InternalFailure", Rate: 0.05, Message: "chaos: entry internal failure"},
			{Entry: true, Code: "ThrottlingException", Rate: 0.05, Message: "chaos: entry throttled"},
			{Code: "ThrottlingException", Rate: 0.05, Message: "chaos: rate exceeded"},
			{Code: "InternalFailure", Rate: 0.03, Message: "chaos: internal failure"},
			{Entry: true, Code: "AccessDeniedException", Rate: 0.02, Message: "chaos: not authorized to put events on this bus"},
			{Entry: true, Code: "KMSAccessDeniedException", Rate: 0.02, Message: "chaos: the bus's KMS key denies access"},
		},
		// Per entry, as EventBridge answers for a bus that does not exist.
		// (Deleting the bus itself would take the consumer's rule with it,
		// and events published in the moment between its re-creation and
		// the rule's would match nothing: EventBridge drops them, whatever
		// the publisher does.)
		missing: control.FaultRule{Entry: true, Code: "ResourceNotFoundException", Message: "Event bus default does not exist."},
	},
	snsFIFO,
	snsFIFO.withOrdering(),
}

// snsFIFO is the SNS FIFO topic, with the consumer's SQS FIFO queue
// subscribed.
var snsFIFO = chaosTarget{
	name: "sns-fifo", fifo: true, what: "topic", prepare: fifoTopic, fresh: topicMessagesPublished,
	service: "sns", operation: "PublishBatch", permission: "sns:Publish",
	// The codes of the SNS API reference: Throttled (HTTP 429),
	// InternalError (500), AuthorizationError, KMSAccessDenied.
	faults: []control.FaultRule{
		{Entry: true, Code: "InternalError", Rate: 0.05, Message: "chaos: entry internal error"},
		{Entry: true, Code: "Throttled", Rate: 0.05, Message: "chaos: entry throttled"},
		{Code: "Throttled", HTTPStatus: 429, Rate: 0.05, Message: "chaos: rate exceeded"},
		{Code: "InternalError", Rate: 0.03, Message: "chaos: internal error"},
		{Entry: true, Code: "AuthorizationError", Rate: 0.02, Message: "chaos: not authorized to publish to this topic"},
		{Entry: true, Code: "KMSAccessDenied", Rate: 0.02, Message: "chaos: the topic's KMS key denies access"},
	},
	// A whole call, as SNS answers for a topic that does not exist.
	// (Deleting the topic would delete the consumer's subscription.)
	missing: control.FaultRule{Code: "NotFound", HTTPStatus: 404, Message: "Topic does not exist"},
}

// targetFromEnv is the kind CHAOS_TARGET names, the first by default.
func targetFromEnv(t *testing.T) chaosTarget {
	t.Helper()
	v := os.Getenv("CHAOS_TARGET")
	var names []string
	for _, k := range chaosTargets {
		if v == "" || v == k.name {
			return k
		}
		names = append(names, k.name)
	}
	t.Fatalf("CHAOS_TARGET=%q: want one of %s", v, strings.Join(names, ", "))
	return chaosTarget{}
}

// rules are the kind's faults on its publish call and, on a deduplicating
// target, the rule that counts its entries.
func (k chaosTarget) rules() []control.FaultRule {
	out := make([]control.FaultRule, len(k.faults))
	for i, f := range k.faults {
		f.Service, f.Operation = k.service, k.operation
		out[i] = f
	}
	if k.fresh != nil {
		out = append(out, k.countingRule())
	}
	return out
}

// countingRule fires for every entry of the publish call that reaches the
// target's per-entry faults, and fails none, so that its Fired counts
// them. SNS authorizes the call and validates each message before, and
// only checks the FIFO ids after, so that the count, less the entries the
// injected faults refused, is of the messages it accepted. (EventBridge
// authorizes each entry after its faults: a count there would include
// the entries refused while the relay's permission is revoked.) The
// control API takes no rule without a code or a latency, so it has a
// latency, which per-entry rules do not apply.
func (k chaosTarget) countingRule() control.FaultRule {
	return control.FaultRule{Service: k.service, Operation: k.operation, Entry: true, Latency: awsapi.Duration(time.Microsecond)}
}

// isCounting reports whether f is k's counting rule.
func (k chaosTarget) isCounting(f control.FaultRule) bool {
	return f.Entry && f.Code == "" && f.Service == k.service && f.Operation == k.operation
}

// accepted is how many entries of the publish call the target accepted,
// from the rules as they stood before the faults cleared (during) and at
// the end (after, with only the counting rule): every entry counted, less
// those an injected entry fault refused.
func (k chaosTarget) accepted(during, after []control.FaultRule) int {
	n := 0
	for _, f := range append(slices.Clone(during), after...) {
		switch {
		case k.isCounting(f):
			n += f.Fired
		case f.Entry && f.Service == k.service && f.Operation == k.operation:
			n -= f.Fired
		}
	}
	return n
}

// recount adds the counting rule again once the faults are cleared, on a
// deduplicating target: the drain publishes too.
func (r *run) recount(ctx context.Context) error {
	if r.kind.fresh == nil {
		return nil
	}
	_, err := r.ctl.AddFault(ctx, r.kind.countingRule())
	return err
}

// deduplication logs, on a deduplicating target, how many messages it
// accepted from the relay for the events written, how many of them it
// took as new, and so how many republished ones its deduplication
// absorbed.
func (r *run) deduplication(ctx context.Context, during []control.FaultRule, written int) error {
	if r.kind.fresh == nil {
		return nil
	}
	after, err := r.ctl.Faults(ctx)
	if err != nil {
		return err
	}
	accepted := r.kind.accepted(during, after) - int(r.refusedMidRun.Load())
	fresh, err := r.kind.fresh(ctx, r.ctl, r.out.TargetARN)
	if err != nil {
		return err
	}
	r.t.Logf("%s: the %s accepted %d messages for the %d events written, %d of them as new: its deduplication absorbed %d republished messages",
		r.kind.name, r.kind.what, accepted, written, fresh, accepted-fresh)
	return nil
}

// missingRule is the kind's answer for a missing target, on its publish
// call.
func (k chaosTarget) missingRule() control.FaultRule {
	f := k.missing
	f.Service, f.Operation = k.service, k.operation
	return f
}

// fifoTopic creates the SNS FIFO topic <name>-orders.fifo, which the
// pipeline publishes to and the consumer's queue subscribes to. It lives
// as long as the stack.
func fifoTopic(ctx context.Context, cfg aws.Config, name string) ([]tfrun.Var, error) {
	out, err := sns.NewFromConfig(cfg).CreateTopic(ctx, &sns.CreateTopicInput{
		Name: aws.String(name + "-orders.fifo"), Attributes: map[string]string{"FifoTopic": "true"},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the FIFO topic: %w", err)
	}
	return []tfrun.Var{{Name: "topic_arn", Value: aws.ToString(out.TopicArn)}}, nil
}

// topicMessagesPublished reads the topic's NumberOfMessagesPublished from
// the stack's SNS counters, which count a FIFO topic's new messages, not
// the duplicates it accepts without delivering.
func topicMessagesPublished(ctx context.Context, ctl *control.Client, arn string) (int, error) {
	var out struct {
		Topics map[string]struct {
			Published int `json:"numberOfMessagesPublished"`
		} `json:"topics"`
	}
	if err := ctl.Do(ctx, http.MethodGet, "sns/metrics", nil, &out); err != nil {
		return 0, fmt.Errorf("reading the SNS counters: %w", err)
	}
	t, ok := out.Topics[arn]
	if !ok {
		return 0, fmt.Errorf("the SNS counters have no topic %s", arn)
	}
	return t.Published, nil
}

// kinds are the record contract's target kinds of the publish services.
var kinds = map[string]string{"events": outbox.TargetEventBridge, "sns": outbox.TargetSNS, "sqs": outbox.TargetSQS}

// oversizeDetail is the detail of the run's "oversize" poison events: one
// over the target's message limit where an item can hold it (SNS, 256
// KiB); where the target takes more than a DynamoDB item holds
// (EventBridge and SQS, 1 MiB since 2026), no item is too large for it, and
// the poison is a detail that is not a JSON object.
func (k chaosTarget) oversizeDetail() string {
	if outbox.TargetLimits[kinds[k.service]].MessageBytes >= outbox.MaxItemBytes {
		return `["not","an","object"]`
	}
	return `{"blob":"` + strings.Repeat("x", 270*1024) + `"}`
}
