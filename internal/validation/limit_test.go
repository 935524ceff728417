package validation

import "testing"

func TestLimits(t *testing.T) {
	t.Parallel()
	ages := Range{Min: 60, Max: 604800, Unit: "seconds", Or: &Special{Value: -1, Means: "no limit"}}
	retries := Range{Min: -1, Max: 10000, MinMeans: "retry until the record expires"}
	atLeast := Range{Min: 1, Max: NoMax, Unit: "errors per minute", Hint: ", such as 5"}
	for _, tt := range []struct {
		name              string
		limit             Limit
		v                 any
		describe, problem string
		fix               string
	}{
		{"in range", Range{Min: 1, Max: 10000}, int64(100), "1 to 10000", "", ""},
		{"below", Range{Min: 1, Max: 10000}, int64(0), "1 to 10000", "is 0", "use 1 to 10000"},
		{"the other value", ages, int64(-1), "-1 (no limit) or 60 to 604800 seconds", "", ""},
		{"outside both", ages, int64(30), "-1 (no limit) or 60 to 604800 seconds", "is 30", "use -1 (no limit) or 60 to 604800 seconds"},
		{"special minimum", retries, int64(-2), "-1 (retry until the record expires) to 10000", "is -2", "use -1 (retry until the record expires) to 10000"},
		{"no maximum", atLeast, int64(1 << 40), "1 or more errors per minute", "", ""},
		{"hint", atLeast, int64(0), "1 or more errors per minute", "is 0", "use 1 or more errors per minute, such as 5"},
		{"not a number", atLeast, "1", "1 or more errors per minute", `is 1, not a whole number`, "use 1 or more errors per minute"},
		{"values", Values{1, 3, 5}, int64(2), "1, 3 or 5", "is 2", "use one of 1, 3 or 5"},
		{"one of the values", Values{1, 3, 5}, int64(3), "1, 3 or 5", "", ""},
		{"choice", Choice{"a", "b", "c"}, "d", "`a`, `b` or `c`", `is "d"`, `use "a", "b" or "c"`},
		{"chosen", Choice{"a", "b"}, "b", "`a` or `b`", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.limit.Describe(); got != tt.describe {
				t.Errorf("Describe() = %q, want %q", got, tt.describe)
			}
			problem, fix := tt.limit.Check(tt.v)
			if problem != tt.problem || fix != tt.fix {
				t.Errorf("Check(%v) = %q, %q; want %q, %q", tt.v, problem, fix, tt.problem, tt.fix)
			}
		})
	}
}

func TestCheckNamesTheField(t *testing.T) {
	t.Parallel()
	err := Subject("outbox pipeline").Check("Mapping.BatchSize", Range{Min: 1, Max: 10000}, int64(0))
	if err == nil || err.Error() != "outbox pipeline Mapping.BatchSize is 0: use 1 to 10000" {
		t.Errorf("Check = %v", err)
	}
	if err := Subject("s").Check("F", Range{Min: 1, Max: 2}, int64(2)); err != nil {
		t.Errorf("Check of an allowed value = %v", err)
	}
}
