package localawstest_test

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// fatalRecorder is a testing.TB whose Fatalf records instead of stopping.
type fatalRecorder struct {
	testing.TB
	failed string
}

func (r *fatalRecorder) Helper() {}
func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

func TestWantError(t *testing.T) {
	t.Parallel()
	wrapped := fmt.Errorf("deleting: %w", &types.QueueDoesNotExist{Message: new("gone")})
	ok := &fatalRecorder{TB: t}
	if got := localawstest.ErrorAs[*types.QueueDoesNotExist](ok, wrapped, "DeleteQueue"); got == nil || ok.failed != "" {
		t.Errorf("a wrapped QueueDoesNotExist: got %v, failure %q; want it returned and no failure", got, ok.failed)
	}
	other := &fatalRecorder{TB: t}
	localawstest.WantError[*types.QueueDoesNotExist](other, &types.PurgeQueueInProgress{}, "DeleteQueue")
	if other.failed == "" {
		t.Error("another error type passed")
	}
	none := &fatalRecorder{TB: t}
	localawstest.WantError[*types.QueueDoesNotExist](none, nil, "DeleteQueue")
	if none.failed == "" {
		t.Error("a nil error passed")
	}
}

func TestWantCode(t *testing.T) {
	t.Parallel()
	wrapped := fmt.Errorf("deleting: %w", &types.QueueDoesNotExist{Message: new("gone")})
	ok := &fatalRecorder{TB: t}
	localawstest.WantCode(ok, wrapped, "QueueDoesNotExist", "DeleteQueue")
	if ok.failed != "" {
		t.Errorf("a wrapped QueueDoesNotExist: failure %q, want none", ok.failed)
	}
	for _, err := range []error{&types.PurgeQueueInProgress{}, nil} {
		r := &fatalRecorder{TB: t}
		localawstest.WantCode(r, err, "QueueDoesNotExist", "DeleteQueue")
		if r.failed == "" {
			t.Errorf("%v passed as QueueDoesNotExist", err)
		}
	}
}

func TestWantErrorMessage(t *testing.T) {
	t.Parallel()
	gone := fmt.Errorf("deleting: %w", &types.QueueDoesNotExist{Message: new("queue orders is gone")})
	ok := &fatalRecorder{TB: t}
	localawstest.WantErrorMessage[*types.QueueDoesNotExist](ok, gone, "DeleteQueue", "orders is gone")
	if ok.failed != "" {
		t.Errorf("a QueueDoesNotExist with the message: failure %q, want none", ok.failed)
	}
	other := &fatalRecorder{TB: t}
	localawstest.WantErrorMessage[*types.QueueDoesNotExist](other, gone, "DeleteQueue", "billing")
	if other.failed == "" {
		t.Error("a message without the fragment passed")
	}
}
