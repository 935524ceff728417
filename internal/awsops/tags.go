package awsops

import (
	"maps"
	"slices"
	"strings"
)

// SortedKeys returns the keys of m, sorted.
func SortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}

// TagDiff returns the tags to set and the keys to remove, sorted, to go
// from have to want. Keys in the reserved aws: prefix (in any case) are
// never removed.
func TagDiff(have, want map[string]string) (set map[string]string, remove []string) {
	set = map[string]string{}
	for k, v := range want {
		if hv, ok := have[k]; !ok || hv != v {
			set[k] = v
		}
	}
	for _, k := range SortedKeys(have) {
		if _, ok := want[k]; !ok && !strings.HasPrefix(strings.ToLower(k), "aws:") {
			remove = append(remove, k)
		}
	}
	return set, remove
}
