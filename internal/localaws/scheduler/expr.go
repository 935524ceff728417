package scheduler

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// expression is a parsed ScheduleExpression: rate(), cron() or at().
type expression struct {
	kind string // "rate", "cron" or "at"
	// rate
	every time.Duration
	// cron
	fields [6]cronField
	domAny bool // day-of-month is "?"
	// at (wall clock in the schedule's time zone)
	at time.Time
}

// cronField is the set of values a cron field matches.
type cronField struct {
	bits uint64 // minute, hour, day-of-month, month, day-of-week
	// years are 1970..2199: a set of offsets from 1970.
	years map[int]bool
	any   bool // "*" or "?"
}

func (f cronField) has(v int) bool {
	if f.years != nil {
		return f.years[v]
	}
	return v >= 0 && v < 64 && f.bits&(1<<uint(v)) != 0
}

type cronSpec struct {
	name     string
	min, max int
	names    []string // names of min, min+1, ...
}

var cronSpecs = [6]cronSpec{
	{name: "minutes", min: 0, max: 59},
	{name: "hours", min: 0, max: 23},
	{name: "day-of-month", min: 1, max: 31},
	{name: "month", min: 1, max: 12, names: []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}},
	{name: "day-of-week", min: 1, max: 7, names: []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}},
	{name: "year", min: 1970, max: 2199},
}

// unsupportedCronError is returned for the L, W and # wildcards, which AWS
// accepts but this stack does not evaluate.
type unsupportedCronError struct{ expr string }

func (e unsupportedCronError) Error() string {
	return fmt.Sprintf("Invalid Schedule Expression %s. The local stack does not support the L, W and # wildcards of cron expressions.", e.expr)
}

// invalidExpressionError is returned for an expression AWS rejects; its
// message is AWS's, which is the API's ValidationException message.
type invalidExpressionError struct{ expr string }

func (e invalidExpressionError) Error() string {
	return "Invalid Schedule Expression " + e.expr + "."
}

// parseExpression parses rate(value unit), cron(minutes hours
// day-of-month month day-of-week year) and at(yyyy-mm-ddThh:mm:ss). at()
// is read in loc.
func parseExpression(s string, loc *time.Location) (*expression, error) {
	invalid := invalidExpressionError{s}
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return nil, invalid
	}
	kind, body := s[:open], s[open+1:len(s)-1]
	switch kind {
	case "rate":
		parts := strings.Fields(body)
		if len(parts) != 2 {
			return nil, invalid
		}
		n, err := strconv.Atoi(parts[0])
		if err != nil || n <= 0 || parts[0] != strconv.Itoa(n) {
			return nil, invalid
		}
		unit := parts[1]
		// As AWS documents: the unit is singular for 1 and plural above.
		if n == 1 && strings.HasSuffix(unit, "s") || n > 1 && !strings.HasSuffix(unit, "s") {
			return nil, invalid
		}
		var d time.Duration
		switch strings.TrimSuffix(unit, "s") {
		case "minute":
			d = time.Minute
		case "hour":
			d = time.Hour
		case "day":
			d = 24 * time.Hour
		default:
			return nil, invalid
		}
		return &expression{kind: "rate", every: time.Duration(n) * d}, nil
	case "at":
		t, err := time.ParseInLocation("2006-01-02T15:04:05", body, loc)
		if err != nil {
			return nil, invalid
		}
		return &expression{kind: "at", at: t}, nil
	case "cron":
		parts := strings.Fields(body)
		if len(parts) != 6 {
			return nil, invalid
		}
		e := &expression{kind: "cron"}
		for i, p := range parts {
			if i == 2 && strings.ContainsAny(p, "LW") || i == 4 && (strings.Contains(p, "#") || strings.HasSuffix(strings.ToUpper(p), "L")) {
				return nil, unsupportedCronError{s}
			}
			f, err := parseCronField(p, cronSpecs[i], i == 2 || i == 4)
			if err != nil {
				return nil, invalid
			}
			e.fields[i] = f
		}
		// Exactly one of day-of-month and day-of-week is "?".
		domQ, dowQ := parts[2] == "?", parts[4] == "?"
		if domQ == dowQ {
			return nil, invalid
		}
		e.domAny = domQ
		return e, nil
	}
	return nil, invalid
}

func parseCronField(s string, spec cronSpec, questionOK bool) (cronField, error) {
	var f cronField
	if spec.name == "year" {
		f.years = map[int]bool{}
	}
	set := func(v int) {
		if f.years != nil {
			f.years[v] = true
		} else {
			f.bits |= 1 << uint(v)
		}
	}
	if s == "?" {
		if !questionOK {
			return f, fmt.Errorf("? in %s", spec.name)
		}
		f.any = true
		for v := spec.min; v <= spec.max; v++ {
			set(v)
		}
		return f, nil
	}
	value := func(t string) (int, error) {
		for i, n := range spec.names {
			if strings.EqualFold(t, n) {
				return spec.min + i, nil
			}
		}
		v, err := strconv.Atoi(t)
		if err != nil || v < spec.min || v > spec.max {
			return 0, fmt.Errorf("%q out of range for %s", t, spec.name)
		}
		return v, nil
	}
	for item := range strings.SplitSeq(s, ",") {
		rng, stepStr, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepStr)
			if err != nil || n <= 0 {
				return f, fmt.Errorf("bad step %q", stepStr)
			}
			step = n
		}
		lo, hi := spec.min, spec.max
		switch {
		case rng == "*":
			f.any = f.any || !hasStep
		case strings.Contains(rng, "-"):
			a, b, _ := strings.Cut(rng, "-")
			var err error
			if lo, err = value(a); err != nil {
				return f, err
			}
			if hi, err = value(b); err != nil {
				return f, err
			}
			if lo > hi {
				return f, fmt.Errorf("reversed range %q", rng)
			}
		default:
			v, err := value(rng)
			if err != nil {
				return f, err
			}
			lo = v
			if !hasStep {
				hi = v
			}
		}
		for v := lo; v <= hi; v += step {
			set(v)
		}
	}
	return f, nil
}

// next returns the first occurrence strictly after after, or ok false when
// there is none. anchor is where rate() counts from; loc is the time zone
// of cron() and at().
func (e *expression) next(after, anchor time.Time, loc *time.Location) (time.Time, bool) {
	switch e.kind {
	case "at":
		if e.at.After(after) {
			return e.at, true
		}
		return time.Time{}, false
	case "rate":
		if anchor.After(after) {
			return anchor, true
		}
		n := int64(after.Sub(anchor)/e.every) + 1 // periods from anchor past after
		return anchor.Add(time.Duration(n) * e.every), true
	}
	// cron: walk the days in loc from the day of after.
	t := after.In(loc)
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, loc)
	for i := 0; i < 366*231; i++ {
		d := day.AddDate(0, 0, i)
		if d.Year() > cronSpecs[5].max {
			break
		}
		if !e.fields[5].has(d.Year()) || !e.fields[3].has(int(d.Month())) {
			continue
		}
		if e.domAny {
			if !e.fields[4].has(int(d.Weekday()) + 1) {
				continue
			}
		} else if !e.fields[2].has(d.Day()) {
			continue
		}
		for h := 0; h < 24; h++ {
			if !e.fields[1].has(h) {
				continue
			}
			for m := 0; m < 60; m++ {
				if !e.fields[0].has(m) {
					continue
				}
				c := time.Date(d.Year(), d.Month(), d.Day(), h, m, 0, 0, loc)
				if c.After(after) {
					return c, true
				}
			}
		}
	}
	return time.Time{}, false
}
