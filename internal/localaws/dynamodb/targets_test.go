package dynamodb

import (
	"reflect"
	"testing"
)

func TestUpdateTargets(t *testing.T) {
	t.Parallel()
	names := map[string]string{"#s": "status", "#m": "meta"}
	for expr, want := range map[string][]string{
		"SET #s = :p, l = list_append(l, :more)":     {"status", "l"},
		"ADD n :two DELETE tags :b":                  {"n", "tags"},
		"SET #m.a = :v REMOVE #m.b, c[1], d":         {"meta", "c", "d"},
		"set x = if_not_exists(x, :z) remove y":      {"x", "y"},
		"SET n = n + :ten":                           {"n"},
		"REMOVE gone ADD counter :one SET a=:a,b=:b": {"gone", "counter", "a", "b"},
	} {
		got := updateTargets(expr, names)
		wantSet := map[string]bool{}
		for _, w := range want {
			wantSet[w] = true
		}
		if !reflect.DeepEqual(got, wantSet) {
			t.Errorf("updateTargets(%q) = %v, want %v", expr, got, wantSet)
		}
	}
}
