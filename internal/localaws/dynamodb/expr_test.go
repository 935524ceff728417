package dynamodb

import (
	"reflect"
	"testing"
)

func TestTopLevelRemoves(t *testing.T) {
	t.Parallel()
	names := map[string]string{"#p": "GSI1PK", "#s": "GSI1SK", "#m": "meta"}
	for expr, want := range map[string][]string{
		"REMOVE #p, #s":                                {"GSI1PK", "GSI1SK"},
		"SET a = :v REMOVE #p":                         {"GSI1PK"},
		"remove x SET y = list_append(y, :l)":          {"x"},
		"SET #m.a = :v REMOVE #m.b, c[1], d":           {"d"},
		"SET a = if_not_exists(a, :z) ADD n :one":      nil,
		"SET removed = :v":                             nil,
		"REMOVE a ADD counter :one DELETE tags :t":     {"a"},
		"SET #p = :x, q = size(r) REMOVE gone, also  ": {"gone", "also"},
	} {
		if got := topLevelRemoves(expr, names); !reflect.DeepEqual(got, want) {
			t.Errorf("topLevelRemoves(%q) = %v, want %v", expr, got, want)
		}
	}
}
