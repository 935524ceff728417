package provision

import (
	"regexp"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
)

var scheduleGroupPattern = regexp.MustCompile(`^[0-9a-zA-Z-_.]{1,64}$`)

// validateProvisioning checks the settings of the safety and control
// features: the pending index switch, the table's key, the functions'
// controls, the roles' IAM settings and the schedule's time zone, window
// and group.
func (s Spec) validateProvisioning() error {
	if s.Table.PendingIndexDisabled {
		switch {
		case s.Table.Existing:
			return invalidAgainst("Table.PendingIndexDisabled", []string{"Table.Existing"}, "keep the pending index on an adopted table: the application's own items would make a scan of it cost as much as the table", "is off for an adopted table")
		case s.PublishedAction != config.ActionDelete:
			return invalidAgainst("Table.PendingIndexDisabled", []string{"PublishedAction"}, `set the published action to "delete", so that the table holds only undelivered items, or keep the pending index`, "is off with the published action %q", s.PublishedAction)
		}
	}
	switch k := s.Table.KMSKeyARN; {
	case k != "" && s.Table.Existing:
		return invalidAgainst("Table.KMSKeyARN", []string{"Table.Existing"}, "remove it: an adopted table keeps the encryption its owner chose", "is set for an adopted table")
	case k != "" && !kmsKeyARNPattern.MatchString(k):
		return invalid("Table.KMSKeyARN", `use a KMS key ARN such as "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"`, "is %q", k)
	}
	if err := s.Controls.validate(); err != nil {
		return err
	}
	if err := s.IAM.validate(); err != nil {
		return err
	}
	if !s.Reconciler.Disabled {
		return s.Reconciler.validateSchedule()
	}
	return nil
}

// validateSchedule checks the time zone and group of the schedule as
// EventBridge Scheduler does (its flexible window has a limit).
func (r ReconcilerSpec) validateSchedule() error {
	if _, err := time.LoadLocation(r.ScheduleTimezone); err != nil || r.ScheduleTimezone == "Local" {
		return invalid("Reconciler.ScheduleTimezone", `use an IANA time zone such as "UTC" or "Europe/Paris"`, "is %q", r.ScheduleTimezone)
	}
	if !scheduleGroupPattern.MatchString(r.ScheduleGroup) {
		return invalid("Reconciler.ScheduleGroup", "use 1 to 64 letters, digits, '-', '_' or '.', naming an existing schedule group", "is %q", r.ScheduleGroup)
	}
	return nil
}
