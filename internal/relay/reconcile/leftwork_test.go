package reconcile

import "testing"

func TestLeftWork(t *testing.T) {
	t.Parallel()
	swept := &sweeper{leased: true, res: sweepResult{complete: true}}
	unswept := &sweeper{leased: true}
	released := &sweeper{leased: false}
	for _, c := range []struct {
		name   string
		held   []*sweeper
		report Report
		want   bool
	}{
		{"every shard swept, nothing waits", []*sweeper{swept, released}, Report{}, false},
		{"a leased shard not swept to its end", []*sweeper{swept, unswept}, Report{}, true},
		{"a shard released to a worker is the worker's", []*sweeper{swept, released}, Report{}, false},
		{"ordered events wait for events that are not FAILED", []*sweeper{swept}, Report{Waiting: 40, Blocked: 3}, true},
		{"every waiting event is behind a FAILED one", []*sweeper{swept}, Report{Waiting: 3, Blocked: 3}, false},
	} {
		if got := leftWork(c.held, &c.report); got != c.want {
			t.Errorf("%s: leftWork = %v, want %v", c.name, got, c.want)
		}
	}
}
