package provision

import "slices"

// LogRetentionDaysAllowed returns the retentions, in days, that CloudWatch
// Logs accepts.
func LogRetentionDaysAllowed() []int32 { return slices.Clone(logRetentionDays) }
