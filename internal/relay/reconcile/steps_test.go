package reconcile

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/batch"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestInSteps: the steps hold each key's events by rank, FirstStepRanks
// first, then twice as many each time, in order of sequence; an event
// without a sequence goes in the first step.
func TestInSteps(t *testing.T) {
	t.Parallel()
	var items []batch.Item
	add := func(key string, n int) {
		for seq := 1; seq <= n; seq++ {
			items = append(items, batch.Item{Record: outbox.Record{OrderingKey: key, Sequence: int64(seq)}})
		}
	}
	add("hot", 1000)
	add("cold", 3)
	items = append(items, batch.Item{Record: outbox.Record{EventID: "unordered"}})
	steps := inSteps(items)
	// hot: ranks 0-127, 128-383, 384-895, 896-999.
	want := [][2]int64{{1, FirstStepRanks}, {FirstStepRanks + 1, 3 * FirstStepRanks}, {3*FirstStepRanks + 1, 7 * FirstStepRanks}, {7*FirstStepRanks + 1, 1000}}
	if len(steps) != len(want) {
		t.Fatalf("%d steps, want %d", len(steps), len(want))
	}
	for n, step := range steps {
		var hot []int64
		others := 0
		for _, it := range step {
			if it.Record.OrderingKey == "hot" {
				hot = append(hot, it.Record.Sequence)
			} else {
				others++
			}
		}
		if got := fmt.Sprint(hot[0], hot[len(hot)-1], len(hot)); got != fmt.Sprint(want[n][0], want[n][1], want[n][1]-want[n][0]+1) {
			t.Errorf("step %d: hot events %s (first, last, count), want %d to %d", n, got, want[n][0], want[n][1])
		}
		if wantOthers := map[bool]int{true: 4, false: 0}[n == 0]; others != wantOthers {
			t.Errorf("step %d: %d other events, want %d", n, others, wantOthers)
		}
	}
}

// TestKeptBytesFor: a reconciler of the default memory keeps what a
// Reconciler without MaxKeptBytes keeps, and twice the memory twice as
// much.
func TestKeptBytesFor(t *testing.T) {
	t.Parallel()
	if got := KeptBytesFor(256); got != DefaultMaxKeptBytes {
		t.Errorf("KeptBytesFor(256) = %d, want DefaultMaxKeptBytes (%d)", got, DefaultMaxKeptBytes)
	}
	if got := KeptBytesFor(512); got != 2*DefaultMaxKeptBytes {
		t.Errorf("KeptBytesFor(512) = %d, want %d", got, 2*DefaultMaxKeptBytes)
	}
}

// TestMaxKept: a run keeps what it can publish in its time: MinKept for a
// run of 30 s or less, KeptPerSecond a second above, MaxWaiting from
// 150 s and without a deadline; MaxKept when set.
// TestOrderedPageSize: a page of every shard takes half of what the run
// keeps at most, from 10 to 1,000 events a page, so that the first round
// of a run that keeps MinKept reads every shard of the most a table has.
func TestOrderedPageSize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		keep, shards int
		want         int32
	}{
		{MaxWaiting, 16, OrderedPageSize}, {MinKept, 16, 312}, {MinKept, 64, 78}, {MinKept, outbox.MaxPendingShards, 19}, {100, 64, 10},
	} {
		got := orderedPageSize(c.keep, c.shards)
		if got != c.want {
			t.Errorf("keeping %d of %d shards: pages of %d, want %d", c.keep, c.shards, got, c.want)
		}
		if c.keep >= MinKept && int(got)*c.shards > c.keep/2 {
			t.Errorf("keeping %d of %d shards: a first round of %d events, over half of it", c.keep, c.shards, int(got)*c.shards)
		}
	}
}

func TestMaxKept(t *testing.T) {
	t.Parallel()
	within := func(d time.Duration) context.Context {
		ctx, cancel := context.WithTimeout(t.Context(), d)
		t.Cleanup(cancel)
		return ctx
	}
	r := &Reconciler{}
	for _, c := range []struct {
		ctx      context.Context
		min, max int
	}{
		{within(10 * time.Second), MinKept, MinKept},
		{within(30 * time.Second), MinKept, MinKept},
		{within(90 * time.Second), 3*MinKept - 100, 3 * MinKept},
		{within(300 * time.Second), MaxWaiting, MaxWaiting},
		{t.Context(), MaxWaiting, MaxWaiting},
	} {
		d, _ := c.ctx.Deadline()
		if got := r.maxKept(c.ctx); got < c.min || got > c.max {
			t.Errorf("deadline in %v: keeps %d, want %d to %d", time.Until(d).Round(time.Second), got, c.min, c.max)
		}
	}
	r.MaxKept = 123
	if got := r.maxKept(within(300 * time.Second)); got != 123 {
		t.Errorf("MaxKept 123: keeps %d", got)
	}
}
