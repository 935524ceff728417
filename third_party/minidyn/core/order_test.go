package core

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/outboxkit/terraform-provider-outbox/third_party/minidyn/types"
)

// TestOrderedNumberOrdersByValue: the encodings of numbers in increasing
// order increase byte by byte, and each spelling of one number encodes
// alike.
func TestOrderedNumberOrdersByValue(t *testing.T) {
	increasing := [][]string{
		{"-1e10", "-10000000000"},
		{"-123.45"},
		{"-10", "-1e1", "-10.0"},
		{"-9"},
		{"-0.123"},
		{"-0.12", "-.12"},
		{"-1E-130"},
		{"0", "-0", "0.000", "0e5"},
		{"1E-130"},
		{"0.12", "+0.12", "12e-2"},
		{"0.123"},
		{"1", "1.0", "1.", "001", "10e-1"},
		{"9"},
		{"10", "1e1", "1E+1"},
		{"1733400000000"},
		{"1733400000001"},
		{"99999999999999999999999999999999999999"},
		{"9.9999999999999999999999999999999999999E+125"},
	}
	prev := ""

	for i, same := range increasing {
		want := orderedNumber(same[0])
		require.Greater(t, want, prev, "%s after %v", same[0], increasing[max(0, i-1)])

		for _, s := range same[1:] {
			require.Equal(t, want, orderedNumber(s), "%s and %s", s, same[0])
		}

		prev = want
	}

	require.Equal(t, "x1", orderedNumber("x1"), "not a number")
}

// TestOrderOfTuples: order strings compare tuples value by value, a value
// that is a prefix of another ordering first, whatever bytes follow it.
func TestOrderOfTuples(t *testing.T) {
	defs := map[string]string{"h": "S", "r": "B"}
	item := func(h string, r ...byte) map[string]*types.Item {
		return map[string]*types.Item{"h": {S: new(h)}, "r": {B: r}}
	}
	increasing := []map[string]*types.Item{
		item("a", 0xff), item("a\x00", 0), item("a#", 0), item("a.b", 0),
		item("ab", 0), item("ab", 0, 0), item("ab", 1),
	}

	for i := 1; i < len(increasing); i++ {
		a, b := orderOf(defs, increasing[i-1], "h", "r"), orderOf(defs, increasing[i], "h", "r")
		require.Less(t, a, b, strconv.Itoa(i))
	}

	prefix := partitionOrder(&types.Item{S: new("ab")}, "S")
	for i, it := range increasing {
		in := it["h"].S != nil && *it["h"].S == "ab"
		o := orderOf(defs, it, "h", "r")
		require.Equal(t, in, len(o) >= len(prefix) && o[:len(prefix)] == prefix, strconv.Itoa(i))
		require.Equal(t, in, o < partitionEnd(prefix) && o > prefix, strconv.Itoa(i))
	}
}
