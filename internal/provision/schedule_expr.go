package provision

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The grammar of EventBridge Scheduler's schedule expressions, as its user
// guide gives it ("Schedule types on EventBridge Scheduler"):
//
//   - rate(value unit): a positive whole value; the unit is minute, hour
//     or day when the value is 1, and minutes, hours or days otherwise;
//   - cron(minutes hours day-of-month month day-of-week year): six fields,
//     with , - * / in every field, ? L W in day-of-month, ? L # in
//     day-of-week, and one of day-of-month and day-of-week set to ?;
//   - at(yyyy-mm-ddThh:mm:ss): one run.
var (
	rateGrammar = regexp.MustCompile(`^rate\((\d+) ([a-z]+)\)$`)
	cronGrammar = regexp.MustCompile(`^cron\((.*)\)$`)
	atGrammar   = regexp.MustCompile(`^at\((.*)\)$`)
)

// cronField is one field of a cron expression: its range and the names it
// accepts (JAN..DEC, SUN..SAT).
type cronField struct {
	name     string
	min, max int
	names    []string
	special  string // characters allowed besides , - * /
}

var cronFields = []cronField{
	{name: "minutes", min: 0, max: 59},
	{name: "hours", min: 0, max: 23},
	{name: "day-of-month", min: 1, max: 31, special: "?LW"},
	{name: "month", min: 1, max: 12, names: []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}},
	{name: "day-of-week", min: 1, max: 7, names: []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}, special: "?L#"},
	{name: "year", min: 1970, max: 2199},
}

// CheckScheduleExpression returns what is wrong with a schedule
// expression and how to fix it; both are empty when it is valid.
func CheckScheduleExpression(expr string) (problem, fix string) {
	switch {
	case rateGrammar.MatchString(expr):
		return checkRate(expr)
	case strings.HasPrefix(expr, "rate("):
		return fmt.Sprintf("%q is not a rate expression", expr), `use rate(<value> <unit>), such as "rate(5 minutes)" or "rate(1 hour)"`
	case cronGrammar.MatchString(expr):
		return checkCron(cronGrammar.FindStringSubmatch(expr)[1])
	case atGrammar.MatchString(expr):
		at := atGrammar.FindStringSubmatch(expr)[1]
		if _, err := time.Parse("2006-01-02T15:04:05", at); err != nil {
			return fmt.Sprintf("%q is not a one-time expression", expr), `use at(yyyy-mm-ddThh:mm:ss), such as "at(2030-01-31T08:00:00)"`
		}
		return "", ""
	}
	return fmt.Sprintf("%q is neither a rate, a cron nor an at expression", expr), `use "rate(5 minutes)", a cron expression such as "cron(0/5 * * * ? *)", or "at(2030-01-31T08:00:00)"`
}

func checkRate(expr string) (problem, fix string) {
	m := rateGrammar.FindStringSubmatch(expr)
	n, err := strconv.ParseInt(m[1], 10, 64)
	unit := m[2]
	singular := strings.TrimSuffix(unit, "s")
	switch {
	case singular != "minute" && singular != "hour" && singular != "day":
		return fmt.Sprintf("%q has the unit %q", expr, unit), "use minute(s), hour(s) or day(s)"
	case err == nil && n < 1:
		return fmt.Sprintf("%q has a rate of %d", expr, n), `use a value of 1 or more, such as "rate(5 minutes)"`
	case n == 1 && unit != singular:
		return fmt.Sprintf("%q has a plural unit for a value of 1", expr), fmt.Sprintf("write %q", "rate(1 "+singular+")")
	case n != 1 && unit == singular:
		return fmt.Sprintf("%q has a singular unit for a value other than 1", expr), fmt.Sprintf("write %q", fmt.Sprintf("rate(%s %ss)", m[1], singular))
	}
	return "", ""
}

func checkCron(body string) (problem, fix string) {
	fields := strings.Fields(body)
	if len(fields) != len(cronFields) {
		return fmt.Sprintf("\"cron(%s)\" has %d fields", body, len(fields)),
			`use the six fields minutes, hours, day-of-month, month, day-of-week and year, such as "cron(0/5 * * * ? *)"`
	}
	for i, f := range fields {
		if p := cronFields[i].check(f); p != "" {
			return fmt.Sprintf("\"cron(%s)\" has %s", body, p), cronFields[i].fix()
		}
	}
	dom, dow := fields[2], fields[4]
	if (dom == "?") == (dow == "?") {
		return fmt.Sprintf("\"cron(%s)\" sets day-of-month %q and day-of-week %q", body, dom, dow),
			`set exactly one of them to "?", such as "cron(0 8 * * ? *)" (every day) or "cron(0 8 ? * MON *)" (Mondays)`
	}
	return "", ""
}

func (c cronField) fix() string {
	s := fmt.Sprintf("use %d to %d", c.min, c.max)
	if len(c.names) > 0 {
		s += fmt.Sprintf(" or %s to %s", c.names[0], c.names[len(c.names)-1])
	}
	s += " in the " + c.name + " field, with , - * /"
	if c.special != "" {
		s += " or " + strings.Join(strings.Split(c.special, ""), " ")
	}
	return s
}

// check returns the problem of one field, or "".
func (c cronField) check(f string) string {
	bad := fmt.Sprintf("%q in the %s field", f, c.name)
	if f == "?" {
		if strings.Contains(c.special, "?") {
			return ""
		}
		return bad
	}
	for _, part := range strings.Split(f, ",") {
		if !c.validPart(part) {
			return bad
		}
	}
	return ""
}

func (c cronField) validPart(part string) bool {
	base, step, hasStep := strings.Cut(part, "/")
	if hasStep {
		if n, err := strconv.Atoi(step); err != nil || n < 1 {
			return false
		}
	}
	switch {
	case base == "*":
		return true
	case strings.Contains(c.special, "L") && (base == "L" || (c.name == "day-of-week" && strings.HasSuffix(base, "L") && c.value(strings.TrimSuffix(base, "L")))):
		return !hasStep
	case strings.Contains(c.special, "W") && strings.HasSuffix(base, "W"):
		return !hasStep && (base == "LW" || c.value(strings.TrimSuffix(base, "W")))
	case strings.Contains(c.special, "#") && strings.Contains(base, "#"):
		d, n, _ := strings.Cut(base, "#")
		k, err := strconv.Atoi(n)
		return !hasStep && c.value(d) && err == nil && k >= 1 && k <= 5
	}
	lo, hi, isRange := strings.Cut(base, "-")
	if isRange {
		return c.value(lo) && c.value(hi)
	}
	return c.value(base)
}

// value reports whether v is a number in range or one of the names.
func (c cronField) value(v string) bool {
	for _, n := range c.names {
		if strings.EqualFold(v, n) {
			return true
		}
	}
	n, err := strconv.Atoi(v)
	return err == nil && n >= c.min && n <= c.max
}
