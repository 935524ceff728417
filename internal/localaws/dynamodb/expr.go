package dynamodb

import (
	"strings"
	"unicode"
)

// topLevelRemoves returns the top-level attribute names (no nested path)
// that an UpdateExpression's REMOVE clause removes, with #name
// placeholders resolved. It splits clauses and list items only; it does not
// evaluate anything.
func topLevelRemoves(expr string, names map[string]string) []string {
	clauses := splitClauses(expr)
	var out []string
	for _, c := range clauses {
		if c.keyword != "REMOVE" {
			continue
		}
		for _, item := range splitTopLevel(c.body, ',') {
			p := strings.TrimSpace(item)
			if p == "" || strings.ContainsAny(p, ".[") {
				continue
			}
			if strings.HasPrefix(p, "#") {
				v, ok := names[p]
				if !ok {
					continue
				}
				p = v
			}
			out = append(out, p)
		}
	}
	return out
}

type clause struct {
	keyword, body string
}

var clauseKeywords = []string{"SET", "REMOVE", "ADD", "DELETE"}

// splitClauses splits an update expression at its clause keywords (outside
// parentheses, as whole words).
func splitClauses(expr string) []clause {
	var out []clause
	depth := 0
	start, current := -1, ""
	isBoundary := func(i int) bool {
		if i < 0 || i >= len(expr) {
			return true
		}
		r := rune(expr[i])
		return unicode.IsSpace(r) || r == ',' || r == '(' || r == ')'
	}
	for i := 0; i < len(expr); i++ {
		switch expr[i] {
		case '(':
			depth++
			continue
		case ')':
			depth--
			continue
		}
		if depth != 0 || !isBoundary(i-1) {
			continue
		}
		for _, kw := range clauseKeywords {
			if len(expr)-i >= len(kw) && strings.EqualFold(expr[i:i+len(kw)], kw) && isBoundary(i+len(kw)) {
				if start >= 0 {
					out = append(out, clause{keyword: current, body: expr[start:i]})
				}
				current, start = kw, i+len(kw)
				i += len(kw) - 1
				break
			}
		}
	}
	if start >= 0 {
		out = append(out, clause{keyword: current, body: expr[start:]})
	}
	return out
}

// splitTopLevel splits s at sep outside parentheses.
func splitTopLevel(s string, sep byte) []string {
	var out []string
	depth, last := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case sep:
			if depth == 0 {
				out = append(out, s[last:i])
				last = i + 1
			}
		}
	}
	return append(out, s[last:])
}
