package demo

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/stats"
)

// Tally records what the writers committed and what each subscription
// received. It is safe for concurrent use.
type Tally struct {
	mu sync.Mutex
	// routes says which detail types each subscription receives.
	routes  map[string][]string
	written map[string]written
	// received counts deliveries per subscription and event id.
	received map[string]map[string]int
	// unexpected counts deliveries of events a subscription should not
	// receive (or that no writer wrote).
	unexpected map[string]int
	latencies  []time.Duration
	// complete counts written events that every subscription expecting
	// them has received.
	complete int
}

type written struct {
	detailType string
	committed  time.Time
	// missing is how many subscriptions still have to receive it.
	missing int
}

// NewTally returns a Tally for subscriptions receiving the given detail
// types, by subscription name.
func NewTally(routes map[string][]string) *Tally {
	t := &Tally{
		routes: routes, written: map[string]written{},
		received: map[string]map[string]int{}, unexpected: map[string]int{},
	}
	for sub := range routes {
		t.received[sub] = map[string]int{}
	}
	return t
}

// expects reports whether subscription sub receives detailType.
func (t *Tally) expects(sub, detailType string) bool {
	return slices.Contains(t.routes[sub], detailType)
}

// Written records an event committed at committed.
func (t *Tally) Written(id, detailType string, committed time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := written{detailType: detailType, committed: committed}
	for sub := range t.routes {
		if t.expects(sub, detailType) {
			w.missing++
			// A delivery may have been recorded before the writer got
			// back from its commit.
			if t.received[sub][id] > 0 {
				w.missing--
			}
		}
	}
	t.written[id] = w
	if w.missing == 0 {
		t.complete++
	}
}

// Received records the delivery of event id to subscription sub at at. The
// first delivery of an event to each subscription is a latency sample
// (commit to arrival); later ones are duplicates.
func (t *Tally) Received(sub, id string, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.received[sub][id]++
	w, ok := t.written[id]
	if ok && !t.expects(sub, w.detailType) {
		t.unexpected[sub]++
		return
	}
	if !ok || t.received[sub][id] > 1 {
		return
	}
	t.latencies = append(t.latencies, at.Sub(w.committed))
	w.missing--
	t.written[id] = w
	if w.missing == 0 {
		t.complete++
	}
}

// Progress is a snapshot of the counts.
type Progress struct {
	Written   int
	Delivered int
}

// Progress returns the events written and those delivered to every
// subscription expecting them.
func (t *Tally) Progress() Progress {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Progress{Written: len(t.written), Delivered: t.complete}
}

// SubscriptionSummary is what one subscription received.
type SubscriptionSummary struct {
	Name string
	// Expected is the number of written events it should receive.
	Expected int
	// Delivered is the number of distinct expected events it received.
	Delivered  int
	Duplicates int
	// Unexpected counts deliveries of events of a type it does not
	// subscribe to, or that were never written.
	Unexpected int
}

// Summary is the outcome of a run.
type Summary struct {
	Written       int
	Delivered     int
	Lost          int
	Duplicates    int
	P50, P99      time.Duration
	Subscriptions []SubscriptionSummary
}

// Summary computes the outcome: an event is delivered when every
// subscription that should receive it has; duplicates are deliveries beyond
// the first of an event to a subscription.
func (t *Tally) Summary() Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := Summary{Written: len(t.written), Delivered: t.complete}
	s.Lost = s.Written - s.Delivered
	subs := make([]string, 0, len(t.routes))
	for sub := range t.routes {
		subs = append(subs, sub)
	}
	sort.Strings(subs)
	for _, sub := range subs {
		ss := SubscriptionSummary{Name: sub, Unexpected: t.unexpected[sub]}
		for _, w := range t.written {
			if t.expects(sub, w.detailType) {
				ss.Expected++
			}
		}
		for id, n := range t.received[sub] {
			w, ok := t.written[id]
			if !ok {
				ss.Unexpected += n
				continue
			}
			if !t.expects(sub, w.detailType) {
				continue
			}
			ss.Delivered++
			ss.Duplicates += n - 1
		}
		s.Duplicates += ss.Duplicates
		s.Subscriptions = append(s.Subscriptions, ss)
	}
	s.P50 = stats.Percentile(t.latencies, 50)
	s.P99 = stats.Percentile(t.latencies, 99)
	return s
}

// Line is the summary's last line.
func (s Summary) Line() string {
	return fmt.Sprintf("demo: written=%d delivered=%d lost=%d duplicates=%d p50_ms=%d p99_ms=%d",
		s.Written, s.Delivered, s.Lost, s.Duplicates, s.P50.Milliseconds(), s.P99.Milliseconds())
}

// String is the full summary, ending with Line.
func (s Summary) String() string {
	var b strings.Builder
	for _, ss := range s.Subscriptions {
		fmt.Fprintf(&b, "subscription %-10s expected=%d delivered=%d duplicates=%d unexpected=%d\n",
			ss.Name, ss.Expected, ss.Delivered, ss.Duplicates, ss.Unexpected)
	}
	fmt.Fprintf(&b, "latency (commit to arrival): p50=%s p99=%s\n", s.P50.Round(time.Millisecond), s.P99.Round(time.Millisecond))
	b.WriteString(s.Line())
	return b.String()
}
