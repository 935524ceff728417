package subscription

import (
	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/validation"
)

// fieldLimit is the limit of a whole-number field of Spec, and the field's
// value in a Spec with defaults.
type fieldLimit struct {
	field string
	limit validation.Limit
	value func(Spec) int32
}

// limits are the values that the numeric fields of Spec allow, each written
// once, in the order Validate checks them: Limit gives them to a caller
// that checks a value before it is a Spec (Terraform's validators) and
// documents them.
var limits = []fieldLimit{
	{"Queue.VisibilityTimeoutSeconds", validation.Range{Min: 0, Max: 43200, Unit: "seconds", Hint: " (12 hours)"},
		func(s Spec) int32 { return *s.Queue.VisibilityTimeoutSeconds }},
	{"Queue.MessageRetentionSeconds", awsops.QueueRetentions, func(s Spec) int32 { return s.Queue.MessageRetentionSeconds }},
	{"Queue.ReceiveWaitTimeSeconds", validation.Range{Min: 0, Max: 20, Unit: "seconds"}, func(s Spec) int32 { return s.Queue.ReceiveWaitTimeSeconds }},
	{"Queue.MaxReceiveCount", validation.Range{Min: 1, Max: 1000, Unit: "receives", Hint: " before a message goes to the dead-letter queue"},
		func(s Spec) int32 { return s.Queue.MaxReceiveCount }},
	{"DeadLetter.MessageRetentionSeconds", awsops.QueueRetentions, func(s Spec) int32 { return s.DeadLetter.MessageRetentionSeconds }},
}

// Limit returns the values that a field of Spec allows
// ("Queue.MaxReceiveCount"), and whether it has a limit.
func Limit(field string) (validation.Limit, bool) {
	for _, l := range limits {
		if l.field == field {
			return l.limit, true
		}
	}
	return nil, false
}

// validateLimits reports the first field of s, a Spec with defaults, that
// is outside its limit.
func (s Spec) validateLimits() error {
	for _, l := range limits {
		if err := subscriptionSettings.Check(l.field, l.limit, int64(l.value(s))); err != nil {
			return err
		}
	}
	return nil
}
