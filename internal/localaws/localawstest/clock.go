package localawstest

import (
	"sync/atomic"
	"time"
)

// Clock is a stack clock that moves only when the test advances it, so
// that a retention, a lifetime or a lifecycle rule's day passes exactly
// where the test says, however slowly the calls around it run. Set it as
// the stack environment's Now.
type Clock struct{ ns atomic.Int64 }

// NewClock returns a Clock stopped at t.
func NewClock(t time.Time) *Clock {
	c := &Clock{}
	c.ns.Store(t.UnixNano())
	return c
}

// Now is the clock's time, in UTC.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// Set moves the clock to t, which may be before its time.
func (c *Clock) Set(t time.Time) { c.ns.Store(t.UnixNano()) }
