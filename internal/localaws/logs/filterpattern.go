package logs

import (
	"encoding/json"
	"fmt"
	"iter"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// Filter patterns, as CloudWatch Logs documents them ("Filter pattern
// syntax for metric filters, subscription filters, filter log events and
// Live Tail"). No maintained Go implementation exists (the open ones are in
// TypeScript, Python and Rust), so this is a small parser of the three
// forms:
//
//   - terms: `ERROR`, `"quoted phrase"`, `-term` (must not appear),
//     `?term` (one of the ?-terms suffices), all case-sensitive;
//   - JSON: `{ $.level = "INFO" && $.latency > 100 }` with `=`, `!=`,
//     `<`, `<=`, `>`, `>=`, `&&`, `||`, parentheses, `*` wildcards and
//     `%regex%` in values, `IS NULL`, `IS TRUE`, `IS FALSE`, `NOT EXISTS`
//     and `EXISTS`, and selectors such as `$.a.b[0]`;
//   - space-delimited: `[ip, user, ..., status_code = 4*, bytes > 1000]`,
//     whose fields are named by position, `...` standing for any number
//     of fields, each field optionally compared.

// matcher reports whether a log message matches.
type matcher func(msg string) bool

// compileFilter compiles a filter pattern. An empty pattern matches every
// event.
func compileFilter(pattern string) (matcher, *awsapi.Error) {
	pattern = strings.TrimSpace(pattern)
	var m matcher
	var err error
	switch {
	case pattern == "":
		return func(string) bool { return true }, nil
	case strings.HasPrefix(pattern, "{"):
		m, err = compileJSONPattern(pattern)
	case strings.HasPrefix(pattern, "["):
		m, err = compileDelimitedPattern(pattern)
	default:
		m, err = compileTerms(pattern)
	}
	if err != nil {
		return nil, invalidParameter("Invalid filter pattern %q: %v", pattern, err)
	}
	return m, nil
}

// compileTerms compiles a term pattern: terms separated by spaces must all
// appear; quoted phrases match exactly; ?-terms are alternatives (any one
// suffices); a -term must not appear.
func compileTerms(pattern string) (matcher, error) {
	var all, anyOf, none []string
	for pattern != "" {
		var tok string
		prefix := byte(0)
		if pattern[0] == '?' || pattern[0] == '-' {
			prefix, pattern = pattern[0], pattern[1:]
		}
		if strings.HasPrefix(pattern, `"`) {
			end := strings.Index(pattern[1:], `"`)
			if end < 0 {
				return nil, fmt.Errorf("unterminated quoted term %s", pattern)
			}
			tok, pattern = pattern[1:end+1], pattern[end+2:]
		} else {
			tok, pattern, _ = strings.Cut(pattern, " ")
		}
		pattern = strings.TrimSpace(pattern)
		if tok == "" {
			continue
		}
		switch prefix {
		case '?':
			anyOf = append(anyOf, tok)
		case '-':
			none = append(none, tok)
		default:
			all = append(all, tok)
		}
	}
	return func(msg string) bool {
		for _, t := range all {
			if !strings.Contains(msg, t) {
				return false
			}
		}
		for _, t := range none {
			if strings.Contains(msg, t) {
				return false
			}
		}
		if len(anyOf) == 0 {
			return true
		}
		for _, t := range anyOf {
			if strings.Contains(msg, t) {
				return true
			}
		}
		return false
	}, nil
}

// ---- values shared by JSON and space-delimited patterns ----

// literal is the right-hand side of a comparison.
type literal struct {
	text   string         // the text, unquoted
	number *float64       // set when the literal is a number
	glob   *regexp.Regexp // set when the text has * wildcards or is %regex%
	quoted bool
}

func parseLiteral(raw string) (literal, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return literal{}, fmt.Errorf("a comparison lacks its value")
	}
	if len(raw) >= 2 && raw[0] == '%' && raw[len(raw)-1] == '%' {
		re, err := regexp.Compile(raw[1 : len(raw)-1])
		if err != nil {
			return literal{}, fmt.Errorf("regular expression %s: %w", raw, err)
		}
		return literal{text: raw, glob: re}, nil
	}
	l := literal{text: raw}
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		l.text, l.quoted = raw[1:len(raw)-1], true
	} else if f, err := strconv.ParseFloat(raw, 64); err == nil {
		l.number = &f
	}
	if strings.Contains(l.text, "*") {
		parts := strings.Split(l.text, "*")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		l.glob = regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
	}
	return l, nil
}

