package provision

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/validation"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Validation patterns, from the limits of the services involved.
var (
	// Lambda function names allow [A-Za-z0-9_-]; IAM role names are a
	// superset. MaxNameLength leaves room for the longest suffix.
	namePattern      = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
	tableNamePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{3,255}$`)
	topicARNPattern  = regexp.MustCompile(`^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$`)
)

// MaxNameLength is the longest Spec.Name: the longest component name
// (Name + "-reconciler") must fit the 64 characters of Lambda and IAM.
const MaxNameLength = 64 - len(suffixReconciler)

// logRetentionDays are the values CloudWatch Logs accepts.
var logRetentionDays = []int32{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

// ValidationError names the field of a Spec at fault and the fix; its
// Field is the path of the field, as in Go ("Mapping.BatchSize").
type ValidationError = validation.Error

// pipelineSettings opens the message of every ValidationError of a Spec.
const pipelineSettings validation.Subject = "outbox pipeline"

// invalidAgainst is invalid for a check of field against related fields.
func invalidAgainst(field string, related []string, fix, problem string, args ...any) error {
	return pipelineSettings.InvalidAgainst(field, related, fix, problem, args...)
}

func invalid(field, fix, problem string, args ...any) error {
	return pipelineSettings.Invalid(field, fix, problem, args...)
}

// Validate reports the problems of s that can be found without AWS, each
// a *ValidationError, joined (errors.Join): every value outside its limit
// (limits.go), then the first problem of each group of settings (name,
// table, target, ...), one error per field. It applies the defaults first, so a
// Spec with only a Name is valid.
func (s Spec) Validate() error {
	s = s.WithDefaults()
	errs := s.validateLimits()
	for _, check := range []func() error{
		s.validateName, s.validateTable, s.validateTarget, s.validatePublished,
		s.validateReconciler, s.validateAlarms, s.validateProvisioning, s.validateTags, s.validateClaimCheck, s.validateMultiRegion,
	} {
		if err := check(); err != nil && !reported(errs, err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// reported reports whether errs has an error of the field that err is
// about: one error per field, the limit's first.
func reported(errs []error, err error) bool {
	var ve *ValidationError
	if !errors.As(err, &ve) {
		return false
	}
	return slices.ContainsFunc(errs, func(e error) bool {
		var other *ValidationError
		return errors.As(e, &other) && other.Field == ve.Field
	})
}

func (s Spec) validateName() error {
	switch {
	case s.Name == "":
		return invalid("Name", "set a name such as \"orders\"; it prefixes every component", "is empty")
	case len(s.Name) > MaxNameLength:
		return invalid("Name", fmt.Sprintf("use at most %d characters", MaxNameLength), "is %d characters long", len(s.Name))
	case !namePattern.MatchString(s.Name):
		return invalid("Name", "use letters, digits, hyphens and underscores, starting with a letter or digit", "%q has characters that Lambda and IAM names do not allow", s.Name)
	}
	return nil
}

func (s Spec) validatePublished() error {
	if *s.PublishedTTL < 0 {
		return invalid("PublishedTTL", "use a number of days of 0 (keep published items forever) or more, such as 30 days (720h)", "is negative (%s, %d days)", *s.PublishedTTL, int64(*s.PublishedTTL/(24*time.Hour)))
	}
	if *s.PublishedTTL > 0 && *s.PublishedTTL < time.Second {
		return invalid("PublishedTTL", "use whole seconds: the TTL attribute holds Unix seconds", "is %s", *s.PublishedTTL)
	}
	return nil
}

func (s Spec) validateReconciler() error {
	if s.Reconciler.Disabled {
		return nil
	}
	return s.Reconciler.validateOverlap()
}

func (s Spec) validateTags() error {
	return pipelineSettings.Tags("Tags", s.Tags)
}

// validateOverlap rejects a rate schedule whose interval is shorter than
// the reconciler's timeout: a run could then start before the previous one
// ended, and overlapping runs republish the same items and compete for the
// same capacity. An interval equal to the timeout cannot overlap, since a
// run ends at its timeout; the defaults (rate(5 minutes), 300 seconds) are
// such a pair. Cron expressions are not checked.
func (r ReconcilerSpec) validateOverlap() error {
	m := rateExpression.FindStringSubmatch(r.ScheduleExpression)
	if m == nil {
		return nil
	}
	// The pattern allows only digits: a parse error means more than an
	// int64 holds, far longer than any timeout.
	n, err := strconv.ParseInt(m[1], 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		n = math.MaxInt64
	}
	if n < 1 {
		return invalid("Reconciler.ScheduleExpression", `use a rate of at least 1, such as "rate(5 minutes)"`, "is %q", r.ScheduleExpression)
	}
	unit := rateUnitSeconds(m[2])
	timeout := int64(r.Function.Timeout)
	if n >= (timeout+unit-1)/unit {
		// n*unit >= timeout, without overflowing.
		return nil
	}
	interval := n * unit
	return invalidAgainst("Reconciler.ScheduleExpression", []string{"Reconciler.Function.Timeout"},
		fmt.Sprintf(`use an interval of at least the timeout, such as "rate(%d minutes)", or lower the reconciler's timeout to at most %d seconds`, (timeout+59)/60, interval),
		"is %q, every %d seconds, shorter than the reconciler's timeout (%d seconds): a run could start before the previous one ends",
		r.ScheduleExpression, interval, timeout)
}

