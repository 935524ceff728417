package targetkind

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// SNS is the kind that publishes to an SNS topic with PublishBatch.
const SNS Type = outbox.TargetSNS

// EnvTopicARN is the sns kind's topic, standard or FIFO.
const EnvTopicARN = "OUTBOX_TOPIC_ARN"

var topicARNPattern = regexp.MustCompile(`^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$`)

func init() { register(snsKind{}) }

type snsKind struct{}

func (snsKind) Type() Type      { return SNS }
func (snsKind) Service() string { return "sns" }
func (snsKind) What() string    { return "SNS topic" }

func (snsKind) Settings() []Setting {
	return []Setting{{
		Field: "TopicARN", Env: EnvTopicARN,
		Value: func(s *Settings) *string { return &s.TopicARN },
		Check: func(v string) (string, string) {
			return arnCheck(v, "SNS topic", "arn:aws:sns:us-east-1:123456789012:orders", topicARNPattern.MatchString)
		},
	}}
}

func (snsKind) ARN(s Settings, _ Account) string { return s.TopicARN }

// Limits: PublishBatch takes 10 messages of 256 KiB in all, bodies and
// attributes counted, at a topic's default MaximumMessageSize (PublishBatch,
// SNS API reference).
func (snsKind) Limits() outbox.Limits { return outbox.TargetLimits[outbox.TargetSNS] }

// Permission: PublishBatch is authorised by sns:Publish.
func (snsKind) Permission() Permission {
	return Permission{Sid: "PublishToTopic", Actions: []string{"sns:Publish"}}
}

func (snsKind) Exists(ctx context.Context, cfg aws.Config, s Settings) error {
	_, err := sns.NewFromConfig(cfg).GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(s.TopicARN)})
	return err
}

func (snsKind) Publisher(cfg aws.Config, s Settings, o PublisherOptions) (publish.Publisher, error) {
	c, err := client(o, SNS, func() SNSAPI { return sns.NewFromConfig(cfg) })
	if err != nil {
		return nil, err
	}
	return &SNSPublisher{Client: c, TopicARN: s.TopicARN, Envelope: s.Envelope, Retry: o.Retry, Concurrency: o.Concurrency}, nil
}

// SNSAPI is the part of the SNS client the relay uses.
type SNSAPI interface {
	PublishBatch(ctx context.Context, in *sns.PublishBatchInput, opts ...func(*sns.Options)) (*sns.PublishBatchOutput, error)
}

// SNSPublisher publishes with PublishBatch: up to the kind's Limits (10
// messages and 256 KiB) per call, calls in parallel. The message is the record's MessageIn its Envelope,
// with the source and detail type also as string message attributes. To a
// FIFO topic, each message has its group (MessageGroupID) and
// deduplication id (MessageDeduplicationID), and the messages of one group
// are sent one call after the other, in order.
type SNSPublisher struct {
	Client   SNSAPI
	TopicARN string
	// Envelope is the message body's format; "" is outbox.FormatOutbox.
	Envelope outbox.Format
	// Retry bounds the retries of throttled and internally failed messages.
	Retry retry.Policy
	// Concurrency bounds the calls in flight; 0 means DefaultConcurrency.
	Concurrency int
}

var _ publish.Publisher = (*SNSPublisher)(nil)

// snsPoison are the PublishBatch entry codes that mean the message itself is
// invalid: its body or attributes (PublishBatch errors in the SNS API
// reference). Authorization, missing topic and KMS codes are not among them.
var snsPoison = map[string]struct{}{"InvalidParameter": {}, "InvalidParameterValue": {}, "ValidationException": {}}

// hint names the probable fix of a PublishBatch error code.
func (p *SNSPublisher) hint(code string) string {
	switch {
	case code == "AuthorizationError", strings.HasPrefix(code, "AccessDenied"), code == "InvalidClientTokenId":
		return fmt.Sprintf("the relay role may lack sns:Publish on the topic %s", p.TopicARN)
	case strings.HasPrefix(code, "KMS"):
		return fmt.Sprintf("the KMS key of the topic %s may be disabled or missing, or its policy may deny sns", p.TopicARN)
	case code == "NotFound", strings.Contains(code, "NotFound"):
		return fmt.Sprintf("the topic %s may not exist", p.TopicARN)
	case code == "InvalidSecurity":
		return fmt.Sprintf("the topic %s may require requests over HTTPS with Signature Version 4", p.TopicARN)
	}
	return "unknown error code: the event stays pending and is retried; check the topic " + p.TopicARN + " and the relay role"
}