// compare applies op to a value (a string, or a number when num is set)
// and the literal.
func (l literal) compare(op string, s string, num *float64) bool {
	if num != nil && l.number != nil {
		a, b := *num, *l.number
		switch op {
		case "=":
			return a == b
		case "!=":
			return a != b
		case "<":
			return a < b
		case "<=":
			return a <= b
		case ">":
			return a > b
		case ">=":
			return a >= b
		}
	}
	if op != "=" && op != "!=" {
		return false
	}
	eq := s == l.text
	if l.glob != nil {
		eq = l.glob.MatchString(s)
	}
	return eq == (op == "=")
}

var comparators = []string{"!=", "<=", ">=", "=", "<", ">"}

// splitComparison splits "left op right" at its first operator outside
// quotes and %regex%.
func splitComparison(s string) (left, op, right string, ok bool) {
	for i := range outside(s) {
		for _, o := range comparators {
			if strings.HasPrefix(s[i:], o) {
				return strings.TrimSpace(s[:i]), o, strings.TrimSpace(s[i+len(o):]), true
			}
		}
	}
	return s, "", "", false
}

// outside yields the positions in s outside double quotes and %regex%,
// their delimiters excluded.
func outside(s string) iter.Seq[int] {
	return func(yield func(int) bool) {
		inQuote, inRegex := false, false
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c == '"' && !inRegex:
				inQuote = !inQuote
			case c == '%' && !inQuote:
				inRegex = !inRegex
			case !inQuote && !inRegex:
				if !yield(i) {
					return
				}
			}
		}
	}
}

// ---- JSON patterns ----

type jsonNode func(doc any) bool

func compileJSONPattern(pattern string) (matcher, error) {
	if !strings.HasSuffix(pattern, "}") {
		return nil, fmt.Errorf("a JSON pattern ends with }")
	}
	p := &exprParser{src: strings.TrimSpace(pattern[1 : len(pattern)-1])}
	node, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if p.skipSpace(); p.pos != len(p.src) {
		return nil, fmt.Errorf("unexpected %q", p.src[p.pos:])
	}
	return func(msg string) bool {
		var doc any
		dec := json.NewDecoder(strings.NewReader(msg))
		dec.UseNumber()
		if dec.Decode(&doc) != nil {
			return false
		}
		if _, isObject := doc.(map[string]any); !isObject {
			return false
		}
		return node(doc)
	}, nil
}

type exprParser struct {
	src string
	pos int
}

func (p *exprParser) skipSpace() {
	for p.pos < len(p.src) && unicode.IsSpace(rune(p.src[p.pos])) {
		p.pos++
	}
}

