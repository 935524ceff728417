package awsapi

import (
	"slices"
	"testing"
)

func TestPageNames(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e"}
	for _, c := range []struct {
		token    string
		limit    int
		page     []string
		wantNext string
	}{
		{"", 2, []string{"a", "b"}, "c"},
		{"c", 2, []string{"c", "d"}, "e"},
		{"e", 2, []string{"e"}, ""},
		{"bb", 5, []string{"c", "d", "e"}, ""},
		{"", 5, names, ""},
	} {
		page, next := PageNames(names, c.token, c.limit)
		if !slices.Equal(page, c.page) || next != c.wantNext {
			t.Errorf("PageNames(%q, %d) = %v, %q, want %v, %q", c.token, c.limit, page, next, c.page, c.wantNext)
		}
	}
}
