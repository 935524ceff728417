package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// eventOf is an event whose detail is about n bytes.
func eventOf(n int) outbox.Event {
	e := orderPlaced()
	e.Detail = json.RawMessage(`{"blob":"` + strings.Repeat("x", n) + `"}`)
	return e
}

// TestMaxEntryBytesFitsEveryKind: the limit of a Writer without a target
// is the smallest kind's.
func TestMaxEntryBytesFitsEveryKind(t *testing.T) {
	t.Parallel()
	smallest := 0
	for kind, l := range outbox.TargetLimits {
		if smallest == 0 || l.MessageBytes < smallest {
			smallest = l.MessageBytes
		}
		if l.BatchBytes < l.MessageBytes || l.BatchEntries != 10 {
			t.Errorf("%s: %+v: a batch must hold one message of the largest size, and 10 entries", kind, l)
		}
	}
	if outbox.MaxEntryBytes != smallest {
		t.Errorf("MaxEntryBytes = %d, the smallest kind's limit is %d", outbox.MaxEntryBytes, smallest)
	}
}

// TestWriterRefusesOverItsTargetsLimit: each kind takes events up to its
// own limit, and the refusal of a larger one names that limit; an event
// of 300 KB, which SNS refuses, is written whole for SQS and EventBridge.
func TestWriterRefusesOverItsTargetsLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		target  string
		size    int
		ok      bool
		limitIs string
	}{
		{"", 300 * 1024, false, strconv.Itoa(outbox.MaxEntryBytes)},
		{outbox.TargetSNS, 300 * 1024, false, strconv.Itoa(outbox.TargetLimits[outbox.TargetSNS].MessageBytes)},
		{outbox.TargetSQS, 300 * 1024, true, ""},
		{outbox.TargetEventBridge, 300 * 1024, true, ""},
		{outbox.TargetSQS, outbox.TargetLimits[outbox.TargetSQS].MessageBytes, false, strconv.Itoa(outbox.TargetLimits[outbox.TargetSQS].MessageBytes)},
		{outbox.TargetEventBridge, outbox.TargetLimits[outbox.TargetEventBridge].MessageBytes, false, strconv.Itoa(outbox.TargetLimits[outbox.TargetEventBridge].MessageBytes)},
		// Under the target's limit, but over what a DynamoDB item holds.
		{outbox.TargetSQS, 500 * 1024, false, strconv.Itoa(outbox.MaxStoredItemBytes)},
	}
	for _, tt := range tests {
		t.Run(tt.target+"/"+strconv.Itoa(tt.size), func(t *testing.T) {
			t.Parallel()
			w, err := outbox.NewWriter(&recordingClient{}, outbox.Table{Name: "orders", Layout: outbox.LayoutShared}, outbox.WithTarget(tt.target))
			if err != nil {
				t.Fatal(err)
			}
			_, rec, err := w.Put(eventOf(tt.size))
			if tt.ok {
				if err != nil {
					t.Fatalf("a %d-byte event for %q: %v", tt.size, tt.target, err)
				}
				if rec.DataRef != nil || len(rec.Detail) < tt.size {
					t.Errorf("the event was not written whole: %d bytes of detail", len(rec.Detail))
				}
				return
			}
			var ee *outbox.EventError
			if !errors.Is(err, outbox.ErrEventTooLarge) || !errors.As(err, &ee) || ee.Field != "Detail" || !strings.Contains(err.Error(), tt.limitIs+" bytes") {
				t.Errorf("a %d-byte event for %q = %v, want a refusal naming %s bytes", tt.size, tt.target, err, tt.limitIs)
			}
		})
	}
}

// TestWriterRefusesUnknownTarget: NewWriter names the kinds it knows.
func TestWriterRefusesUnknownTarget(t *testing.T) {
	t.Parallel()
	_, err := outbox.NewWriter(&recordingClient{}, outbox.Table{Name: "orders", Layout: outbox.LayoutShared}, outbox.WithTarget("kinesis"))
	if err == nil || !strings.Contains(err.Error(), `"kinesis"`) || !strings.Contains(err.Error(), `"sqs"`) {
		t.Errorf("NewWriter(WithTarget(kinesis)) = %v", err)
	}
}

// TestClaimThresholdIsTheTargetsLimit: by default a claim check stores
// only what the target would refuse or the item cannot hold: 300 KB stays
// in the item for SQS and EventBridge and goes to S3 for SNS; 900 KB goes
// to S3 on every kind; a lower WithClaimThreshold still applies.
func TestClaimThresholdIsTheTargetsLimit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		target    string
		size      int
		threshold int
		claimed   bool
	}{
		{outbox.TargetSQS, 300 * 1024, 0, false},
		{outbox.TargetEventBridge, 300 * 1024, 0, false},
		{outbox.TargetSNS, 300 * 1024, 0, true},
		{"", 300 * 1024, 0, true},
		{outbox.TargetSQS, 900 * 1024, 0, true},
		{outbox.TargetEventBridge, 900 * 1024, 0, true},
		{outbox.TargetSNS, 900 * 1024, 0, true},
		{outbox.TargetSQS, 100 * 1024, 64 * 1024, true},
		{outbox.TargetSQS, 100 * 1024, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.target+"/"+strconv.Itoa(tt.size)+"/"+strconv.Itoa(tt.threshold), func(t *testing.T) {
			t.Parallel()
			var opts []outbox.ClaimCheckOption
			if tt.threshold > 0 {
				opts = append(opts, outbox.WithClaimThreshold(tt.threshold))
			}
			objects := &putRecorder{}
			w, err := outbox.NewWriter(&recordingClient{}, outbox.Table{Name: "orders", Layout: outbox.LayoutShared},
				outbox.WithClaimCheck(objects, "claims", opts...), outbox.WithTarget(tt.target))
			if err != nil {
				t.Fatal(err)
			}
			rs, err := w.Write(context.Background(), nil, eventOf(tt.size))
			if err != nil {
				t.Fatal(err)
			}
			if claimed := rs[0].DataRef != nil; claimed != tt.claimed || len(objects.puts) != map[bool]int{true: 1}[tt.claimed] {
				t.Errorf("claimed = %v with %d objects, want %v", claimed, len(objects.puts), tt.claimed)
			}
		})
	}
}
