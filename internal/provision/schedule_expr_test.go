package provision

import (
	"strings"
	"testing"
)

func TestCheckScheduleExpression(t *testing.T) {
	t.Parallel()
	valid := []string{
		"rate(5 minutes)", "rate(1 minute)", "rate(1 hour)", "rate(2 days)",
		"cron(0 8 * * ? *)", "cron(0/15 * ? * MON-FRI *)", "cron(0 12 L * ? 2030)", "cron(0 9 ? * 2#1 *)",
		"cron(15 10 1W * ? *)", "cron(0 0 1,15 JAN,JUL ? 2025-2030)", "cron(0 18 ? * 6L *)",
		"at(2030-01-31T08:00:00)",
	}
	for _, e := range valid {
		if p, f := CheckScheduleExpression(e); p != "" {
			t.Errorf("%s: %s: %s", e, p, f)
		}
	}
	invalid := map[string]string{
		"rate(1 minutes)":         "plural unit for a value of 1",
		"rate(10 minute)":         "singular unit for a value other than 1",
		"rate(0 minutes)":         "rate of 0",
		"rate(5 weeks)":           `unit "weeks"`,
		"rate(five minutes)":      "not a rate expression",
		"cron(0 * * * *)":         "5 fields",
		"cron(0 25 * * ? *)":      `"25" in the hours field`,
		"cron(0 8 * * * *)":       `sets day-of-month "*" and day-of-week "*"`,
		"cron(0 8 ? * ? *)":       `sets day-of-month "?" and day-of-week "?"`,
		"cron(60 8 * * ? *)":      `"60" in the minutes field`,
		"cron(0 8 * 13 ? *)":      `"13" in the month field`,
		"cron(0 8 ? * 9 *)":       `"9" in the day-of-week field`,
		"cron(0 8 * * ? 1900)":    `"1900" in the year field`,
		"cron(0/0 8 * * ? *)":     `"0/0" in the minutes field`,
		"at(2030-01-31)":          "not a one-time expression",
		"every 5 minutes":         "neither a rate, a cron nor an at expression",
		"cron(0 ? * * ? *)":       `"?" in the hours field`,
		"cron(0 8 ? * MON#6 *)":   `"MON#6" in the day-of-week field`,
		"cron(0 8 32 * ? *)":      `"32" in the day-of-month field`,
		"cron(0 8 1-40 * ? *)":    `"1-40" in the day-of-month field`,
		"cron(0 8 * JAN-FOO ? *)": `"JAN-FOO" in the month field`,
	}
	for e, want := range invalid {
		p, f := CheckScheduleExpression(e)
		if !strings.Contains(p, want) || f == "" {
			t.Errorf("%s: got %q (fix %q), want a problem with %q", e, p, f, want)
		}
	}
}
