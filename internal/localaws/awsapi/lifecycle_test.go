package awsapi

import (
	"errors"
	"slices"
	"sync"
	"testing"
)

func TestLifecycle(t *testing.T) {
	t.Parallel()
	l := NewLifecycle()
	var (
		mu    sync.Mutex
		order []string
	)
	record := func(step string) { mu.Lock(); order = append(order, step); mu.Unlock() }
	held := false
	lock := lockFunc(func(locked bool) { held = locked })
	l.Lists(lock, func(add func(string)) {
		if !held {
			t.Error("List runs without the lock")
		}
		add("arn:a")
		add("arn:b")
	})
	if got := l.Inventory(); len(got) != 2 || got[0] != "arn:a" || got[1] != "arn:b" || held {
		t.Fatalf("Inventory = %v (lock held after: %v)", got, held)
	}
	l.Go(func() {
		<-l.Context().Done()
		record("background")
	})
	l.OnStop(func() {
		if l.Context().Err() == nil {
			t.Error("a stop runs before the context is cancelled")
		}
		record("stop")
	})
	l.OnCleanup(func() error { record("cleanup"); return errors.New("cleanup failed") })
	if err := l.Close(); err == nil || err.Error() != "cleanup failed" {
		t.Fatalf("Close = %v, want the cleanup's error", err)
	}
	if err := l.Close(); err == nil {
		t.Fatal("a second Close forgot the first one's error")
	}
	// The stop and the background piece run concurrently; the cleanup
	// comes after both.
	if len(order) != 3 || order[2] != "cleanup" {
		t.Fatalf("Close ran %v", order)
	}
}

type lockFunc func(locked bool)

func (f lockFunc) Lock()   { f(true) }
func (f lockFunc) Unlock() { f(false) }

func TestCounters(t *testing.T) {
	t.Parallel()
	type metrics struct{ Sent, Failed int }
	var c Counters[metrics]
	c.Count("arn:a", func(m *metrics) { m.Sent++ })
	c.Count("arn:a", func(m *metrics) { m.Failed++ })
	c.Count("arn:b", func(*metrics) {})
	snap := c.Snapshot()
	if len(snap) != 2 || snap["arn:a"] != (metrics{1, 1}) || snap["arn:b"] != (metrics{}) {
		t.Fatalf("Snapshot = %v", snap)
	}
	c.Count("arn:a", func(m *metrics) { m.Sent++ })
	if snap["arn:a"].Sent != 1 {
		t.Fatal("a snapshot changes with the counters")
	}
}

func TestStopEach(t *testing.T) {
	t.Parallel()
	var (
		held    bool
		closed  bool
		stopped []string
	)
	lock := lockFunc(func(locked bool) { held = locked })
	stop := StopEach(lock, &closed, map[int]string{1: "a", 2: "b"}, func(v string) {
		if held {
			t.Error("a value is stopped with the lock held")
		}
		if !closed {
			t.Error("a value is stopped before the service is marked closed")
		}
		stopped = append(stopped, v)
	})
	stop()
	slices.Sort(stopped)
	if !closed || !slices.Equal(stopped, []string{"a", "b"}) || held {
		t.Fatalf("closed %v, stopped %v, lock held after: %v", closed, stopped, held)
	}
}
