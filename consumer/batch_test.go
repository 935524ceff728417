package consumer

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// inFlight records a handler's calls: per group, the order of the events
// applied, and the most calls running at once, overall and per group.
type inFlight struct {
	mu                 sync.Mutex
	order              map[string][]string
	all                []string
	running, maxAtOnce int
	groupRunning       map[string]int
	groupOverlap       bool
}

func newInFlight() *inFlight {
	return &inFlight{order: map[string][]string{}, groupRunning: map[string]int{}}
}

func (f *inFlight) enter(group, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.order[group] = append(f.order[group], id)
	f.all = append(f.all, id)
	f.running++
	f.maxAtOnce = max(f.maxAtOnce, f.running)
	f.groupRunning[group]++
	if f.groupRunning[group] > 1 {
		f.groupOverlap = true
	}
}

func (f *inFlight) leave(group string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.running--
	f.groupRunning[group]--
}

// waitFor waits until n handlers have run at once, or the deadline passes.
func (f *inFlight) waitFor(n int, deadline time.Time) bool {
	for time.Now().Before(deadline) {
		f.mu.Lock()
		ok := f.maxAtOnce >= n
		f.mu.Unlock()
		if ok {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

// concurrentConsumer is a Consumer whose handler records its calls in f;
// the first message of each group waits until atOnce handlers run at once
// (or 10 s pass), so that a batch applied one message at a time is seen.
func concurrentConsumer(t *testing.T, f *inFlight, atOnce int, opts ...ConsumerOption) *Consumer[map[string]any] {
	t.Helper()
	return withoutInbox(t, func(_ context.Context, e Event[map[string]any], _ *Tx) error {
		group, _, _ := strings.Cut(e.ID, "-")
		f.enter(group, e.ID)
		defer f.leave(group)
		if strings.HasSuffix(e.ID, "-1") {
			f.waitFor(atOnce, time.Now().Add(10*time.Second))
		}
		if e.Data["fail"] == true {
			return errors.New("handler failed")
		}
		return nil
	}, append([]ConsumerOption{WithMetricsWriter(io.Discard)}, opts...)...)
}

// On a FIFO queue the groups of a batch are applied at once, each group's
// messages in order and one at a time, and a failure stops its group only.
func TestHandleSQSFIFOGroupsConcurrentlyInOrder(t *testing.T) {
	t.Parallel()
	f := newInFlight()
	c := concurrentConsumer(t, f, 3)
	resp, err := c.HandleSQS(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		message("a-1", "a", false), message("b-1", "b", false), message("a-2", "a", false), message("c-1", "c", false),
		message("b-2", "b", true), message("a-3", "a", false), message("b-3", "b", false), message("c-2", "c", false),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := failures(resp), []string{"msg-b-2", "msg-b-3"}; !slices.Equal(got, want) {
		t.Errorf("failures %v, want %v", got, want)
	}
	for group, want := range map[string][]string{"a": {"a-1", "a-2", "a-3"}, "b": {"b-1", "b-2"}, "c": {"c-1", "c-2"}} {
		if got := f.order[group]; !slices.Equal(got, want) {
			t.Errorf("group %s applied %v, want %v in order", group, got, want)
		}
	}
	if f.maxAtOnce != 3 {
		t.Errorf("at most %d handlers ran at once, want the 3 groups", f.maxAtOnce)
	}
	if f.groupOverlap {
		t.Error("two messages of one group ran at once")
	}
}

// A standard queue's messages are applied WithConcurrency at a time, never
// more; WithConcurrency(1) applies them in order.
func TestHandleSQSConcurrencyBound(t *testing.T) {
	t.Parallel()
	batch := []events.SQSMessage{message("m1-1", "", false), message("m2-1", "", false), message("m3-1", "", false),
		message("m4-1", "", false), message("m5-2", "", false)}
	f := newInFlight()
	if _, err := concurrentConsumer(t, f, 2, WithConcurrency(2)).HandleSQS(context.Background(), events.SQSEvent{Records: batch}); err != nil {
		t.Fatal(err)
	}
	if f.maxAtOnce != 2 {
		t.Errorf("at most %d handlers ran at once, want 2", f.maxAtOnce)
	}
	one := newInFlight()
	c := concurrentConsumer(t, one, 1, WithConcurrency(1))
	if _, err := c.HandleSQS(context.Background(), events.SQSEvent{Records: batch}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"m1-1", "m2-1", "m3-1", "m4-1", "m5-2"}; one.maxAtOnce != 1 || !slices.Equal(one.all, want) {
		t.Errorf("WithConcurrency(1): %d at once, applied %v, want %v one at a time", one.maxAtOnce, one.all, want)
	}
	if _, err := New(c.inbox, c.handle, WithConcurrency(0)); err == nil || !strings.Contains(err.Error(), "WithConcurrency") {
		t.Errorf("WithConcurrency(0): %v, want an error naming it", err)
	}
}
