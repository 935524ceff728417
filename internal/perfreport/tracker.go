package perfreport

import (
	"context"
	"sync"
	"time"
)

// tracker records when each event was committed and first received.
type tracker struct {
	mu        sync.Mutex
	committed map[string]time.Time
	received  map[string]time.Time
	dups      map[string]int
}

func newTracker() *tracker {
	return &tracker{committed: map[string]time.Time{}, received: map[string]time.Time{}, dups: map[string]int{}}
}

func (t *tracker) commit(id string, at time.Time) {
	t.mu.Lock()
	t.committed[id] = at
	t.mu.Unlock()
}

func (t *tracker) receive(id string, at time.Time) {
	t.mu.Lock()
	if _, ok := t.received[id]; ok {
		t.dups[id]++
	} else {
		t.received[id] = at
	}
	t.mu.Unlock()
}

// waitAll waits until every event of ids was received, or timeout; it
// returns the number still missing.
func (t *tracker) waitAll(ctx context.Context, ids []string, timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	for {
		t.mu.Lock()
		missing := 0
		for _, id := range ids {
			if _, ok := t.received[id]; !ok {
				missing++
			}
		}
		t.mu.Unlock()
		if missing == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return missing
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// latencies returns receipt minus commit of the received events of ids,
// the number not received, and the duplicates.
func (t *tracker) latencies(ids []string) (ds []time.Duration, lost, dups int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		r, ok := t.received[id]
		if !ok {
			lost++
			continue
		}
		ds = append(ds, r.Sub(t.committed[id]))
		dups += t.dups[id]
	}
	return ds, lost, dups
}

// lastReceipt is the latest receipt among ids.
func (t *tracker) lastReceipt(ids []string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	var last time.Time
	for _, id := range ids {
		if r := t.received[id]; r.After(last) {
			last = r
		}
	}
	return last
}

// count is the number of distinct events received.
func (t *tracker) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.received)
}