// snsMessageSize is what SNS counts for a message (messageSize).
func snsMessageSize(e types.PublishBatchRequestEntry) int {
	return messageSize(e.Message, e.MessageAttributes, func(v types.MessageAttributeValue) (*string, *string, []byte) {
		return v.DataType, v.StringValue, v.BinaryValue
	})
}

// snsEntry is the message of a record.
func snsEntry(r outbox.Record, body string, fifo bool) types.PublishBatchRequestEntry {
	e := types.PublishBatchRequestEntry{
		Message: aws.String(body),
		MessageAttributes: messageAttributes(r, func(v string) types.MessageAttributeValue {
			return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}),
	}
	if fifo {
		e.MessageGroupId = aws.String(MessageGroupID(r))
		e.MessageDeduplicationId = aws.String(MessageDeduplicationID(r))
	}
	return e
}

// Publish implements publish.Publisher.
func (p *SNSPublisher) Publish(ctx context.Context, records []outbox.Record) []publish.Result {
	return idBatch[types.PublishBatchRequestEntry]{
		batcher: publish.Batcher{Target: "SNS", Policy: p.Retry, Concurrency: p.Concurrency, Poison: snsPoison, Hint: p.hint},
		limits:  snsKind{}.Limits(),
		fifo:    isFIFO(p.TopicARN),
		format:  p.Envelope,
		entry:   snsEntry,
		size:    snsMessageSize,
		group:   func(e types.PublishBatchRequestEntry) string { return aws.ToString(e.MessageGroupId) },
		setID:   func(e *types.PublishBatchRequestEntry, id string) { e.Id = aws.String(id) },
		call: func(ctx context.Context, entries []types.PublishBatchRequestEntry) ([]publish.EntryResult, error) {
			out, err := p.Client.PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(p.TopicARN), PublishBatchRequestEntries: entries})
			if err != nil {
				return nil, err
			}
			return batchResults(len(entries), "PublishBatch", snsOutcomes(out)), nil
		},
	}.publish(ctx, records)
}

func snsOutcomes(out *sns.PublishBatchOutput) []outcome {
	return outcomesOf(out.Successful, out.Failed,
		func(s types.PublishBatchResultEntry) *string { return s.Id },
		func(f types.BatchResultErrorEntry) outcome {
			return outcome{id: f.Id, code: aws.ToString(f.Code), message: aws.ToString(f.Message), senderFault: f.SenderFault}
		})
}

// outcomesOf lists the outcomes of a batch call's Successful and Failed
// entries.
func outcomesOf[S, F any](successful []S, failed []F, id func(S) *string, failure func(F) outcome) []outcome {
	o := make([]outcome, 0, len(successful)+len(failed))
	for _, s := range successful {
		o = append(o, outcome{id: id(s), ok: true})
	}
	for _, f := range failed {
		o = append(o, failure(f))
	}
	return o
}

// outcome is one entry of the Successful or Failed lists of a batch call
// that names its entries by Id (PublishBatch, SendMessageBatch).
type outcome struct {
	id            *string
	ok            bool
	code, message string
	senderFault   bool
}

// batchResults turns the outcomes of a call of n entries, whose ids are
// their positions, into one EntryResult per entry. A server-side fault is
// worth retrying whatever its code; an entry the call does not mention is
// an internal error, retried too.
func batchResults(n int, op string, outcomes []outcome) []publish.EntryResult {
	res := make([]publish.EntryResult, n)
	seen := make([]bool, n)
	for _, o := range outcomes {
		k, ok := entryIndex(o.id, n)
		if !ok {
			continue
		}
		switch {
		case o.ok:
			res[k] = publish.EntryResult{OK: true}
		case !o.senderFault && !retry.IsTransientCode(o.code):
			res[k] = publish.EntryResult{Code: "InternalError", Message: o.code + ": " + o.message}
		default:
			res[k] = publish.EntryResult{Code: o.code, Message: o.message}
		}
		seen[k] = true
	}
	for k := range res {
		if !seen[k] {
			res[k] = publish.EntryResult{Code: "InternalError", Message: op + " returned no result for the message"}
		}
	}
	return res
}

func entryIndex(id *string, n int) (int, bool) {
	k, err := strconv.Atoi(aws.ToString(id))
	return k, err == nil && k >= 0 && k < n
}
