package demo

import (
	"strings"
	"testing"
	"time"
)

func TestTallySummary(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1700000000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tally := NewTally(map[string][]string{
		"billing":  {"OrderPlaced"},
		"shipping": {"OrderPlaced", "OrderCancelled"},
	})
	tally.Written("p1", "OrderPlaced", at(0))
	tally.Written("p2", "OrderPlaced", at(0))
	tally.Written("c1", "OrderCancelled", at(0))
	tally.Written("p3", "OrderPlaced", at(0)) // shipping never gets it: lost

	tally.Received("billing", "p1", at(10))
	tally.Received("shipping", "p1", at(20))
	tally.Received("shipping", "p1", at(500)) // duplicate: no latency sample
	tally.Received("billing", "p2", at(30))
	tally.Received("shipping", "p2", at(40))
	tally.Received("shipping", "c1", at(50))
	tally.Received("billing", "c1", at(60)) // billing does not subscribe to cancellations
	tally.Received("billing", "p3", at(70))
	tally.Received("billing", "zz", at(80)) // never written

	if p := tally.Progress(); p.Written != 4 || p.Delivered != 3 {
		t.Errorf("progress = %+v, want 4 written, 3 delivered", p)
	}
	s := tally.Summary()
	if s.Written != 4 || s.Delivered != 3 || s.Lost != 1 || s.Duplicates != 1 {
		t.Errorf("summary = %+v", s)
	}
	// Samples: 10 20 30 40 50 70 (first deliveries of expected events).
	if s.P50 != 30*time.Millisecond || s.P99 != 70*time.Millisecond {
		t.Errorf("p50 = %v, p99 = %v; want 30ms and 70ms", s.P50, s.P99)
	}
	want := []SubscriptionSummary{
		{Name: "billing", Expected: 3, Delivered: 3, Duplicates: 0, Unexpected: 2},
		{Name: "shipping", Expected: 4, Delivered: 3, Duplicates: 1, Unexpected: 0},
	}
	if len(s.Subscriptions) != len(want) {
		t.Fatalf("subscriptions = %+v", s.Subscriptions)
	}
	for i := range want {
		if s.Subscriptions[i] != want[i] {
			t.Errorf("subscription %d = %+v, want %+v", i, s.Subscriptions[i], want[i])
		}
	}
	lines := strings.Split(s.String(), "\n")
	if got, wantLine := lines[len(lines)-1], "demo: written=4 delivered=3 lost=1 duplicates=1 p50_ms=30 p99_ms=70"; got != wantLine {
		t.Errorf("last line = %q, want %q", got, wantLine)
	}
}

func TestTallyDeliveryBeforeCommitReturns(t *testing.T) {
	t.Parallel()
	now := time.Now()
	tally := NewTally(map[string][]string{"billing": {"OrderPlaced"}})
	// The consumer saw the event before the writer recorded its commit.
	tally.Received("billing", "p1", now)
	tally.Written("p1", "OrderPlaced", now)
	s := tally.Summary()
	if s.Delivered != 1 || s.Lost != 0 || s.Subscriptions[0].Unexpected != 0 {
		t.Errorf("summary = %+v, want the early delivery counted", s)
	}
}
