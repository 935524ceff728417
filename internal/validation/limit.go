package validation

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Limit is the values a setting allows, written once: the check of its
// owner's Spec, a caller's own check of a configured value (Terraform's
// attribute validator) and the setting's documentation all come from it,
// so that they cannot disagree.
type Limit interface {
	// Check returns what is wrong with v and the fix, or "" when v is
	// allowed. v is an int64 for a Range or Values, a string for a
	// Choice; another type is wrong.
	Check(v any) (problem, fix string)
	// Describe is the allowed values in documentation ("1 to 10000
	// seconds", "`arm64` or `x86_64`").
	Describe() string
}

// Check reports field as invalid when v is outside l.
func (s Subject) Check(field string, l Limit, v any) error {
	if problem, fix := l.Check(v); problem != "" {
		return s.Invalid(field, fix, "%s", problem)
	}
	return nil
}

// Range is the whole numbers Min to Max, or Min or more when Max is
// NoMax; Or is a value allowed besides (-1 for no limit).
type Range struct {
	Min, Max int64
	// Unit follows the numbers ("seconds").
	Unit string
	// MinMeans says what Min means, when it is special ("retry until the
	// record expires").
	MinMeans string
	// Or is one more value allowed outside the range.
	Or *Special
	// Hint follows the fix, with its punctuation (": a stream keeps
	// records 24 hours").
	Hint string
}

// NoMax as Range.Max leaves a range without an upper bound.
const NoMax = int64(^uint64(0) >> 1)

// Special is a value with a meaning of its own (-1: no limit).
type Special struct {
	Value int64
	Means string
}

// Describe reads "1 to 10000 seconds", "1 or more", "-1 (no limit) or 60 to
// 604800 seconds".
func (r Range) Describe() string {
	low := strconv.FormatInt(r.Min, 10)
	if r.MinMeans != "" {
		low += " (" + r.MinMeans + ")"
	}
	out := low + " or more"
	if r.Max != NoMax {
		out = low + " to " + strconv.FormatInt(r.Max, 10)
	}
	if r.Unit != "" {
		out += " " + r.Unit
	}
	if r.Or != nil {
		out = fmt.Sprintf("%d (%s) or %s", r.Or.Value, r.Or.Means, out)
	}
	return out
}

// Check reports a number outside the range.
func (r Range) Check(v any) (problem, fix string) {
	n, ok := v.(int64)
	switch {
	case !ok:
		return fmt.Sprintf("is %v, not a whole number", v), "use " + r.Describe()
	case r.Or != nil && n == r.Or.Value, n >= r.Min && n <= r.Max:
		return "", ""
	}
	return fmt.Sprintf("is %d", n), "use " + r.Describe() + r.Hint
}

// Values is a set of whole numbers, in the order they are documented.
type Values []int64

// Describe reads "1, 3, 5 or 7".
func (l Values) Describe() string {
	words := make([]string, len(l))
	for i, v := range l {
		words[i] = strconv.FormatInt(v, 10)
	}
	return joinWords(words)
}

// Check reports a number that is not one of the values.
func (l Values) Check(v any) (problem, fix string) {
	if n, ok := v.(int64); ok && slices.Contains(l, n) {
		return "", ""
	}
	return fmt.Sprintf("is %v", v), "use one of " + l.Describe()
}

// Choice is a set of strings, in the order they are documented.
type Choice []string

// Describe reads "`a`, `b` or `c`".
func (c Choice) Describe() string { return c.words("`%s`") }

func (c Choice) words(format string) string {
	words := make([]string, len(c))
	for i, v := range c {
		words[i] = fmt.Sprintf(format, v)
	}
	return joinWords(words)
}

// Check reports a string that is not one of the choices.
func (c Choice) Check(v any) (problem, fix string) {
	if s, ok := v.(string); ok && slices.Contains(c, s) {
		return "", ""
	}
	return fmt.Sprintf("is %q", fmt.Sprint(v)), "use " + c.words("%q")
}

// joinWords joins words as "a, b or c".
func joinWords(w []string) string {
	if len(w) < 2 {
		return strings.Join(w, "")
	}
	return strings.Join(w[:len(w)-1], ", ") + " or " + w[len(w)-1]
}

// Rule is a Limit of strings that a function checks (a grammar).
type Rule struct {
	// Text is its Describe.
	Text string
	// Func returns what is wrong with a string and the fix, or "".
	Func func(string) (problem, fix string)
}

// Describe is r.Text.
func (r Rule) Describe() string { return r.Text }

// Check runs r.Func on a string.
func (r Rule) Check(v any) (problem, fix string) {
	s, ok := v.(string)
	if !ok {
		return fmt.Sprintf("is %v, not a string", v), "use " + r.Text
	}
	return r.Func(s)
}
