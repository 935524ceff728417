package awsapi

import "sort"

// PageNames pages sorted names: the page of at most limit names from token
// on (from the first when token is empty), and the name the next page
// starts from ("" after the last page), which services return as their
// next token, encoded or not.
func PageNames(sorted []string, token string, limit int) (page []string, next string) {
	start := 0
	if token != "" {
		start = sort.SearchStrings(sorted, token)
	}
	sorted = sorted[start:]
	if len(sorted) > limit {
		return sorted[:limit], sorted[limit]
	}
	return sorted, ""
}