func (s Spec) validateTable() error {
	if s.Table.Existing && strings.TrimSpace(s.Table.Name) == "" {
		return invalid("Table.Name", "name the existing table to adopt", "is empty")
	}
	if err := s.validateReplicas(""); err != nil {
		return err
	}
	t := s.OutboxTable()
	if !tableNamePattern.MatchString(t.Name) {
		return invalid("Table.Name", "use 3 to 255 letters, digits, '_', '-' or '.'", "is %q", t.Name)
	}
	if t.SortKey == t.PartitionKey {
		return invalidAgainst("Table.SortKey", []string{"Table.PartitionKey"}, "use two different key attribute names", "equals the partition key (%q)", t.PartitionKey)
	}
	if err := t.Validate(); err != nil {
		// The fields of outbox.Table are those of TableSpec.
		if ce := (*outbox.ConfigError)(nil); errors.As(err, &ce) {
			return invalid("Table."+ce.Field, ce.Fix, "%s", ce.Problem)
		}
		return err
	}
	for _, a := range []struct{ field, name string }{
		{"Table.PartitionKey", t.PartitionKey}, {"Table.SortKey", t.SortKey},
		{"Table.TTLAttribute", t.TTLAttribute}, {"Table.PendingIndexName", t.PendingIndexName},
	} {
		if len(a.name) > 255 || strings.ContainsAny(a.name, " \t\n") {
			return invalid(a.field, "use 1 to 255 characters without spaces", "is %q", a.name)
		}
	}
	if t.TTLAttribute == t.PartitionKey || t.TTLAttribute == t.SortKey {
		return invalid("Table.TTLAttribute", "use an attribute that is not a key: DynamoDB would delete items by their key's value, and the relay could not set it", "%q is a key attribute of the table", t.TTLAttribute)
	}
	if len(t.PendingIndexName) < 3 || !tableNamePattern.MatchString(t.PendingIndexName) {
		return invalid("Table.PendingIndexName", "use 3 to 255 letters, digits, '_', '-' or '.'", "is %q", t.PendingIndexName)
	}
	return nil
}

func (s Spec) validateTarget() error {
	if err := s.Target.Validate(pipelineSettings, "Target"); err != nil || !s.Ordered {
		return err
	}
	if !s.Target.FIFO() {
		return invalidAgainst("Ordered", []string{"Target"}, "publish to an SNS FIFO topic or an SQS FIFO queue (an ARN ending in .fifo), or turn ordering off",
			"is on while the target is %s, which does not keep an order per key", s.Target.Describe())
	}
	if ce := (*outbox.ConfigError)(nil); errors.As(s.OutboxTable().OrderingProblem(), &ce) {
		return invalidAgainst("Table."+ce.Field, []string{"Ordered"}, ce.Fix, "%s", ce.Problem)
	}
	return nil
}
