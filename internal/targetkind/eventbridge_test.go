package targetkind

import (
	"context"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

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
	p := &EventBridgePublisher{Client: fake, EventBus: "default", Retry: policy}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res := p.Publish(ctx, records(3))
	if fake.calls != 1 || slept != 0 {
		t.Errorf("%d calls, %d sleeps; want 1 call and no sleep", fake.calls, slept)
	}
	for i, r := range res {
		if r.Status != publish.Failed || !strings.Contains(r.Reason, "ThrottlingException") {
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
	p := &EventBridgePublisher{Client: fake, EventBus: "default", Retry: policy}
	res := p.Publish(context.Background(), records(5))
	if !reflect.DeepEqual(fake.sizes, []int{5, 2}) {
		t.Errorf("call sizes %v, want [5 2]", fake.sizes)
	}
	for i, r := range res {
		wantRetries := 0
		if i == 1 || i == 4 {
			wantRetries = 1
		}
		if r.Status != publish.Published || r.Retries != wantRetries {
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
		status    publish.Status
		class     retry.Class
		hint      string // in the hint
		wantCalls int
	}{
		{"MalformedDetail", publish.Rejected, retry.ClassPoison, "", 1},
		{"InvalidArgument", publish.Rejected, retry.ClassPoison, "", 1},
		{"AccessDeniedException", publish.Failed, retry.ClassEnvironment, "may lack events:PutEvents on the bus orders", 1},
		{"NotAuthorizedForSourceException", publish.Failed, retry.ClassEnvironment, "may refuse this source", 1},
		{"NotAuthorizedForDetailTypeException", publish.Failed, retry.ClassEnvironment, "may refuse this source or detail type", 1},
		{"ResourceNotFoundException", publish.Failed, retry.ClassEnvironment, "the bus orders may not exist in eu-west-1", 1},
		{"KMSAccessDeniedException", publish.Failed, retry.ClassEnvironment, "KMS key", 1},
		{"SomethingNew", publish.Failed, retry.ClassEnvironment, "unknown error code", 1},
		{"ThrottlingException", publish.Failed, retry.ClassThrottling, "", 3},
		{"InternalFailure", publish.Failed, retry.ClassTransient, "", 3},
	}
	policy := retry.Policy{Attempts: 3, Sleep: func(context.Context, time.Duration) error { return nil }}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			t.Parallel()
			fake := &scriptedEventBridge{codes: func(int, int) string { return tt.code }}
			p := &EventBridgePublisher{Client: fake, EventBus: "orders", Retry: policy, Region: "eu-west-1"}
			res := p.Publish(context.Background(), records(1))[0]
			if res.Status != tt.status || res.Class != tt.class || !strings.Contains(res.Hint, tt.hint) || fake.calls != tt.wantCalls {
				t.Errorf("%+v after %d calls; want %v, %s, hint with %q, %d calls", res, fake.calls, tt.status, tt.class, tt.hint, tt.wantCalls)
			}
		})
	}
}

// TestEventBridgeEntrySizes: an event of 900 KB goes whole in a call of
// its own, since two do not fit the kind's call total; an entry over the
// kind's limit is rejected, naming the limit, without being sent.
func TestEventBridgeEntrySizes(t *testing.T) {
	t.Parallel()
	limits := eventBridgeKind{}.Limits()
	fake := &scriptedEventBridge{codes: func(int, int) string { return "" }}
	p := &EventBridgePublisher{Client: fake, EventBus: "default", Retry: noWait}
	rs := records(3)
	rs[0].Detail = []byte(`{"blob":"` + strings.Repeat("x", 900*1024) + `"}`)
	rs[1].Detail = rs[0].Detail
	rs[2].Detail = []byte(`{"blob":"` + strings.Repeat("x", limits.MessageBytes) + `"}`)
	res := p.Publish(context.Background(), rs)
	if res[0].Status != publish.Published || res[1].Status != publish.Published || fake.calls != 2 || !slices.Equal(fake.sizes, []int{1, 1}) {
		t.Errorf("900 KB events: %+v %+v in calls of %v", res[0], res[1], fake.sizes)
	}
	if res[2].Status != publish.Rejected || !strings.Contains(res[2].Reason, "EventBridge accepts at most "+strconv.Itoa(limits.MessageBytes)) {
		t.Errorf("an entry over %d bytes: %+v", limits.MessageBytes, res[2])
	}
}
