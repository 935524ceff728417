package dynamodb

import (
	"bytes"
	"testing"
)

func str(s string) *string { return &s }

func boolPtr(b bool) *bool { return &b }

// TestEqualItems checks equalItems against the items' canonical JSON,
// which compares sets in any order and lists in order.
func TestEqualItems(t *testing.T) {
	cases := []struct {
		name  string
		a, b  Item
		equal bool
	}{
		{"both nil", nil, nil, true},
		{"nil and empty", nil, Item{}, false},
		{"same string", Item{"a": {S: str("x")}}, Item{"a": {S: str("x")}}, true},
		{"other string", Item{"a": {S: str("x")}}, Item{"a": {S: str("y")}}, false},
		{"string and number", Item{"a": {S: str("1")}}, Item{"a": {N: str("1")}}, false},
		{"attribute missing", Item{"a": {S: str("x")}, "b": {N: str("1")}}, Item{"a": {S: str("x")}}, false},
		{"other attribute name", Item{"a": {S: str("x")}}, Item{"b": {S: str("x")}}, false},
		{"nil value and absent", Item{"a": nil, "b": {N: str("1")}}, Item{"b": {N: str("1")}, "c": nil}, false},
		{"bool", Item{"a": {BOOL: boolPtr(false)}}, Item{"a": {BOOL: boolPtr(false)}}, true},
		{"bool and null", Item{"a": {BOOL: boolPtr(true)}}, Item{"a": {NULL: boolPtr(true)}}, false},
		{"false and true", Item{"a": {BOOL: boolPtr(false)}}, Item{"a": {BOOL: boolPtr(true)}}, false},
		{"binary", Item{"a": {B: []byte("xy")}}, Item{"a": {B: []byte("xy")}}, true},
		{"other binary", Item{"a": {B: []byte("xy")}}, Item{"a": {B: []byte("xz")}}, false},
		{"string set in another order", Item{"a": {SS: []*string{str("x"), str("y")}}}, Item{"a": {SS: []*string{str("y"), str("x")}}}, true},
		{"string set with another member", Item{"a": {SS: []*string{str("x"), str("y")}}}, Item{"a": {SS: []*string{str("x"), str("z")}}}, false},
		{"number set in another order", Item{"a": {NS: []*string{str("1"), str("2")}}}, Item{"a": {NS: []*string{str("2"), str("1")}}}, true},
		{"binary set in another order", Item{"a": {BS: [][]byte{[]byte("a"), []byte("b")}}}, Item{"a": {BS: [][]byte{[]byte("b"), []byte("a")}}}, true},
		{"list in another order", Item{"a": {L: []*AttributeValue{{S: str("x")}, {S: str("y")}}}}, Item{"a": {L: []*AttributeValue{{S: str("y")}, {S: str("x")}}}}, false},
		{"same list", Item{"a": {L: []*AttributeValue{{S: str("x")}, {N: str("2")}}}}, Item{"a": {L: []*AttributeValue{{S: str("x")}, {N: str("2")}}}}, true},
		{"empty list and no value", Item{"a": {L: []*AttributeValue{}}}, Item{"a": {}}, false},
		{"empty map and empty list", Item{"a": {M: Item{}}}, Item{"a": {L: []*AttributeValue{}}}, false},
		{"nested map", Item{"a": {M: Item{"b": {SS: []*string{str("x"), str("y")}}}}}, Item{"a": {M: Item{"b": {SS: []*string{str("y"), str("x")}}}}}, true},
		{"nested map with another value", Item{"a": {M: Item{"b": {N: str("1")}}}}, Item{"a": {M: Item{"b": {N: str("2")}}}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, pair := range [][2]Item{{c.a, c.b}, {c.b, c.a}} {
				if got := equalItems(pair[0], pair[1]); got != c.equal {
					t.Errorf("equalItems = %v, want %v", got, c.equal)
				}
			}
			if c.a == nil || c.b == nil {
				return
			}
			if same := bytes.Equal(canonical(c.a), canonical(c.b)); same != c.equal {
				t.Errorf("canonical JSON equal = %v, want %v: the case does not hold for the items' JSON", same, c.equal)
			}
		})
	}
}
