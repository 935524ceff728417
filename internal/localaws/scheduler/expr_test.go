package scheduler

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestExpressionNext(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	anchor := utc("2024-01-01T00:00:30Z")
	tests := []struct {
		expr, after, want string
		loc               *time.Location
	}{
		{"rate(1 minute)", "2024-01-01T00:00:30Z", "2024-01-01T00:01:30Z", time.UTC},
		{"rate(5 minutes)", "2024-01-01T00:07:00Z", "2024-01-01T00:10:30Z", time.UTC},
		{"rate(2 hours)", "2024-01-01T01:00:00Z", "2024-01-01T02:00:30Z", time.UTC},
		{"rate(1 day)", "2024-01-01T00:00:30Z", "2024-01-02T00:00:30Z", time.UTC},
		{"cron(0 12 * * ? *)", "2024-01-01T13:00:00Z", "2024-01-02T12:00:00Z", time.UTC},
		{"cron(0/15 * ? * MON-FRI *)", "2024-01-06T10:00:00Z", "2024-01-08T00:00:00Z", time.UTC},
		{"cron(10-20/5 8 ? * 2,4 *)", "2024-01-08T08:11:00Z", "2024-01-08T08:15:00Z", time.UTC},
		{"cron(30 8 1 JAN,JUL ? 2025)", "2024-03-01T00:00:00Z", "2025-01-01T08:30:00Z", time.UTC},
		{"cron(0 9 * * ? *)", "2024-07-01T00:00:00Z", "2024-07-01T13:00:00Z", ny},
		{"cron(0 9 * * ? *)", "2024-01-15T00:00:00Z", "2024-01-15T14:00:00Z", ny},
		{"at(2030-05-06T07:08:09)", "2024-01-01T00:00:00Z", "2030-05-06T07:08:09Z", time.UTC},
		{"at(2030-05-06T07:08:09)", "2024-01-01T00:00:00Z", "2030-05-06T11:08:09Z", ny},
	}
	for _, tt := range tests {
		e, err := parseExpression(tt.expr, tt.loc)
		if err != nil {
			t.Errorf("%s: %v", tt.expr, err)
			continue
		}
		got, ok := e.next(utc(tt.after), anchor, tt.loc)
		if !ok || !got.Equal(utc(tt.want)) {
			t.Errorf("%s in %s after %s = %v, %v; want %s", tt.expr, tt.loc, tt.after, got.UTC(), ok, tt.want)
		}
	}
	e, _ := parseExpression("at(2020-01-01T00:00:00)", time.UTC)
	if _, ok := e.next(utc("2024-01-01T00:00:00Z"), anchor, time.UTC); ok {
		t.Error("an at() in the past has a next occurrence")
	}
	e, _ = parseExpression("cron(0 0 1 1 ? 2020)", time.UTC)
	if _, ok := e.next(utc("2024-01-01T00:00:00Z"), anchor, time.UTC); ok {
		t.Error("a cron() of a past year has a next occurrence")
	}
}

func TestExpressionInvalid(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"", "every 5 minutes", "rate(0 minutes)", "rate(1 minutes)", "rate(2 minute)", "rate(5 seconds)",
		"rate(-1 hours)", "rate(1.5 hours)", "rate(5)", "cron(0 12 * * * *)", "cron(0 12 ? * ? *)",
		"cron(60 * * * ? *)", "cron(0 24 * * ? *)", "cron(0 12 * *)", "cron(0 12 32 * ? *)",
		"cron(0 12 ? * 8 *)", "cron(0 12 ? FOO * *)", "cron(5-1 * * * ? *)", "cron(0 12 * * ? 1969)",
		"at(2024-13-01T00:00:00)", "at(2024-01-01 00:00:00)", "at(2024-01-01T00:00)",
	} {
		_, err := parseExpression(s, time.UTC)
		if err == nil || err.Error() != "Invalid Schedule Expression "+s+"." {
			t.Errorf("parseExpression(%q) = %v", s, err)
		}
	}
	for _, s := range []string{"cron(0 12 L * ? *)", "cron(0 12 15W * ? *)", "cron(0 12 ? * 6#3 *)", "cron(0 12 ? * 6L *)"} {
		_, err := parseExpression(s, time.UTC)
		var u unsupportedCronError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), "does not support the L, W and #") {
			t.Errorf("parseExpression(%q) = %v", s, err)
		}
	}
	if _, err := parseExpression("cron(0 12 ? * WED *)", time.UTC); err != nil {
		t.Errorf("WED is a day name, not the W wildcard: %v", err)
	}
}
