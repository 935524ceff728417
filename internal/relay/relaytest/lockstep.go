package relaytest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Wave is a round trip of calls: Calls calls of Op, all in flight at once.
type Wave struct {
	Op    string
	Calls int
}

func (w Wave) String() string { return fmt.Sprintf("%d×%s", w.Calls, w.Op) }

// lockstep holds calls until a whole expected wave of them is in flight and
// then releases them together, so that the waves a caller makes are counted
// by what it does, not by when its goroutines happen to run.
type lockstep struct {
	want    []Wave
	timeout time.Duration

	mu   sync.Mutex
	next int    // index in want of the wave to fill
	open *gate  // the wave being filled, nil between waves
	got  []Wave // the waves released, and unexpected calls as waves of 1
}

// gate is a wave being filled.
type gate struct {
	op      string
	calls   int
	release chan struct{}
	timer   *time.Timer
}

// Lockstep makes the fake hold every call until the whole wave it belongs
// to is in flight: waves[0] first, then waves[1], and so on. A wave that
// does not fill within timeout (its calls came in more sequential round
// trips than expected) is released as it is. A call that fits no expected
// wave (another operation, or past the last wave) is not held and counts as
// a wave of its own. Waves reports what happened. Call it before the calls.
func (f *AWS) Lockstep(waves []Wave, timeout time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lockstep = &lockstep{want: slices.Clone(waves), timeout: timeout}
}

// Waves returns the waves of calls released so far under Lockstep: equal to
// the waves given to it when the calls came in exactly those round trips.
func (f *AWS) Waves() []Wave {
	f.mu.Lock()
	l := f.lockstep
	f.mu.Unlock()
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.got)
}

// wait holds a call of op until its wave is released or ctx is done.
func (l *lockstep) wait(ctx context.Context, op string) error {
	l.mu.Lock()
	if l.open == nil && l.next < len(l.want) && l.want[l.next].Op == op {
		g := &gate{op: op, release: make(chan struct{})}
		g.timer = time.AfterFunc(l.timeout, func() { l.flush(g) })
		l.open = g
	}
	g := l.open
	if g == nil || g.op != op {
		l.got = append(l.got, Wave{Op: op, Calls: 1})
		l.mu.Unlock()
		return nil
	}
	g.calls++
	if g.calls == l.want[l.next].Calls {
		l.releaseLocked(g)
	}
	l.mu.Unlock()
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// flush releases g as it is, if it is still being filled.
func (l *lockstep) flush(g *gate) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open == g {
		l.releaseLocked(g)
	}
}

func (l *lockstep) releaseLocked(g *gate) {
	g.timer.Stop()
	close(g.release)
	l.got = append(l.got, Wave{Op: g.op, Calls: g.calls})
	l.open = nil
	l.next++
}
