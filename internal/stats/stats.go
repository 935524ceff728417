// Package stats holds the few statistics the measurements share: nearest-rank
// percentiles and medians.
package stats

import (
	"math"
	"slices"
	"time"
)

// Percentile returns the p-th percentile (0 to 100) of ds by the nearest
// rank method: the smallest value with at least p% of the values at or
// below it. It returns 0 for no values.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// Median is the 50th percentile.
func Median(ds []time.Duration) time.Duration { return Percentile(ds, 50) }

// MedianFloat is the median of xs (the lower middle value for an even
// count, like Percentile); 0 for none.
func MedianFloat(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}
