package chaos

import (
	"strings"
	"testing"
)

func TestKeyOrder(t *testing.T) {
	t.Parallel()
	o := NewKeyOrder()
	r := receive(o,
		// Key a: 1, 2, 2 again (a duplicate), 4, then 3: an inversion; 1
		// again, after 4, is a duplicate, not an inversion.
		reception{"a1", "a", 1}, reception{"a2", "a", 2}, reception{"a2", "a", 2}, reception{"a4", "a", 4},
		reception{"a3", "a", 3}, reception{"a1", "a", 1}, reception{"a5", "a", 5},
		// Key b: 1 and 4, never 2 or 3: two gaps.
		reception{"b1", "b", 1}, reception{"b4", "b", 4},
		// Key c: 2, then 1, a first reception below 2: an inversion. An
		// event without a sequence is counted once, however often received.
		reception{"c2", "c", 2}, reception{"c1", "c", 1},
		reception{"u", "", 0}, reception{"u", "", 0})
	if !r.Ordered || r.Inversions != 2 || r.Gaps != 2 || r.Unsequenced != 1 {
		t.Errorf("result = %+v, want ordered, 2 inversions, 2 gaps, 1 unsequenced", r)
	}
	if got := o.Keys(); got != 3 {
		t.Errorf("keys = %d, want 3", got)
	}
	ex := o.Examples()
	if len(ex) != 2 || !strings.Contains(ex[0], `"a": sequence 3 (event a3) after 4`) || !strings.Contains(ex[1], `"c": sequence 1 (event c1) after 2`) {
		t.Errorf("examples = %q", ex)
	}
}

func TestKeyOrderInOrder(t *testing.T) {
	t.Parallel()
	// Keys interleaved, each in order, with duplicates of earlier events
	// arriving late: no inversion, no gap.
	r := receive(NewKeyOrder(),
		reception{"a1", "a", 1}, reception{"b1", "b", 1}, reception{"a2", "a", 2},
		reception{"b2", "b", 2}, reception{"a1", "a", 1}, reception{"a3", "a", 3})
	if r.Inversions != 0 || r.Gaps != 0 || r.Unsequenced != 0 {
		t.Errorf("result = %+v, want no inversion, gap or unsequenced event", r)
	}
}

// reception is an event received: its id, its ordering key and its
// sequence.
type reception struct {
	id, key string
	seq     int64
}

// receive records the receptions in o, in their order, and returns the
// result o fills.
func receive(o *KeyOrder, receptions ...reception) Result {
	for _, e := range receptions {
		o.Received(e.id, e.key, e.seq)
	}
	var r Result
	o.Fill(&r)
	return r
}

func TestResultOrdered(t *testing.T) {
	t.Parallel()
	good := Result{Written: 10, Delivered: 10, Duplicates: 0, Kills: 2, DuplicateBound: 4, PoisonInjected: 2, FailedPoison: 2, DLQ: 1,
		Target: "sns-fifo-ordered", FIFO: true, Ordered: true}
	if err := good.Check(); err != nil {
		t.Errorf("a clean ordered run fails: %v", err)
	}
	// The fields of every run, in their order, then the order's.
	if got, want := good.Line(), "chaos: target=sns-fifo-ordered written=10 delivered=10 lost=0 duplicates=0 dup_pct=0.00 kills=2 stranded=0 failed_poison=2 dlq=1 drain_s=0.0 inversions=0 gaps=0"; got != want {
		t.Errorf("line = %q, want %q", got, want)
	}
	for _, c := range []struct {
		name string
		set  func(*Result)
		want string
	}{
		{"inversion", func(r *Result) { r.Inversions = 1 }, "1 events were first received after a later event"},
		{"gap", func(r *Result) { r.Gaps = 3 }, "3 sequences below their ordering key's highest"},
		{"unsequenced", func(r *Result) { r.Unsequenced = 2 }, "2 events were received without an ordering key"},
	} {
		bad := good
		c.set(&bad)
		if err := bad.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: check = %v, want %q", c.name, err, c.want)
		}
		// A run that is not ordered does not count the order.
		bad.Ordered = false
		if err := bad.Check(); err != nil {
			t.Errorf("%s, unordered run: check = %v", c.name, err)
		}
		if strings.Contains(bad.Line(), "inversions=") {
			t.Errorf("%s, unordered run: line = %q", c.name, bad.Line())
		}
	}
}
