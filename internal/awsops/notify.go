package awsops

import "context"

// Notifier receives the reason of a long wait, for the caller's log (the
// provider logs it at INFO with tflog): msg says what is awaited and why.
type Notifier func(ctx context.Context, msg string)

type notifierKey struct{}

// WithNotifier returns ctx carrying n.
func WithNotifier(ctx context.Context, n Notifier) context.Context {
	return context.WithValue(ctx, notifierKey{}, n)
}

// Notify passes msg to the Notifier of ctx, if any.
func Notify(ctx context.Context, msg string) {
	if n, ok := ctx.Value(notifierKey{}).(Notifier); ok && n != nil {
		n(ctx, msg)
	}
}
