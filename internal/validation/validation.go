// Package validation holds the one error type of invalid settings: a
// pipeline's or a subscription's Spec, or the relay's environment. It names
// the field at fault, what is wrong with it and how to fix it, so that a
// caller can point at the field (Terraform at its attribute path) and a
// person reads the fix. It imports no framework.
package validation

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Error reports one invalid setting.
type Error struct {
	// Subject is what the setting belongs to ("outbox pipeline",
	// "relay configuration"); it opens the message.
	Subject string
	// Field is the path of the setting, as its owner names it: a Go field
	// path ("Mapping.BatchSize") or an environment variable.
	Field string
	// Related lists the other fields the check compared Field with
	// ("Reconciler.Function.Timeout"): a caller that knows some values
	// only later (Terraform at plan time) skips the check until they are
	// known.
	Related []string
	// Value is the setting's text, shown when not empty; settings whose
	// Problem quotes the value leave it empty.
	Value string
	// Problem says what is wrong ("is 0").
	Problem string
	// Fix says what to do ("use 1 to 10000").
	Fix string
}

// Error reads "<subject> <field>[=<value>] <problem>: <fix>".
func (e *Error) Error() string {
	field := e.Field
	if e.Value != "" {
		field += "=" + strconv.Quote(e.Value)
	}
	return fmt.Sprintf("%s %s %s: %s", e.Subject, field, e.Problem, e.Fix)
}

// Subject makes the errors of one kind of settings.
type Subject string

// Invalid reports field as invalid: the problem is formatted with args.
func (s Subject) Invalid(field, fix, problem string, args ...any) error {
	return &Error{Subject: string(s), Field: field, Problem: fmt.Sprintf(problem, args...), Fix: fix}
}

// InvalidAgainst reports field as invalid for what the related fields hold.
func (s Subject) InvalidAgainst(field string, related []string, fix, problem string, args ...any) error {
	return &Error{Subject: string(s), Field: field, Related: related, Problem: fmt.Sprintf(problem, args...), Fix: fix}
}

// InvalidValue reports field as invalid with the value it holds.
func (s Subject) InvalidValue(field, value, problem, fix string) error {
	return &Error{Subject: string(s), Field: field, Value: value, Problem: problem, Fix: fix}
}

// Tags checks the AWS resource tags of field: keys of 1 to 128 characters
// without the "aws:" prefix that AWS reserves, values of at most 256. It
// reports the first offending key in sorted order.
func (s Subject) Tags(field string, tags map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		switch v := tags[k]; {
		case k == "" || len(k) > 128:
			return s.Invalid(field, "use keys of 1 to 128 characters", "has the key %q", k)
		case strings.HasPrefix(strings.ToLower(k), "aws:"):
			return s.Invalid(field, `remove the key: the "aws:" prefix is reserved by AWS`, "has the key %q", k)
		case len(v) > 256:
			return s.Invalid(field, "use values of at most 256 characters", "has a value of %d characters for %q", len(v), k)
		}
	}
	return nil
}