func (p *exprParser) eat(tok string) bool {
	p.skipSpace()
	if strings.HasPrefix(p.src[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

func (p *exprParser) parseOr() (jsonNode, error) {
	return p.parseChain("||", p.parseAnd, func(l, r jsonNode) jsonNode { return func(d any) bool { return l(d) || r(d) } })
}

func (p *exprParser) parseAnd() (jsonNode, error) {
	return p.parseChain("&&", p.parseUnary, func(l, r jsonNode) jsonNode { return func(d any) bool { return l(d) && r(d) } })
}

// parseChain parses operand (op operand)*, joining each next operand to
// what came before with join (left-associative).
func (p *exprParser) parseChain(op string, operand func() (jsonNode, error), join func(l, r jsonNode) jsonNode) (jsonNode, error) {
	left, err := operand()
	if err != nil {
		return nil, err
	}
	for p.eat(op) {
		right, err := operand()
		if err != nil {
			return nil, err
		}
		left = join(left, right)
	}
	return left, nil
}

func (p *exprParser) parseUnary() (jsonNode, error) {
	if p.eat("(") {
		n, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if !p.eat(")") {
			return nil, fmt.Errorf("missing )")
		}
		return n, nil
	}
	return p.parseComparison()
}

// parseComparison reads one "selector op value" (or selector IS NULL, ...)
// up to the next &&, || or ) outside quotes and regexes.
func (p *exprParser) parseComparison() (jsonNode, error) {
	p.skipSpace()
	end := p.pos
	inQuote, inRegex := false, false
	for ; end < len(p.src); end++ {
		c := p.src[end]
		if c == '"' && !inRegex {
			inQuote = !inQuote
		} else if c == '%' && !inQuote {
			inRegex = !inRegex
		}
		if inQuote || inRegex {
			continue
		}
		if c == ')' || strings.HasPrefix(p.src[end:], "&&") || strings.HasPrefix(p.src[end:], "||") {
			break
		}
	}
	text := strings.TrimSpace(p.src[p.pos:end])
	p.pos = end
	if text == "" {
		return nil, fmt.Errorf("an empty condition")
	}
	return compileCondition(text)
}

func compileCondition(text string) (jsonNode, error) {
	for _, unary := range []struct {
		suffix string
		test   func(v any, found bool) bool
	}{
		{"IS NULL", func(v any, found bool) bool { return found && v == nil }},
		{"IS TRUE", func(v any, found bool) bool { return found && v == true }},
		{"IS FALSE", func(v any, found bool) bool { return found && v == false }},
		{"NOT EXISTS", func(_ any, found bool) bool { return !found }},
		{"EXISTS", func(_ any, found bool) bool { return found }},
	} {
		if sel, ok := strings.CutSuffix(text, unary.suffix); ok {
			path, err := parseSelector(strings.TrimSpace(sel))
			if err != nil {
				return nil, err
			}
			return func(d any) bool { v, found := path.lookup(d); return unary.test(v, found) }, nil
		}
	}
	left, op, right, ok := splitComparison(text)
	if !ok {
		return nil, fmt.Errorf("%q is no comparison (selector, operator, value)", text)
	}
	path, err := parseSelector(left)
	if err != nil {
		return nil, err
	}
	lit, err := parseLiteral(right)
	if err != nil {
		return nil, err
	}
	return func(d any) bool {
		v, found := path.lookup(d)
		if !found {
			return false
		}
		return compareJSON(op, v, lit)
	}, nil
}

func compareJSON(op string, v any, lit literal) bool {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return false
		}
		if lit.number == nil && !lit.quoted && lit.glob == nil {
			return false
		}
		return lit.compare(op, x.String(), &f)
	case string:
		if lit.number != nil && op != "=" && op != "!=" {
			return false
		}
		return lit.compare(op, x, nil)
	case bool:
		return lit.compare(op, strconv.FormatBool(x), nil)
	case nil:
		return lit.compare(op, "null", nil) && !lit.quoted
	}
	return false
}

// selector is a JSON path: $ followed by .name and [index] steps.
type selector []any // string keys and int indexes

func parseSelector(s string) (selector, error) {
	rest, ok := strings.CutPrefix(s, "$")
	if !ok {
		return nil, fmt.Errorf("selector %q does not start with $", s)
	}
	var path selector
	for rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			n := strings.IndexAny(rest, ".[")
			if n < 0 {
				n = len(rest)
			}
			if n == 0 {
				return nil, fmt.Errorf("selector %q has an empty name", s)
			}
			path, rest = append(path, rest[:n]), rest[n:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("selector %q lacks ]", s)
			}
			i, err := strconv.Atoi(rest[1:end])
			if err != nil || i < 0 {
				return nil, fmt.Errorf("selector %q has a bad index", s)
			}
			path, rest = append(path, i), rest[end+1:]
		default:
			return nil, fmt.Errorf("selector %q: unexpected %q", s, rest)
		}
	}
	if len(path) == 0 {
		return nil, fmt.Errorf("selector %q names no field", s)
	}
	return path, nil
}

func (p selector) lookup(doc any) (any, bool) {
	cur := doc
	for _, step := range p {
		switch k := step.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[k]; !ok {
				return nil, false
			}
		case int:
			l, ok := cur.([]any)
			if !ok || k >= len(l) {
				return nil, false
			}
			cur = l[k]
		}
	}
	return cur, true
}

// ---- space-delimited patterns ----

// delimitedField is one position of a space-delimited pattern: a name, an
// optional condition over the field's value, or the ellipsis.
type delimitedField struct {
	ellipsis bool
	test     func(value string) bool
}

