package interpreter

import (
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/third_party/minidyn/types"
)

// TestMatchReadsTheAttributesItNames: a condition sees the attributes it
// names directly, through #name placeholders, as the head of a document
// path or inside a function, and no others, whatever the item holds.
func TestMatchReadsTheAttributesItNames(t *testing.T) {
	s := func(v string) *types.Item { return &types.Item{S: &v} }
	item := map[string]*types.Item{
		"pk": s("a"), "status": s("PENDING"), "a.b": s("dotted"),
		"doc":   {M: map[string]*types.Item{"inner": s("x")}},
		"extra": s("unreferenced"),
	}
	li := Language{}
	for _, tc := range []struct {
		expr string
		want bool
	}{
		{"pk = :a", true},
		{"#s = :p", true},
		{"#s = :p AND pk = :a", true},
		{"doc.inner = :x", true},
		{"#d = :dotted", true},
		{"attribute_exists(extra)", true},
		{"attribute_not_exists(absent)", true},
		{"attribute_not_exists(#s)", false},
		{"begins_with(#s, :pe) AND NOT (pk = :x)", true},
	} {
		got, err := li.Match(MatchInput{
			Expression: tc.expr, ExpressionType: ExpressionTypeConditional, Item: item,
			Aliases: map[string]string{"#s": "status", "#d": "a.b"},
			Attributes: map[string]*types.Item{
				":a": s("a"), ":p": s("PENDING"), ":x": s("x"), ":dotted": s("dotted"), ":pe": s("PEN"),
			},
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if got != tc.want {
			t.Errorf("%s = %v, want %v", tc.expr, got, tc.want)
		}
	}
}
