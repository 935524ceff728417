package target

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
)

// scriptedSNS fails every message with one code.
type scriptedSNS struct {
	code   string
	sender bool
}

func (s *scriptedSNS) PublishBatch(_ context.Context, in *sns.PublishBatchInput, _ ...func(*sns.Options)) (*sns.PublishBatchOutput, error) {
	out := &sns.PublishBatchOutput{}
	for _, e := range in.PublishBatchRequestEntries {
		out.Failed = append(out.Failed, snstypes.BatchResultErrorEntry{Id: e.Id, Code: aws.String(s.code), Message: aws.String("x"), SenderFault: s.sender})
	}
	return out, nil
}

func TestSNSErrorClasses(t *testing.T) {
	t.Parallel()
	tests := []errorClassCase{
		{"InvalidParameter", true, publish.Rejected, retry.ClassPoison, ""},
		{"InvalidParameterValue", true, publish.Rejected, retry.ClassPoison, ""},
		{"AuthorizationError", true, publish.Failed, retry.ClassEnvironment, "may lack sns:Publish on the topic arn:aws:sns:us-east-1:123456789012:orders"},
		{"KMSDisabled", true, publish.Failed, retry.ClassEnvironment, "the KMS key of the topic arn:aws:sns:us-east-1:123456789012:orders may be disabled"},
		{"KMSAccessDenied", true, publish.Failed, retry.ClassEnvironment, "deny sns"},
		{"KMSNotFound", true, publish.Failed, retry.ClassEnvironment, "KMS key"},
		{"KMSInvalidState", true, publish.Failed, retry.ClassEnvironment, "KMS key"},
		{"NotFound", true, publish.Failed, retry.ClassEnvironment, "may not exist"},
		{"Throttled", true, publish.Failed, retry.ClassThrottling, ""},
		{"Whatever", false, publish.Failed, retry.ClassTransient, ""}, // a server fault
	}
	policy := retry.Policy{Attempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }}
	checkErrorClasses(t, tests, func(code string, sender bool) publish.Result {
		p := &SNSPublisher{Client: &scriptedSNS{code: code, sender: sender}, TopicARN: "arn:aws:sns:us-east-1:123456789012:orders", Retry: policy}
		return p.Publish(context.Background(), records(1))[0]
	})
}
