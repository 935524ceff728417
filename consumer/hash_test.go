package consumer

import (
	"math"
	"testing"
)

func TestCanonical(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{`{ "b": 1.0, "a": [true, null, "x"] }`, `{"a":[true,null,"x"],"b":1}`},
		{`{"total":42.5,"orderId":"1234"}`, `{"orderId":"1234","total":42.5}`},
		{`[1e21, 1e20, 1.5e-7, 0.000001, -0, 100, 1E3, 0.1]`, `[1e+21,100000000000000000000,1.5e-7,0.000001,0,100,1000,0.1]`},
		{`"<\u2028é\u0001\t\"\\/"`, "\"<\u2028é\\u0001\\t\\\"\\\\/\""},
		// Members sorted by UTF-16 code units: U+FF61 before U+1F600 (a surrogate pair, 0xD83D...) is false.
		{`{"\uff61":1,"\ud83d\ude00":2,"a":3}`, "{\"a\":3,\"\U0001F600\":2,\"\uff61\":1}"},
		{`9007199254740993`, `9007199254740992`},
	}
	for _, c := range cases {
		got, err := Canonical([]byte(c.in))
		if err != nil {
			t.Fatalf("Canonical(%s): %v", c.in, err)
		}
		if string(got) != c.want {
			t.Errorf("Canonical(%s) = %s, want %s", c.in, got, c.want)
		}
	}
	for _, bad := range []string{`{`, `1e400`, `{} {}`} {
		if _, err := Canonical([]byte(bad)); err == nil {
			t.Errorf("Canonical(%s) succeeded, want an error", bad)
		}
	}
}

func TestESNumber(t *testing.T) {
	t.Parallel()
	cases := map[float64]string{
		1: "1", -1.5: "-1.5", 123456789012: "123456789012", 1e21: "1e+21", 1.23e-7: "1.23e-7",
		1e-6: "0.000001", 5e-324: "5e-324", math.MaxFloat64: "1.7976931348623157e+308", 0.30000000000000004: "0.30000000000000004",
	}
	for f, want := range cases {
		if got := esNumber(f); got != want {
			t.Errorf("esNumber(%v) = %s, want %s", f, got, want)
		}
	}
}

func TestPayloadHashIgnoresSpellingOnly(t *testing.T) {
	t.Parallel()
	a, err := PayloadHash([]byte(`{"orderId":"1234","total":42.5}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := PayloadHash([]byte("{\n \"total\": 42.50, \"orderId\": \"1234\"}"))
	c, _ := PayloadHash([]byte(`{"orderId":"1234","total":42.6}`))
	if a != b {
		t.Errorf("two spellings of the same data hash differently: %s, %s", a, b)
	}
	if a == c {
		t.Errorf("different data hash the same: %s", a)
	}
	// sha256sum of the canonical text {"orderId":"1234","total":42.5}.
	if want := "0b59ccc420a0952da642bef551201b82aedf0e0b13f15c36b1bcd122055f97cd"; a != want {
		t.Errorf("hash %s, want %s", a, want)
	}
}
