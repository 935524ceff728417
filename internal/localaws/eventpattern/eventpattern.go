// Package eventpattern matches JSON events against EventBridge event
// patterns, the syntax EventBridge rules, Pipes and Lambda filter criteria
// share.
//
// Supported: exact values (strings, numbers, booleans, null), prefix and
// suffix (optionally with equals-ignore-case), anything-but (a value, a list
// of values, prefix, suffix, equals-ignore-case, wildcard), exists, numeric
// ranges, equals-ignore-case, wildcard, cidr, nested keys, arrays in events
// (an array matches when any element matches) and $or.
//
// A pattern is a JSON object. A key whose value is an object descends into
// the event; a key whose value is an array lists the alternatives for the
// event's value at that key. Every key must match (AND); any alternative may
// (OR). A missing key matches only {"exists": false}.
package eventpattern

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"strings"
)

// Error is an invalid pattern. Its message is the one EventBridge returns in
// InvalidEventPatternException.
type Error struct {
	Reason string
}

func (e *Error) Error() string { return "Event pattern is not valid. Reason: " + e.Reason }

func invalid(format string, args ...any) *Error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

// Pattern is a compiled event pattern. It is safe for concurrent use.
type Pattern struct {
	root *node
}

// node is an object of a pattern: fields to match and $or alternatives.
type node struct {
	fields []field
	ors    [][]*node // each $or: any of its nodes must match
}

type field struct {
	key   string
	child *node     // nested object
	leaf  []matcher // alternatives
}

type kind int

const (
	kExact kind = iota
	kPrefix
	kSuffix
	kEqualsIgnoreCase
	kWildcard
	kExists
	kNumeric
	kAnythingBut
	kCIDR
)

type matcher struct {
	kind       kind
	value      any // exact: string, float64, bool or nil
	str        string
	ignoreCase bool
	exists     bool
	ranges     []numCond
	not        []matcher // anything-but alternatives
	prefix     netip.Prefix
}

type numCond struct {
	op string
	v  float64
}

// Compile parses a pattern. An invalid pattern gives an *Error.
func Compile(patternJSON string) (*Pattern, error) {
	dec := json.NewDecoder(strings.NewReader(patternJSON))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, invalid("Filter is not valid JSON: %v", err)
	}
	if dec.More() {
		return nil, invalid("Unexpected content after the pattern")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, invalid("Filter is not an object")
	}
	n, err := compileNode(obj, "")
	if err != nil {
		return nil, err
	}
	return &Pattern{root: n}, nil
}

// MustCompile is Compile that panics on an invalid pattern.
func MustCompile(patternJSON string) *Pattern {
	p, err := Compile(patternJSON)
	if err != nil {
		panic(err)
	}
	return p
}

func compileNode(obj map[string]any, path string) (*node, error) {
	n := &node{}
	for key, v := range obj {
		p := key
		if path != "" {
			p = path + "." + key
		}
		if key == "$or" {
			arr, ok := v.([]any)
			if !ok || len(arr) < 2 {
				return nil, invalid("Value of $or at %q must be an array of at least 2 objects", p)
			}
			var alts []*node
			for _, a := range arr {
				o, ok := a.(map[string]any)
				if !ok {
					return nil, invalid("Value of $or at %q must be an array of objects", p)
				}
				c, err := compileNode(o, path)
				if err != nil {
					return nil, err
				}
				alts = append(alts, c)
			}
			n.ors = append(n.ors, alts)
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			c, err := compileNode(x, p)
			if err != nil {
				return nil, err
			}
			n.fields = append(n.fields, field{key: key, child: c})
		case []any:
			var ms []matcher
			for _, e := range x {
				m, err := compileMatcher(e, p)
				if err != nil {
					return nil, err
				}
				ms = append(ms, m)
			}
			n.fields = append(n.fields, field{key: key, leaf: ms})
		default:
			return nil, invalid("Match value must be String, number, true, false, or null at %q", p)
		}
	}
	return n, nil
}

func literal(v any) (any, bool) {
	switch x := v.(type) {
	case nil:
		return nil, true
	case string, bool:
		return x, true
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil, false
		}
		return f, true
	}
	return nil, false
}

