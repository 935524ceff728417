package publish

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Message attributes set on every SNS message, for subscription filter
// policies.
const (
	AttrSource     = "source"
	AttrDetailType = "detail-type"
)

// SNSAPI is the part of the SNS client the relay uses.
type SNSAPI interface {
	PublishBatch(ctx context.Context, in *sns.PublishBatchInput, opts ...func(*sns.Options)) (*sns.PublishBatchOutput, error)
}

// SNS publishes with PublishBatch: up to 10 messages and 256 KB per call,
// calls in parallel. The message is the record's EnvelopeJSON, with the
// source and detail type also as string message attributes.
type SNS struct {
	Client   SNSAPI
	TopicARN string
	// Retry bounds the retries of throttled and internally failed messages.
	Retry retry.Policy
	// Concurrency bounds the calls in flight; 0 means DefaultConcurrency.
	Concurrency int
}

var _ Publisher = (*SNS)(nil)

// snsPoison are the PublishBatch entry codes that mean the message itself is
// invalid: its body or attributes (PublishBatch errors in the SNS API
// reference). Authorization, missing topic and KMS codes are not among them.
var snsPoison = map[string]struct{}{"InvalidParameter": {}, "InvalidParameterValue": {}, "ValidationException": {}}

// hint names the probable fix of a PublishBatch error code.
func (p *SNS) hint(code string) string {
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

// MessageSize is what SNS counts for a message: the body and, for each
// attribute, its name, data type and value.
func MessageSize(body string, attrs map[string]types.MessageAttributeValue) int {
	n := len(body)
	for name, v := range attrs {
		n += len(name) + len(aws.ToString(v.DataType)) + len(aws.ToString(v.StringValue)) + len(v.BinaryValue)
	}
	return n
}

// Publish implements Publisher.
func (p *SNS) Publish(ctx context.Context, records []outbox.Record) []Result {
	results := make([]Result, len(records))
	entries := make([]types.PublishBatchRequestEntry, len(records))
	var sizes, index []int
	for i, r := range records {
		body := string(r.EnvelopeJSON())
		attrs := map[string]types.MessageAttributeValue{
			AttrSource:     {DataType: aws.String("String"), StringValue: aws.String(r.Source)},
			AttrDetailType: {DataType: aws.String("String"), StringValue: aws.String(r.DetailType)},
		}
		size := MessageSize(body, attrs)
		if size > MaxBatchBytes {
			results[i] = Result{Status: Rejected, Class: retry.ClassPoison, Reason: fmt.Sprintf("the message is %d bytes; SNS accepts at most %d", size, MaxBatchBytes)}
			continue
		}
		entries[i] = types.PublishBatchRequestEntry{Message: aws.String(body), MessageAttributes: attrs}
		sizes = append(sizes, size)
		index = append(index, i)
	}
	chunks := acceptedChunks(sizes, index)
	send := func(ctx context.Context, idx []int) ([]entryResult, error) {
		in := &sns.PublishBatchInput{TopicArn: aws.String(p.TopicARN), PublishBatchRequestEntries: make([]types.PublishBatchRequestEntry, len(idx))}
		for k, i := range idx {
			e := entries[i]
			e.Id = aws.String(strconv.Itoa(k)) // unique within the call
			in.PublishBatchRequestEntries[k] = e
		}
		out, err := p.Client.PublishBatch(ctx, in)
		if err != nil {
			return nil, err
		}
		res := make([]entryResult, len(idx))
		seen := make([]bool, len(idx))
		for _, s := range out.Successful {
			if k, ok := entryIndex(s.Id, len(idx)); ok {
				res[k], seen[k] = entryResult{ok: true}, true
			}
		}
		for _, f := range out.Failed {
			k, ok := entryIndex(f.Id, len(idx))
			if !ok {
				continue
			}
			code, message := aws.ToString(f.Code), aws.ToString(f.Message)
			if !f.SenderFault && !retry.IsTransientCode(code) {
				// A server-side fault is worth retrying whatever its code.
				code, message = "InternalError", code+": "+message
			}
			res[k], seen[k] = entryResult{code: code, message: message}, true
		}
		for k := range res {
			if !seen[k] {
				res[k] = entryResult{code: "InternalError", message: "PublishBatch returned no result for the message"}
			}
		}
		return res, nil
	}
	batcher{target: "SNS", policy: p.Retry, concurrency: p.Concurrency, poison: snsPoison, hint: p.hint}.run(ctx, chunks, send, results)
	return results
}

func entryIndex(id *string, n int) (int, bool) {
	k, err := strconv.Atoi(aws.ToString(id))
	return k, err == nil && k >= 0 && k < n
}
