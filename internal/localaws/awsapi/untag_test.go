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
