package awsapi

import (
	"maps"
	"testing"
)

func TestUntag(t *testing.T) {
	tags := map[string]string{"a": "1", "b": "2", "c": "3"}
	Untag(tags, []string{"b", "missing"})
	if want := map[string]string{"a": "1", "c": "3"}; !maps.Equal(tags, want) {
		t.Fatalf("Untag left %v, want %v", tags, want)
	}
}

func TestTagWithinLimits(t *testing.T) {
	long := func(n int) string { return string(make([]byte, n)) }
	for _, c := range []struct {
		key, value string
		want       bool
	}{
		{"k", "", true},
		{long(128), long(256), true},
		{"", "v", false},
		{long(129), "v", false},
		{"k", long(257), false},
	} {
		if got := TagWithinLimits(c.key, c.value); got != c.want {
			t.Errorf("TagWithinLimits(%d-character key, %d-character value) = %v, want %v", len(c.key), len(c.value), got, c.want)
		}
	}
}

func TestMergedLen(t *testing.T) {
	if got := MergedLen(map[string]string{"a": "1", "b": "2"}, map[string]string{"b": "3", "c": "4"}); got != 3 {
		t.Errorf("MergedLen = %d, want 3", got)
	}
}
