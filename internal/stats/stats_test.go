package stats

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	for _, tt := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond}, {0, time.Millisecond}, {99.5, 100 * time.Millisecond}} {
		if got := Percentile(ds, tt.p); got != tt.want {
			t.Errorf("Percentile(%v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if ds[0] != 100*time.Millisecond {
		t.Error("Percentile sorted its argument")
	}
	if Percentile(nil, 50) != 0 || MedianFloat(nil) != 0 {
		t.Error("no values: want 0")
	}
	if got := MedianFloat([]float64{4, 1, 3, 2}); got != 2 {
		t.Errorf("MedianFloat = %v, want 2", got)
	}
}

func TestPercentileCases(t *testing.T) {
	t.Parallel()
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ms(7), 99, 7 * time.Millisecond},
		{"median of odd", ms(5, 1, 3), 50, 3 * time.Millisecond},
		{"median of even is the lower", ms(4, 1, 3, 2), 50, 2 * time.Millisecond},
		{"p99 of 100", ms(seq(1, 100)...), 99, 99 * time.Millisecond},
		{"p99 of 10 is the max", ms(seq(1, 10)...), 99, 10 * time.Millisecond},
		{"p100", ms(3, 9, 1), 100, 9 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Percentile(tc.in, tc.p); got != tc.want {
				t.Errorf("Percentile(%v, %v) = %v, want %v", tc.in, tc.p, got, tc.want)
			}
		})
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}
