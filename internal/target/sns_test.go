package target

import (
	"context"
	"strings"
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
	tests := []struct {
		code   string
		sender bool
		status publish.Status
		class  retry.Class
		hint   string
	}{
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
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			t.Parallel()
			p := &SNSPublisher{Client: &scriptedSNS{code: tt.code, sender: tt.sender}, TopicARN: "arn:aws:sns:us-east-1:123456789012:orders", Retry: policy}
			res := p.Publish(context.Background(), records(1))[0]
			if res.Status != tt.status || res.Class != tt.class || !strings.Contains(res.Hint, tt.hint) {
				t.Errorf("%+v; want %v, %s, hint with %q", res, tt.status, tt.class, tt.hint)
			}
		})
	}
}
