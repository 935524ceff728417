package awsapi

import (
	"context"
	"sync"
	"time"
)

// CloseGrace is how long Background.Close waits for work in flight.
const CloseGrace = 5 * time.Second

// Background is the work a service does beside its requests (deliveries to
// targets): each piece started with Go, all of it stopped by Close, which
// cancels Context and waits up to CloseGrace for the pieces to return. A
// service's Lifecycle holds it.
type Background struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewBackground returns a Background whose context is live until Close.
func NewBackground() *Background {
	ctx, cancel := context.WithCancel(context.Background())
	return &Background{ctx: ctx, cancel: cancel}
}

// Context is cancelled by Close.
func (b *Background) Context() context.Context { return b.ctx }

// Go runs fn in a goroutine that Close waits for.
func (b *Background) Go(fn func()) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		fn()
	}()
}

// Sleep waits for d, or until ctx is done; it reports whether d passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Close cancels the context and waits up to CloseGrace for the work in
// flight to return. It implements Closer.
func (b *Background) Close() error {
	b.cancel()
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(CloseGrace):
	}
	return nil
}

// Dependency resolves, at use time, a service another one calls: resolve
// is the stack's resolver (nil when the stack has none for it), name the
// service's name in errors, and fail makes the error the caller returns
// (ServiceUnavailable, InternalFailure).
func Dependency[T any](resolve func() (T, error), name string, fail func(format string, args ...any) *Error) (T, error) {
	var zero T
	if resolve == nil {
		return zero, fail("the %s service is not available", name)
	}
	t, err := resolve()
	if err != nil {
		return zero, fail("%s", err.Error())
	}
	return t, nil
}
