package component

import (
	"context"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// Spec is the description of a resource that Create and Update bring
// about. S is the description's own type and St the resource's state.
type Spec[S, St any] interface {
	// Validate reports what is wrong with the description.
	Validate() error
	// WithDefaults returns the description with its defaults filled in.
	WithDefaults() S
	// CheckInPlace returns an error when the resource recorded in st
	// cannot be brought to the description in place (a new name, say):
	// the description replaces it. An empty st records nothing.
	CheckInPlace(st St) error
}

// Apply brings the components recorded in a state to a description that
// is valid, has its defaults and can be applied in place, recording each
// component in the state as soon as it exists.
type Apply[S, St any] func(ctx context.Context, s S, st *St) error

// Create builds the resource described by s with apply. If a step fails,
// it removes what apply built with del, as awsops.Create describes.
func Create[S Spec[S, St], St any](ctx context.Context, cleanup time.Duration, s S, apply Apply[S, St], del func(context.Context, St) (St, error)) (St, error) {
	return awsops.Create(ctx, cleanup, func(ctx context.Context, st *St) error {
		return prepare(ctx, s, st, apply)
	}, del)
}

// Update brings the resource recorded in st to s in place with apply. It
// returns the new state even on error, so that the caller records partial
// progress.
func Update[S Spec[S, St], St any](ctx context.Context, s S, st St, apply Apply[S, St]) (St, error) {
	err := prepare(ctx, s, &st, apply)
	return st, err
}

// prepare validates s, fills in its defaults and checks that it applies
// to st in place before it runs apply.
func prepare[S Spec[S, St], St any](ctx context.Context, s S, st *St, apply Apply[S, St]) error {
	if err := s.Validate(); err != nil {
		return err
	}
	s = s.WithDefaults()
	if err := s.CheckInPlace(*st); err != nil {
		return err
	}
	return apply(ctx, s, st)
}
