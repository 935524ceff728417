package dynamodb

import "strings"

// updateTargets returns the top-level attribute names an UpdateExpression's
// actions (SET, REMOVE, ADD, DELETE) act on, with #name placeholders
// resolved: "SET m.a = :v, l[0] = :w ADD n :one" acts on m, l and n.
func updateTargets(expr string, names map[string]string) map[string]bool {
	out := map[string]bool{}
	for _, c := range splitClauses(expr) {
		for _, item := range splitTopLevel(c.body, ',') {
			path := strings.TrimSpace(item)
			if c.keyword == "SET" {
				path, _, _ = strings.Cut(path, "=")
			} else if f := strings.Fields(path); len(f) > 0 {
				path = f[0]
			}
			name := strings.TrimSpace(path)
			if i := strings.IndexAny(name, ".["); i >= 0 {
				name = name[:i]
			}
			if strings.HasPrefix(name, "#") {
				name = names[name]
			}
			if name != "" {
				out[name] = true
			}
		}
	}
	return out
}

// onlyTargets keeps the attributes an update acted on. The engine derives
// UPDATED_NEW and UPDATED_OLD by comparing the item before and after,
// which also lists an untouched set whose members it stored in another
// order; DynamoDB returns only the attributes the update expression names.
func onlyTargets(attrs Item, targets map[string]bool) Item {
	for n := range attrs {
		if !targets[n] {
			delete(attrs, n)
		}
	}
	return attrs
}

// withEmpties sets in attrs the targets whose value in item is an empty map
// or list: the engine's comparison of the item before and after leaves
// such a value out or returns it without its type, where DynamoDB returns
// it as it is.
func withEmpties(attrs Item, targets map[string]bool, item Item) Item {
	for n := range targets {
		v := item[n]
		if !isEmptyMapOrList(v) {
			continue
		}
		if attrs == nil {
			attrs = Item{}
		}
		attrs[n] = v
	}
	return attrs
}

// isEmptyMapOrList reports whether v is {"M":{}} or {"L":[]}.
func isEmptyMapOrList(v *AttributeValue) bool {
	return v != nil && (v.M != nil && len(v.M) == 0 || v.L != nil && len(v.L) == 0)
}