func compileDelimitedPattern(pattern string) (matcher, error) {
	if !strings.HasSuffix(pattern, "]") {
		return nil, fmt.Errorf("a space-delimited pattern ends with ]")
	}
	var fields []delimitedField
	for _, part := range splitOutside(pattern[1:len(pattern)-1], ',') {
		part = strings.TrimSpace(part)
		if part == "..." {
			fields = append(fields, delimitedField{ellipsis: true})
			continue
		}
		test, err := compileFieldCondition(part)
		if err != nil {
			return nil, err
		}
		fields = append(fields, delimitedField{test: test})
	}
	return func(msg string) bool { return matchFields(fields, splitLogFields(msg)) }, nil
}

// compileFieldCondition compiles "name", "name = value" or conditions
// joined by && and || ("status = 4* || status = 5*").
func compileFieldCondition(part string) (func(string) bool, error) {
	if alts := splitOutsideToken(part, "||"); len(alts) > 1 {
		return combine(alts, false)
	}
	if all := splitOutsideToken(part, "&&"); len(all) > 1 {
		return combine(all, true)
	}
	name, op, right, ok := splitComparison(part)
	if !ok {
		if name == "" || strings.ContainsAny(name, " \t") {
			return nil, fmt.Errorf("field %q is neither a name nor a comparison", part)
		}
		return func(string) bool { return true }, nil
	}
	if name == "" {
		return nil, fmt.Errorf("comparison %q names no field", part)
	}
	lit, err := parseLiteral(right)
	if err != nil {
		return nil, err
	}
	return func(v string) bool {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return lit.compare(op, v, &f)
		}
		return lit.compare(op, v, nil)
	}, nil
}

func combine(parts []string, and bool) (func(string) bool, error) {
	tests := make([]func(string) bool, 0, len(parts))
	for _, p := range parts {
		t, err := compileFieldCondition(strings.TrimSpace(p))
		if err != nil {
			return nil, err
		}
		tests = append(tests, t)
	}
	return func(v string) bool {
		for _, t := range tests {
			if t(v) != and {
				return !and
			}
		}
		return and
	}, nil
}

// matchFields matches fields against values; an ellipsis takes any number
// of values.
func matchFields(fields []delimitedField, values []string) bool {
	if len(fields) == 0 {
		return len(values) == 0
	}
	f := fields[0]
	if f.ellipsis {
		for skip := 0; skip <= len(values); skip++ {
			if matchFields(fields[1:], values[skip:]) {
				return true
			}
		}
		return false
	}
	return len(values) > 0 && f.test(values[0]) && matchFields(fields[1:], values[1:])
}

// splitLogFields splits a log message at spaces; text within double quotes
// or square brackets is one field, given without its quotes or brackets.
func splitLogFields(msg string) []string {
	var out []string
	for i := 0; i < len(msg); {
		switch c := msg[i]; c {
		case ' ', '\t':
			i++
		case '"', '[':
			closer := byte('"')
			if c == '[' {
				closer = ']'
			}
			end := strings.IndexByte(msg[i+1:], closer)
			if end < 0 {
				out, i = append(out, msg[i+1:]), len(msg)
				continue
			}
			out, i = append(out, msg[i+1:i+1+end]), i+end+2
		default:
			end := strings.IndexAny(msg[i:], " \t")
			if end < 0 {
				end = len(msg) - i
			}
			out, i = append(out, msg[i:i+end]), i+end
		}
	}
	return out
}

// splitOutside splits s at sep outside double quotes and %regex%.
func splitOutside(s string, sep byte) []string {
	var out []string
	start := 0
	for i := range outside(s) {
		if s[i] == sep {
			out, start = append(out, s[start:i]), i+1
		}
	}
	return append(out, s[start:])
}

// splitOutsideToken splits s at a two-character token outside quotes.
func splitOutsideToken(s, tok string) []string {
	var out []string
	inQuote, start := false, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			inQuote = !inQuote
		}
		if !inQuote && strings.HasPrefix(s[i:], tok) {
			out, start = append(out, s[start:i]), i+len(tok)
			i += len(tok) - 1
		}
	}
	return append(out, s[start:])
}
