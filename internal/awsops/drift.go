package awsops

import (
	"fmt"
	"slices"
	"strings"
)

// Change is a component whose settings differ from the Spec.
type Change struct {
	Component string
	// Fields that differ, in the component's own terms.
	Fields []string
}

// Drift is what Read found different from the Spec. Update repairs all of
// it in place: it recreates missing components and resets changed ones.
type Drift struct {
	// Missing components, deleted out of band.
	Missing []string
	// Changed components.
	Changed []Change
}

// None reports whether the components match their Spec.
func (d Drift) None() bool { return len(d.Missing) == 0 && len(d.Changed) == 0 }

// Components returns the missing and changed components.
func (d Drift) Components() []string {
	out := slices.Clone(d.Missing)
	for _, c := range d.Changed {
		out = append(out, c.Component)
	}
	return out
}

func (d Drift) String() string {
	var parts []string
	for _, m := range d.Missing {
		parts = append(parts, m+" is missing")
	}
	for _, c := range d.Changed {
		parts = append(parts, fmt.Sprintf("%s changed (%s)", c.Component, strings.Join(c.Fields, ", ")))
	}
	if len(parts) == 0 {
		return "no drift"
	}
	return strings.Join(parts, "; ")
}

// AddMissing records component as missing, once.
func (d *Drift) AddMissing(component string) {
	if !slices.Contains(d.Missing, component) {
		d.Missing = append(d.Missing, component)
	}
}

// AddChanged records that fields of component changed, if there are any.
func (d *Drift) AddChanged(component string, fields ...string) {
	if len(fields) > 0 {
		d.Changed = append(d.Changed, Change{Component: component, Fields: fields})
	}
}

// Fields collects the names of the settings that a comparison found
// changed, in the order compared.
type Fields []string

// Add appends field when changed.
func (f *Fields) Add(changed bool, field string) {
	if changed {
		*f = append(*f, field)
	}
}
