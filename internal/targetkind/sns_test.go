package targetkind

import (
	"context"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
)

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
	checkErrorClasses(t, tests, func(code string, sender bool) publish.Result {
		p := &SNSPublisher{Client: failingWith(code, sender), TopicARN: "arn:aws:sns:us-east-1:123456789012:orders", Retry: noWait}
		return p.Publish(context.Background(), records(1))[0]
	})
}