func compileMatcher(v any, path string) (matcher, error) {
	if lit, ok := literal(v); ok {
		return matcher{kind: kExact, value: lit}, nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return matcher{}, invalid("Match value must be String, number, true, false, or null at %q", path)
	}
	if len(obj) != 1 {
		return matcher{}, invalid("Only one key allowed in match expression at %q", path)
	}
	for op, arg := range obj {
		switch op {
		case "prefix", "suffix":
			k := kPrefix
			if op == "suffix" {
				k = kSuffix
			}
			if s, ok := arg.(string); ok {
				return matcher{kind: k, str: s}, nil
			}
			if o, ok := arg.(map[string]any); ok && len(o) == 1 {
				if s, ok := o["equals-ignore-case"].(string); ok {
					return matcher{kind: k, str: strings.ToLower(s), ignoreCase: true}, nil
				}
			}
			return matcher{}, invalid("%s match pattern must be a string at %q", op, path)
		case "equals-ignore-case":
			s, ok := arg.(string)
			if !ok {
				return matcher{}, invalid("equals-ignore-case match pattern must be a string at %q", path)
			}
			return matcher{kind: kEqualsIgnoreCase, str: strings.ToLower(s)}, nil
		case "wildcard":
			s, ok := arg.(string)
			if !ok {
				return matcher{}, invalid("wildcard match pattern must be a string at %q", path)
			}
			if strings.Contains(s, "**") {
				return matcher{}, invalid("Consecutive wildcard characters at %q", path)
			}
			return matcher{kind: kWildcard, str: s}, nil
		case "exists":
			b, ok := arg.(bool)
			if !ok {
				return matcher{}, invalid("exists match pattern must be either true or false at %q", path)
			}
			return matcher{kind: kExists, exists: b}, nil
		case "cidr":
			s, ok := arg.(string)
			if !ok {
				return matcher{}, invalid("prefix match pattern must be a string at %q", path)
			}
			pfx, err := netip.ParsePrefix(s)
			if err != nil {
				return matcher{}, invalid("Malformed CIDR, one '/' required at %q", path)
			}
			return matcher{kind: kCIDR, prefix: pfx.Masked()}, nil
		case "numeric":
			return compileNumeric(arg, path)
		case "anything-but":
			return compileAnythingBut(arg, path)
		default:
			return matcher{}, invalid("Unrecognized match type %s at %q", op, path)
		}
	}
	panic("unreachable")
}

func compileNumeric(arg any, path string) (matcher, error) {
	arr, ok := arg.([]any)
	if !ok || len(arr) == 0 || len(arr)%2 != 0 || len(arr) > 4 {
		return matcher{}, invalid("Value of numeric must be an array of comparisons at %q", path)
	}
	m := matcher{kind: kNumeric}
	for i := 0; i < len(arr); i += 2 {
		op, ok := arr[i].(string)
		if !ok {
			return matcher{}, invalid("Invalid member in numeric match: %v at %q", arr[i], path)
		}
		switch op {
		case "=", "<", "<=", ">", ">=":
		default:
			return matcher{}, invalid("Unrecognized numeric range operator: %s at %q", op, path)
		}
		num, ok := arr[i+1].(json.Number)
		if !ok {
			return matcher{}, invalid("Value of %s must be numeric at %q", op, path)
		}
		f, err := num.Float64()
		if err != nil {
			return matcher{}, invalid("Value of %s must be numeric at %q", op, path)
		}
		if op == "=" && len(arr) > 2 {
			return matcher{}, invalid("Numeric \"=\" cannot be combined with other comparisons at %q", path)
		}
		m.ranges = append(m.ranges, numCond{op: op, v: f})
	}
	if len(m.ranges) == 2 {
		lo, hi := m.ranges[0], m.ranges[1]
		if !isLower(lo.op) || !isUpper(hi.op) {
			return matcher{}, invalid("Bad numeric range: a lower bound (> or >=) must be followed by an upper bound (< or <=) at %q", path)
		}
		if lo.v >= hi.v {
			return matcher{}, invalid("Bottom must be less than top at %q", path)
		}
	}
	return m, nil
}

func isLower(op string) bool { return op == ">" || op == ">=" }
func isUpper(op string) bool { return op == "<" || op == "<=" }

func compileAnythingBut(arg any, path string) (matcher, error) {
	m := matcher{kind: kAnythingBut}
	if lit, ok := literal(arg); ok {
		if lit == nil {
			return matcher{}, invalid("Inside anything but list, null is not supported at %q", path)
		}
		if _, isBool := lit.(bool); isBool {
			return matcher{}, invalid("Inside anything but list, true/false are not supported at %q", path)
		}
		m.not = []matcher{{kind: kExact, value: lit}}
		return m, nil
	}
	switch x := arg.(type) {
	case []any:
		if len(x) == 0 {
			return matcher{}, invalid("Inside anything but list, empty list is not supported at %q", path)
		}
		for _, e := range x {
			lit, ok := literal(e)
			if !ok || lit == nil {
				return matcher{}, invalid("Inside anything but list, start|null|boolean is not supported at %q", path)
			}
			if _, isBool := lit.(bool); isBool {
				return matcher{}, invalid("Inside anything but list, start|null|boolean is not supported at %q", path)
			}
			m.not = append(m.not, matcher{kind: kExact, value: lit})
		}
		return m, nil
	case map[string]any:
		if len(x) != 1 {
			return matcher{}, invalid("Only one key allowed in anything-but expression at %q", path)
		}
		for op, v := range x {
			switch op {
			case "prefix", "suffix", "equals-ignore-case", "wildcard":
				vals, isList := v.([]any)
				if !isList {
					vals = []any{v}
				}
				for _, e := range vals {
					inner, err := compileMatcher(map[string]any{op: e}, path)
					if err != nil {
						return matcher{}, err
					}
					m.not = append(m.not, inner)
				}
				return m, nil
			default:
				return matcher{}, invalid("Unsupported anything-but pattern: %s at %q", op, path)
			}
		}
	}
	return matcher{}, invalid("Value of anything-but must be an array or single string/number value at %q", path)
}

