package awsapi

import (
	"slices"
	"testing"
)

func TestMergeTags(t *testing.T) {
	got := MergeTags([]Tag{{"a", "1"}, {"b", "2"}}, []Tag{{"b", "3"}, {"c", "4"}})
	if want := []Tag{{"a", "1"}, {"b", "3"}, {"c", "4"}}; !slices.Equal(got, want) {
		t.Fatalf("MergeTags = %v, want %v", got, want)
	}
}

func TestTagMapAndList(t *testing.T) {
	invalid := func(tg Tag) *Error { return ValidationException("invalid tag %q", tg.Key) }
	m, err := TagMap([]Tag{{"team", "orders"}, {"env", "test"}}, invalid)
	if err != nil || len(m) != 2 || m["team"] != "orders" {
		t.Fatalf("TagMap = %v, %v", m, err)
	}
	if got, want := TagList(m), []Tag{{"env", "test"}, {"team", "orders"}}; !slices.Equal(got, want) {
		t.Fatalf("TagList = %v, want %v", got, want)
	}
	for _, bad := range []Tag{{"", "v"}, {string(make([]byte, 129)), "v"}, {"k", string(make([]byte, 257))}} {
		if _, err := TagMap([]Tag{bad}, invalid); err == nil {
			t.Errorf("TagMap accepted %d-character key, %d-character value", len(bad.Key), len(bad.Value))
		}
	}
}
