// Package component runs the components of a provisioned resource (an
// outbox pipeline, an outbox subscription) in their order. Each resource
// keeps a table of its components; the functions here walk the table:
// Ensure in the table's order, Remove in the reverse order, Read and Lookup
// in the table's order, so that a step finds in the state what the steps
// before it recorded.
package component

import (
	"context"
	"slices"
)

// Pass is what the steps of one Apply, Read or Lookup share: the state
// they record to and the drift that Read records.
type Pass[S any] interface {
	// State is the state that the steps record to.
	State() *S
	// Missing records that the named component is missing.
	Missing(component string)
}

// Component is one part of a resource. C is the client that the steps use,
// P the pass and S the state. A nil step does nothing.
type Component[C any, P Pass[S], S any] struct {
	// Name is the component in a drift and in an Error; "" for a step that
	// records settings rather than a resource.
	Name string
	// Wanted reports whether the pass asks for the component; nil means
	// always. Ensure removes a component that is not wanted.
	Wanted func(P) bool
	// Required is true when Read reports the component missing while the
	// state does not record it (a create that stopped before it).
	Required bool
	// Recorded reports whether the state records the component.
	Recorded func(S) bool

	// The steps take the client first, so that its methods serve as steps.
	Ensure func(C, context.Context, P) error
	Read   func(C, context.Context, P) error
	Remove func(C, context.Context, *S) error
	Lookup func(C, context.Context, P) error
}

func (k Component[C, P, S]) wanted(p P) bool { return k.Wanted == nil || k.Wanted(p) }

// Error is the error of one component's step. Its text is the step's own
// (which names the resource); Component and Step say where it arose.
type Error struct {
	Component string
	Step      string // "ensure", "read", "remove" or "lookup"
	Err       error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

func wrap(component, step string, err error) error {
	if err == nil || component == "" {
		return err
	}
	return &Error{Component: component, Step: step, Err: err}
}

// Ensure creates or updates the components that p wants, then removes, in
// the reverse order, those it does not want.
func Ensure[C any, P Pass[S], S any](ctx context.Context, t []Component[C, P, S], c C, p P) error {
	for _, k := range t {
		if k.Ensure != nil && k.wanted(p) {
			if err := k.Ensure(c, ctx, p); err != nil {
				return wrap(k.Name, "ensure", err)
			}
		}
	}
	for _, k := range slices.Backward(t) {
		if k.Remove != nil && !k.wanted(p) {
			if err := k.Remove(c, ctx, p.State()); err != nil {
				return wrap(k.Name, "remove", err)
			}
		}
	}
	return nil
}

// Read observes the components, each clearing in the state what no longer
// exists and recording its drift; a required component that p wants and
// the state does not record is reported missing.
func Read[C any, P Pass[S], S any](ctx context.Context, t []Component[C, P, S], c C, p P) error {
	for _, k := range t {
		if k.Read == nil {
			continue
		}
		if err := k.Read(c, ctx, p); err != nil {
			return wrap(k.Name, "read", err)
		}
		if k.Required && k.wanted(p) && !k.Recorded(*p.State()) {
			p.Missing(k.Name)
		}
	}
	return nil
}

// Remove removes every component in the reverse order, each clearing
// itself in st once it is gone.
func Remove[C any, P Pass[S], S any](ctx context.Context, t []Component[C, P, S], c C, st *S) error {
	for _, k := range slices.Backward(t) {
		if k.Remove != nil {
			if err := k.Remove(c, ctx, st); err != nil {
				return wrap(k.Name, "remove", err)
			}
		}
	}
	return nil
}

// Lookup finds the components that p, as found so far, wants.
func Lookup[C any, P Pass[S], S any](ctx context.Context, t []Component[C, P, S], c C, p P) error {
	for _, k := range t {
		if k.Lookup != nil && k.wanted(p) {
			if err := k.Lookup(c, ctx, p); err != nil {
				return wrap(k.Name, "lookup", err)
			}
		}
	}
	return nil
}

// Recorded reports whether st records any of the components.
func Recorded[C any, P Pass[S], S any](t []Component[C, P, S], st S) bool {
	return slices.ContainsFunc(t, func(k Component[C, P, S]) bool { return k.Recorded != nil && k.Recorded(st) })
}
