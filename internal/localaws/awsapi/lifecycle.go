package awsapi

import (
	"errors"
	"maps"
	"slices"
	"sync"
)

// Lifecycle is what the stack manages of a service beside its requests:
// the inventory of what it holds and the stopping of its work. A service
// embeds a *Lifecycle (from NewLifecycle), says in its constructor what it
// lists (Lists) and what stopping it takes (OnStop, OnCleanup), and so
// implements Inventory and Closer with no methods of its own.
//
// The embedded Background is the service's work beside the requests
// (deliveries, timers, runners): Go starts a piece, Context is cancelled
// when the service closes.
type Lifecycle struct {
	*Background

	lock    sync.Locker
	list    func(add func(string))
	stops   []func()
	cleanup []func() error
	once    sync.Once
	err     error
}

var _ interface {
	Inventory
	Closer
} = (*Lifecycle)(nil)

// NewLifecycle returns a Lifecycle with a live Background, listing nothing.
func NewLifecycle() *Lifecycle { return &Lifecycle{Background: NewBackground()} }

// Lists sets what Inventory lists: list is called with lock held (nil: no
// lock) and adds the ARN or name of each resource the service holds.
func (l *Lifecycle) Lists(lock sync.Locker, list func(add func(string))) {
	l.lock, l.list = lock, list
}

// OnStop adds work Close does once the Background's context is cancelled
// and before it waits for the Background: stopping runners, pollers and
// processes, waking long polls. Stops run in the order they were added.
func (l *Lifecycle) OnStop(fn func()) { l.stops = append(l.stops, fn) }

// StopEach returns a stop for OnStop that marks the service closed and
// takes the values of held, both under lock, then stops each value outside
// the lock, so that a stop may wait for work that takes the lock.
func StopEach[K comparable, V any](lock sync.Locker, closed *bool, held map[K]V, stop func(V)) func() {
	return func() {
		lock.Lock()
		*closed = true
		values := slices.Collect(maps.Values(held))
		lock.Unlock()
		for _, v := range values {
			stop(v)
		}
	}
}

// OnCleanup adds work Close does after the Background's work has returned
// (removing files); its errors are Close's.
func (l *Lifecycle) OnCleanup(fn func() error) { l.cleanup = append(l.cleanup, fn) }

// Inventory implements the router's Inventory: what the service holds.
func (l *Lifecycle) Inventory() []string {
	if l.list == nil {
		return nil
	}
	if l.lock != nil {
		l.lock.Lock()
		defer l.lock.Unlock()
	}
	var out []string
	l.list(func(item string) { out = append(out, item) })
	return out
}

// Close stops the service, once: it cancels the Background's context, runs
// the stops, waits up to CloseGrace for the Background's work and runs the
// cleanups. It implements Closer; later calls return the first one's error.
func (l *Lifecycle) Close() error {
	l.once.Do(func() {
		l.cancel()
		for _, stop := range l.stops {
			stop()
		}
		_ = l.Background.Close()
		errs := make([]error, 0, len(l.cleanup))
		for _, fn := range l.cleanup {
			errs = append(errs, fn())
		}
		l.err = errors.Join(errs...)
	})
	return l.err
}