// Matches reports whether the event (a JSON object) matches the pattern. A
// malformed event matches nothing.
func (p *Pattern) Matches(eventJSON []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(eventJSON))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return false
	}
	return p.MatchesValue(v)
}

// MatchesValue is Matches for an event already decoded with encoding/json
// (numbers as float64 or json.Number).
func (p *Pattern) MatchesValue(event any) bool {
	obj, ok := event.(map[string]any)
	if !ok {
		return false
	}
	return matchNode(p.root, obj)
}

func matchNode(n *node, obj map[string]any) bool {
	for _, f := range n.fields {
		v, present := lookup(obj, f.key)
		if f.child != nil {
			if !matchChild(f.child, v, present) {
				return false
			}
			continue
		}
		if !matchLeaf(f.leaf, v, present) {
			return false
		}
	}
	for _, alts := range n.ors {
		matched := false
		for _, a := range alts {
			if matchNode(a, obj) {
				matched = true
				break
			}
		}
		if !matched {
			return false
		}
	}
	return true
}

func lookup(obj map[string]any, key string) (any, bool) {
	if obj == nil {
		return nil, false
	}
	v, ok := obj[key]
	return v, ok
}

// matchChild matches a nested pattern object against an event value: an
// object, or an array of objects (any element). A missing value is matched
// as an empty object, so nested {"exists": false} works.
func matchChild(n *node, v any, present bool) bool {
	if !present {
		return matchNode(n, nil)
	}
	switch x := v.(type) {
	case map[string]any:
		return matchNode(n, x)
	case []any:
		for _, e := range x {
			if o, ok := e.(map[string]any); ok && matchNode(n, o) {
				return true
			}
		}
		return false
	}
	return matchNode(n, nil)
}

func matchLeaf(ms []matcher, v any, present bool) bool {
	for _, m := range ms {
		if m.kind == kExists {
			if m.exists == (present && isLeafPresent(v)) {
				return true
			}
			continue
		}
		if !present {
			continue
		}
		if arr, ok := v.([]any); ok {
			for _, e := range arr {
				if matchValue(m, e) {
					return true
				}
			}
			continue
		}
		if matchValue(m, v) {
			return true
		}
	}
	return false
}

// isLeafPresent: exists matches leaf values only, and an empty array counts
// as absent.
func isLeafPresent(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return false
	case []any:
		return len(x) > 0
	}
	return true
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func matchValue(m matcher, v any) bool {
	switch m.kind {
	case kExact:
		return matchExact(m.value, v)
	case kPrefix, kSuffix, kEqualsIgnoreCase, kWildcard:
		s, ok := v.(string)
		return ok && matchString(m, s)
	case kNumeric:
		return matchNumeric(m.ranges, v)
	case kAnythingBut:
		// Only values of the type of the excluded ones can match: an
		// anything-but on strings matches strings only.
		for _, n := range m.not {
			if !sameType(n, v) {
				return false
			}
			if matchValue(n, v) {
				return false
			}
		}
		return true
	case kCIDR:
		s, ok := v.(string)
		if !ok {
			return false
		}
		a, err := netip.ParseAddr(s)
		return err == nil && m.prefix.Contains(a)
	}
	return false
}

// matchExact matches v against an exact value: null, a string, a boolean
// or a number (compared as numbers).
func matchExact(want, v any) bool {
	switch want := want.(type) {
	case nil:
		return v == nil
	case string:
		s, ok := v.(string)
		return ok && s == want
	case bool:
		b, ok := v.(bool)
		return ok && b == want
	case float64:
		f, ok := number(v)
		return ok && f == want
	}
	return false
}

// matchString applies a prefix, suffix, equals-ignore-case or wildcard
// matcher to the string s.
func matchString(m matcher, s string) bool {
	if m.ignoreCase || m.kind == kEqualsIgnoreCase {
		s = strings.ToLower(s)
	}
	switch m.kind {
	case kPrefix:
		return strings.HasPrefix(s, m.str)
	case kSuffix:
		return strings.HasSuffix(s, m.str)
	case kEqualsIgnoreCase:
		return s == m.str
	default:
		return wildcard(m.str, s)
	}
}

// matchNumeric holds when v is a number within every range.
func matchNumeric(ranges []numCond, v any) bool {
	f, ok := number(v)
	if !ok || math.IsNaN(f) {
		return false
	}
	for _, c := range ranges {
		var hold bool
		switch c.op {
		case "=":
			hold = f == c.v
		case "<":
			hold = f < c.v
		case "<=":
			hold = f <= c.v
		case ">":
			hold = f > c.v
		case ">=":
			hold = f >= c.v
		}
		if !hold {
			return false
		}
	}
	return true
}

func sameType(m matcher, v any) bool {
	if m.kind != kExact {
		_, ok := v.(string)
		return ok
	}
	switch m.value.(type) {
	case string:
		_, ok := v.(string)
		return ok
	case float64:
		_, ok := number(v)
		return ok
	}
	return true
}

// wildcard matches s against a glob where * matches any run of characters.
func wildcard(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, last)
}
