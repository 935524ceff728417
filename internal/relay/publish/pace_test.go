package publish

import (
	"context"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// countingPace lets through up to allow events, a whole request or none
// of it, and counts what it was asked for.
type countingPace struct {
	allow int
	asked int
}

func (p *countingPace) Wait(_ context.Context, n int) bool {
	p.asked += n
	if n > p.allow {
		return false
	}
	p.allow -= n
	return true
}

// sent publishes everything and counts the records it was given.
type sent struct{ n int }

func (s *sent) Publish(_ context.Context, records []outbox.Record) []Result {
	s.n += len(records)
	return make([]Result, len(records))
}

// TestPaced: a context without a pace publishes at once; one with a pace
// waits for as many events as are sent, a batch call's worth at a time; a
// pace that does not allow them all before the deadline publishes those it
// let through and leaves the others untried, Failed and Deferred.
func TestPaced(t *testing.T) {
	t.Parallel()
	records := make([]outbox.Record, 7)
	pub := &sent{}
	if got := Paced(t.Context(), pub, records); len(got) != 7 || pub.n != 7 {
		t.Fatalf("without a pace: %d results, %d sent; want 7 and 7", len(got), pub.n)
	}
	pace := &countingPace{allow: 7}
	pub = &sent{}
	if got := Paced(WithPace(t.Context(), pace), pub, records); len(got) != 7 || pub.n != 7 || pace.asked != 7 {
		t.Errorf("with a pace: %d results, %d sent, %d waited for; want 7 each", len(got), pub.n, pace.asked)
	}
	records = make([]outbox.Record, 25)
	short := &countingPace{allow: 15}
	pub = &sent{}
	got := Paced(WithPace(t.Context(), short), pub, records)
	if pub.n != 10 || len(got) != 25 {
		t.Fatalf("pace of 15 for 25: %d sent, %d results; want the first call's 10 sent, 25 results", pub.n, len(got))
	}
	for i, r := range got {
		untried := r.Status == Failed && r.Deferred && r.Class == "" && r.Reason != ""
		if i < 10 && r.Status != Published || i >= 10 && !untried {
			t.Errorf("record %d: %+v, want the first 10 Published, the others Failed, Deferred, no failure class, a reason", i, r)
		}
	}
	asked := short.asked
	if Paced(WithPace(t.Context(), short), pub, nil); short.asked != asked {
		t.Errorf("nothing to publish waited for %d events, want none", short.asked-asked)
	}
}
