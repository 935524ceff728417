package operate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/durfmt"
)

// parsedValue is a flag.Value read by parse and shown by format.
type parsedValue[T any] struct {
	v      *T
	parse  func(string) (T, error)
	format func(T) string
}

func (p parsedValue[T]) String() string {
	if p.v == nil {
		return ""
	}
	return p.format(*p.v)
}

func (p parsedValue[T]) Set(s string) error {
	v, err := p.parse(s)
	if err != nil {
		return err
	}
	*p.v = v
	return nil
}

// timeValue is a point in time given as an RFC 3339 time, a date, or an
// age ("90m", "24h", "7d": that long ago), with *t as its default.
func timeValue(t *time.Time) parsedValue[time.Time] {
	return parsedValue[time.Time]{v: t, parse: func(s string) (time.Time, error) { return parseTime(s, time.Now()) }, format: func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Format(time.RFC3339)
	}}
}

func parseTime(s string, now time.Time) (time.Time, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseFloat(days, 64); err == nil && n >= 0 {
			return now.Add(-time.Duration(n * 24 * float64(time.Hour))), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time: use an RFC 3339 time (2026-11-30T10:00:00Z), a date (2026-11-30) or an age (90m, 24h, 7d)", s)
}

// durationValue is a duration of at least 0, with *d as its default.
func durationValue(d *time.Duration) parsedValue[time.Duration] {
	return parsedValue[time.Duration]{v: d, parse: parseDuration, format: durfmt.Short}
}

func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration: use a number and a unit, such as 30s, 15m or 2h", s)
	}
	return d, nil
}

// rateValue is a number of events a second, at least 0.
func rateValue(r *float64) parsedValue[float64] {
	return parsedValue[float64]{v: r, parse: func(s string) (float64, error) {
		r, err := strconv.ParseFloat(s, 64)
		if err != nil || r < 0 || math.IsInf(r, 0) || math.IsNaN(r) {
			return 0, fmt.Errorf("%q is not a rate: use a number of events a second, such as 100 or 0.5", s)
		}
		return r, nil
	}, format: func(r float64) string { return strconv.FormatFloat(r, 'g', -1, 64) }}
}

// listFlag collects values given several times or comma-separated.
type listFlag struct{ values *[]string }

func (f listFlag) String() string {
	if f.values == nil {
		return ""
	}
	return strings.Join(*f.values, ",")
}

func (f listFlag) Set(s string) error {
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*f.values = append(*f.values, v)
		}
	}
	return nil
}
