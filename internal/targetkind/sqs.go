package targetkind

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// SQS is the kind that sends to an SQS queue with SendMessageBatch.
const SQS Type = outbox.TargetSQS

// EnvQueueARN is the sqs kind's queue, standard or FIFO.
const EnvQueueARN = "OUTBOX_QUEUE_ARN"

var queueARNPattern = regexp.MustCompile(`^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,80}(\.fifo)?$`)

func init() { register(sqsKind{}) }

type sqsKind struct{}

func (sqsKind) Type() Type      { return SQS }
func (sqsKind) Service() string { return "sqs" }
func (sqsKind) What() string    { return "SQS queue" }

func (sqsKind) Settings() []Setting {
	return []Setting{{
		Field: "QueueARN", Env: EnvQueueARN,
		Value: func(s *Settings) *string { return &s.QueueARN },
		Check: func(v string) (string, string) {
			problem, fix := arnCheck(v, "SQS queue", "arn:aws:sqs:us-east-1:123456789012:orders", queueARNPattern.MatchString)
			if problem == "" && len(v[strings.LastIndex(v, ":")+1:]) > 80 {
				return "has a queue name over 80 characters", "use the ARN of an existing queue"
			}
			return problem, fix
		},
	}}
}

func (sqsKind) ARN(s Settings, _ Account) string { return s.QueueARN }

// Limits: SendMessageBatch takes 10 messages of 1 MiB in all, attributes
// counted (SendMessageBatch, SQS API reference). A queue refuses more than
// its MaximumMessageSize (1 MiB by default since 2025; 256 KiB for older
// queues): a call it refuses whole as too long is sent again in halves
// (publish.Batcher's TooLong).
func (sqsKind) Limits() outbox.Limits { return outbox.TargetLimits[outbox.TargetSQS] }

// Permission: SendMessageBatch is authorised by sqs:SendMessage.
func (sqsKind) Permission() Permission {
	return Permission{Sid: "PublishToQueue", Actions: []string{"sqs:SendMessage"}}
}

func (sqsKind) Exists(ctx context.Context, cfg aws.Config, s Settings) error {
	_, err := sqs.NewFromConfig(cfg).GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(QueueURL(s.QueueARN)), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	return err
}

func (sqsKind) Publisher(cfg aws.Config, s Settings, o PublisherOptions) (publish.Publisher, error) {
	c, err := client(o, SQS, func() SQSAPI { return sqs.NewFromConfig(cfg) })
	if err != nil {
		return nil, err
	}
	return &SQSPublisher{Client: c, QueueARN: s.QueueARN, Envelope: s.Envelope, Retry: o.Retry, Concurrency: o.Concurrency}, nil
}

// dnsSuffixes are the DNS suffixes of the partitions whose suffix is not
// amazonaws.com.
var dnsSuffixes = map[string]string{"aws-cn": "amazonaws.com.cn", "aws-iso": "c2s.ic.gov", "aws-iso-b": "sc2s.sgov.gov"}

// QueueURL is the URL of the queue of an ARN, in the form SQS documents
// (https://sqs.<region>.<suffix>/<account>/<name>). SQS names the queue by
// its URL's account and name, whatever endpoint the request is sent to.
func QueueURL(arn string) string {
	p := strings.SplitN(arn, ":", 6)
	if len(p) < 6 {
		return arn
	}
	suffix, ok := dnsSuffixes[p[1]]
	if !ok {
		suffix = "amazonaws.com"
	}
	return "https://sqs." + p[3] + "." + suffix + "/" + p[4] + "/" + p[5]
}

