package provision

import (
	"context"
	"errors"
	"fmt"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/component"
)

// Change and Drift report what Read found different from the Spec (see
// awsops.Drift); Update repairs all of it in place.
type (
	Change = awsops.Change
	Drift  = awsops.Drift
)

// Read observes every component recorded in st and compares it with s. It
// returns the observed State, in which missing components are cleared (so
// that Update recreates them), and the Drift. RelayPackageSHA256 is the code
// that the relay function actually runs. When nothing recorded exists any
// more, Read returns ErrNotFound.
func (c *Provisioner) Read(ctx context.Context, s Spec, st State) (State, Drift, error) {
	var d Drift
	if !st.Exists() {
		return st, d, ErrNotFound
	}
	s = s.WithDefaults()
	if err := component.Read(ctx, components, c, &pass{s: s, st: &st, d: &d}); err != nil {
		return st, d, err
	}
	if s.Reconciler.Disabled && (st.ReconcilerFunctionName != "" || st.ScheduleName != "") {
		d.AddChanged(ComponentReconcilerFunction, "disabled")
	}
	if !st.Exists() {
		return st, d, ErrNotFound
	}
	return st, d, nil
}

// readRecorded reads the component recorded as id, if any, with get: a
// missing one (a NotFoundError) is recorded in the drift and cleared from
// the State (forget), so that Update recreates it; the fields of one that
// exists are compared by diff.
func readRecorded[T any](p *pass, component, what, id string, get func() (T, error), forget func(), diff func(T) []string) error {
	if id == "" {
		return nil
	}
	have, err := get()
	if errors.Is(err, awsops.ErrNotFound) {
		p.d.AddMissing(component)
		forget()
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s (%s): %w", what, id, err)
	}
	p.d.AddChanged(component, diff(have)...)
	return nil
}

// changedIf is field when changed holds, else nothing: a diff of one field.
func changedIf(changed bool, field string) []string {
	if changed {
		return []string{field}
	}
	return nil
}
