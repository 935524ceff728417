package publish

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

func TestChunks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		sizes []int
		want  [][]int
	}{
		{"none", nil, nil},
		{"one", []int{5}, [][]int{{0}}},
		{"by count", []int{1, 1, 1, 1, 1}, [][]int{{0, 1}, {2, 3}, {4}}},
		{"by bytes", []int{6, 5, 5, 10, 1}, [][]int{{0}, {1, 2}, {3}, {4}}},
		{"exactly the limit", []int{4, 6, 10}, [][]int{{0, 1}, {2}}},
		{"oversize alone", []int{1, 11, 1}, [][]int{{0}, {1}, {2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Chunks(tt.sizes, 2, 10); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Chunks(%v, 2, 10) = %v, want %v", tt.sizes, got, tt.want)
			}
		})
	}
}

// scriptedEventBridge fails entries by their position in the call.
type scriptedEventBridge struct {
	codes func(call int, k int) string
	calls int
	sizes []int
}

func (s *scriptedEventBridge) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	s.calls++
	s.sizes = append(s.sizes, len(in.Entries))
	out := &eventbridge.PutEventsOutput{}
	for k := range in.Entries {
		if code := s.codes(s.calls, k); code != "" {
			out.FailedEntryCount++
			out.Entries = append(out.Entries, types.PutEventsResultEntry{ErrorCode: aws.String(code), ErrorMessage: aws.String("x")})
		} else {
			out.Entries = append(out.Entries, types.PutEventsResultEntry{EventId: aws.String("id")})
		}
	}
	return out, nil
}

func records(n int) []outbox.Record {
	rs := make([]outbox.Record, n)
	for i := range rs {
		rs[i] = outbox.Record{EventID: "01JDQ8Z7K5V6W3X2Y1Z0ABCDEF", Source: "s", DetailType: "d", Detail: []byte(`{}`), OccurredAt: time.Unix(0, 0)}
	}
	return rs
}

// TestRetryStopsBeforeDeadline: with too little time left for a backoff, a
// throttled entry is reported as failed at once instead of overrunning the
// invocation.
func TestRetryStopsBeforeDeadline(t *testing.T) {
	t.Parallel()
	slept := 0
	policy := retry.Policy{Attempts: 10, Base: time.Second, Max: time.Second, Margin: 2 * time.Second,
		Sleep: func(context.Context, time.Duration) error { slept++; return nil }}
	fake := &scriptedEventBridge{codes: func(int, int) string { return "ThrottlingException" }}
	p := &EventBridge{Client: fake, EventBus: "default", Retry: policy}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res := p.Publish(ctx, records(3))
	if fake.calls != 1 || slept != 0 {
		t.Errorf("%d calls, %d sleeps; want 1 call and no sleep", fake.calls, slept)
	}
	for i, r := range res {
		if r.Status != Failed || !strings.Contains(r.Reason, "ThrottlingException") {
			t.Errorf("record %d: %+v", i, r)
		}
	}
}

// TestRetryResendsOnlyFailedEntries: the retry call carries only the
// entries that failed.
func TestRetryResendsOnlyFailedEntries(t *testing.T) {
	t.Parallel()
	policy := retry.Policy{Attempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }}
	fake := &scriptedEventBridge{codes: func(call, k int) string {
		if call == 1 && (k == 1 || k == 4) {
			return "InternalFailure"
		}
		return ""
	}}
	p := &EventBridge{Client: fake, EventBus: "default", Retry: policy}
	res := p.Publish(context.Background(), records(5))
	if !reflect.DeepEqual(fake.sizes, []int{5, 2}) {
		t.Errorf("call sizes %v, want [5 2]", fake.sizes)
	}
	for i, r := range res {
		wantRetries := 0
		if i == 1 || i == 4 {
			wantRetries = 1
		}
		if r.Status != Published || r.Retries != wantRetries {
			t.Errorf("record %d: %+v", i, r)
		}
	}
}

// TestEntryErrorClasses: only a fault of the entry itself rejects the
// event; every other code, unknown ones included, leaves it pending with a
// hint, without retrying it within the invocation.
func TestEntryErrorClasses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		code      string
		status    Status
		class     retry.Class
		hint      string // in the hint
		wantCalls int
	}{
		{"MalformedDetail", Rejected, retry.ClassPoison, "", 1},
		{"InvalidArgument", Rejected, retry.ClassPoison, "", 1},
		{"AccessDeniedException", Failed, retry.ClassEnvironment, "may lack events:PutEvents on the bus orders", 1},
		{"NotAuthorizedForSourceException", Failed, retry.ClassEnvironment, "may refuse this source", 1},
		{"NotAuthorizedForDetailTypeException", Failed, retry.ClassEnvironment, "may refuse this source or detail type", 1},
		{"ResourceNotFoundException", Failed, retry.ClassEnvironment, "the bus orders may not exist in eu-west-1", 1},
		{"KMSAccessDeniedException", Failed, retry.ClassEnvironment, "KMS key", 1},
		{"SomethingNew", Failed, retry.ClassEnvironment, "unknown error code", 1},
		{"ThrottlingException", Failed, retry.ClassThrottling, "", 3},
		{"InternalFailure", Failed, retry.ClassTransient, "", 3},
	}
	policy := retry.Policy{Attempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			t.Parallel()
			fake := &scriptedEventBridge{codes: func(int, int) string { return tt.code }}
			p := &EventBridge{Client: fake, EventBus: "orders", Retry: policy, Region: "eu-west-1"}
			res := p.Publish(context.Background(), records(1))[0]
			if res.Status != tt.status || res.Class != tt.class || !strings.Contains(res.Hint, tt.hint) || fake.calls != tt.wantCalls {
				t.Errorf("%+v after %d calls; want %v, %s, hint with %q, %d calls", res, fake.calls, tt.status, tt.class, tt.hint, tt.wantCalls)
			}
		})
	}
}

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
		status Status
		class  retry.Class
		hint   string
	}{
		{"InvalidParameter", true, Rejected, retry.ClassPoison, ""},
		{"InvalidParameterValue", true, Rejected, retry.ClassPoison, ""},
		{"AuthorizationError", true, Failed, retry.ClassEnvironment, "may lack sns:Publish on the topic arn:aws:sns:us-east-1:123456789012:orders"},
		{"KMSDisabled", true, Failed, retry.ClassEnvironment, "the KMS key of the topic arn:aws:sns:us-east-1:123456789012:orders may be disabled"},
		{"KMSAccessDenied", true, Failed, retry.ClassEnvironment, "deny sns"},
		{"KMSNotFound", true, Failed, retry.ClassEnvironment, "KMS key"},
		{"KMSInvalidState", true, Failed, retry.ClassEnvironment, "KMS key"},
		{"NotFound", true, Failed, retry.ClassEnvironment, "may not exist"},
		{"Throttled", true, Failed, retry.ClassThrottling, ""},
		{"Whatever", false, Failed, retry.ClassTransient, ""}, // a server fault
	}
	policy := retry.Policy{Attempts: 2, Sleep: func(context.Context, time.Duration) error { return nil }}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			t.Parallel()
			p := &SNS{Client: &scriptedSNS{code: tt.code, sender: tt.sender}, TopicARN: "arn:aws:sns:us-east-1:123456789012:orders", Retry: policy}
			res := p.Publish(context.Background(), records(1))[0]
			if res.Status != tt.status || res.Class != tt.class || !strings.Contains(res.Hint, tt.hint) {
				t.Errorf("%+v; want %v, %s, hint with %q", res, tt.status, tt.class, tt.hint)
			}
		})
	}
}