// SQSAPI is the part of the SQS client the relay uses.
type SQSAPI interface {
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

// SQSPublisher sends with SendMessageBatch: up to the kind's Limits (10
// messages and 1 MiB) per call, calls in parallel. The message body is the
// record's MessageIn its Envelope, as on SNS, with the source and detail type as
// string message attributes. To a FIFO queue, each message has its group
// (MessageGroupID) and deduplication id (MessageDeduplicationID), and the
// messages of one group are sent one call after the other, in order.
type SQSPublisher struct {
	Client   SQSAPI
	QueueARN string
	// Envelope is the message body's format; "" is outbox.FormatOutbox.
	Envelope outbox.Format
	// Retry bounds the retries of throttled and internally failed messages.
	Retry retry.Policy
	// Concurrency bounds the calls in flight; 0 means DefaultConcurrency.
	Concurrency int
}

var _ publish.Publisher = (*SQSPublisher)(nil)

// sqsPoison are the SendMessageBatch entry codes that mean the message
// itself is invalid: characters SQS refuses, an attribute or parameter
// value it refuses (the message over the queue's maximum size among them).
// Access, a missing queue and KMS codes are not among them.
var sqsPoison = map[string]struct{}{"InvalidMessageContents": {}, "InvalidParameterValue": {}, "InvalidAttributeValue": {}, "InvalidAttributeName": {}}

// sqsTooLong are the codes of a SendMessageBatch call refused whole for
// its total size: a queue's MaximumMessageSize under the batch's.
var sqsTooLong = map[string]struct{}{"AWS.SimpleQueueService.BatchRequestTooLong": {}, "BatchRequestTooLong": {}}

// hint names the probable fix of a SendMessageBatch error code.
func (p *SQSPublisher) hint(code string) string {
	switch {
	case strings.HasPrefix(code, "AccessDenied"), code == "InvalidClientTokenId", code == "UnrecognizedClientException":
		return fmt.Sprintf("the relay role may lack sqs:SendMessage on the queue %s, or the queue's policy may deny it", p.QueueARN)
	case strings.HasPrefix(strings.ToUpper(code), "KMS"):
		return fmt.Sprintf("the KMS key of the queue %s may be disabled or missing, or the relay role may lack kms:GenerateDataKey and kms:Decrypt on it", p.QueueARN)
	case strings.Contains(code, "NonExistentQueue"), code == "QueueDoesNotExist", strings.Contains(code, "NotFound"):
		return fmt.Sprintf("the queue %s may not exist", p.QueueARN)
	case strings.Contains(code, "BatchRequestTooLong"):
		return fmt.Sprintf("the queue %s may have a MaximumMessageSize below %d bytes: raise it to %d", p.QueueARN, sqsKind{}.Limits().BatchBytes, sqsKind{}.Limits().MessageBytes)
	}
	return "unknown error code: the event stays pending and is retried; check the queue " + p.QueueARN + " and the relay role"
}

// sqsEntry is the message of a record.
func sqsEntry(r outbox.Record, body string, fifo bool) types.SendMessageBatchRequestEntry {
	e := types.SendMessageBatchRequestEntry{
		MessageBody: aws.String(body),
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

// sqsMessageSize is what SQS counts for a message (messageSize).
func sqsMessageSize(e types.SendMessageBatchRequestEntry) int {
	return messageSize(e.MessageBody, e.MessageAttributes, func(v types.MessageAttributeValue) (*string, *string, []byte) {
		return v.DataType, v.StringValue, v.BinaryValue
	})
}

// Publish implements publish.Publisher.
func (p *SQSPublisher) Publish(ctx context.Context, records []outbox.Record) []publish.Result {
	url := aws.String(QueueURL(p.QueueARN))
	return idBatch[types.SendMessageBatchRequestEntry]{
		batcher: publish.Batcher{Target: "SQS", Policy: p.Retry, Concurrency: p.Concurrency, Poison: sqsPoison, Hint: p.hint,
			TooLong: sqsTooLong},
		limits: sqsKind{}.Limits(),
		fifo:   isFIFO(p.QueueARN),
		format: p.Envelope,
		entry:  sqsEntry,
		size:   sqsMessageSize,
		group:  func(e types.SendMessageBatchRequestEntry) string { return aws.ToString(e.MessageGroupId) },
		setID:  func(e *types.SendMessageBatchRequestEntry, id string) { e.Id = aws.String(id) },
		call: func(ctx context.Context, entries []types.SendMessageBatchRequestEntry) ([]publish.EntryResult, error) {
			out, err := p.Client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: url, Entries: entries})
			if err != nil {
				return nil, err
			}
			return batchResults(len(entries), "SendMessageBatch", sqsOutcomes(out)), nil
		},
	}.publish(ctx, records)
}

func sqsOutcomes(out *sqs.SendMessageBatchOutput) []outcome {
	return outcomesOf(out.Successful, out.Failed,
		func(s types.SendMessageBatchResultEntry) *string { return s.Id },
		func(f types.BatchResultErrorEntry) outcome {
			return outcome{id: f.Id, code: aws.ToString(f.Code), message: aws.ToString(f.Message), senderFault: f.SenderFault}
		})
}
