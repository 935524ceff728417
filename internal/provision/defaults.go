package provision

import (
	"cmp"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// WithDefaults returns s with every unset field set to its default.
func (s Spec) WithDefaults() Spec {
	t := s.OutboxTable()
	s.Table.PartitionKey, s.Table.SortKey, s.Table.SortKeyPrefix = t.PartitionKey, t.SortKey, t.SortKeyPrefix
	s.Table.TTLAttribute, s.Table.PendingIndexName, s.Table.PendingShards = t.TTLAttribute, t.PendingIndexName, t.PendingShards
	s.Table.Name = t.Name
	s.Table.DeletionProtection = cmp.Or(s.Table.DeletionProtection, ptr(true))
	s.Table.PointInTimeRecovery = cmp.Or(s.Table.PointInTimeRecovery, ptr(true))
	s.Target = s.Target.WithDefaults()
	s.PublishedAction = cmp.Or(s.PublishedAction, config.ActionMark)
	s.PublishedTTL = cmp.Or(s.PublishedTTL, ptr(config.DefaultPublishedTTL))
	s.Architecture = cmp.Or(s.Architecture, DefaultArchitecture)
	s.Relay = s.Relay.withDefaults(DefaultRelayMemory, DefaultRelayTimeout)
	s.Reconciler.Function = s.Reconciler.Function.withDefaults(DefaultReconcilerMemory, DefaultReconcilerTimeout)
	m := &s.Mapping
	m.BatchSize = cmp.Or(m.BatchSize, DefaultBatchSize)
	m.ParallelizationFactor = cmp.Or(m.ParallelizationFactor, DefaultParallelizationFactor)
	m.MaximumRetryAttempts = cmp.Or(m.MaximumRetryAttempts, ptr(int32(DefaultMaximumRetryAttempts)))
	m.MaximumRecordAgeSeconds = cmp.Or(m.MaximumRecordAgeSeconds, ptr(int32(DefaultMaximumRecordAgeSeconds)))
	m.BisectBatchOnFunctionError = cmp.Or(m.BisectBatchOnFunctionError, ptr(DefaultBisectBatchOnError))
	s.DeadLetterQueue.MessageRetentionSeconds = cmp.Or(s.DeadLetterQueue.MessageRetentionSeconds, DefaultQueueRetentionSeconds)
	s.Reconciler.ScheduleExpression = cmp.Or(s.Reconciler.ScheduleExpression, DefaultScheduleExpression)
	s.Reconciler.MinAge = cmp.Or(s.Reconciler.MinAge, config.DefaultReconcileMinAge)
	s.Reconciler.ScheduleTimezone = cmp.Or(s.Reconciler.ScheduleTimezone, DefaultScheduleTimezone)
	s.Reconciler.ScheduleGroup = cmp.Or(s.Reconciler.ScheduleGroup, ScheduleGroup)
	s.Reconciler.MaxWorkers = cmp.Or(s.Reconciler.MaxWorkers, DefaultReconcilerMaxWorkers)
	s.Alarms = s.Alarms.withDefaults()
	s.MultiRegion = s.MultiRegion.withDefaults()
	s.ClaimCheck = s.ClaimCheck.withDefaults(s.Name)
	s.Controls = s.Controls.withDefaults()
	s.IAM.Path = cmp.Or(s.IAM.Path, "/")
	return s
}

func (f FunctionSpec) withDefaults(memory, timeout int32) FunctionSpec {
	f.MemorySize = cmp.Or(f.MemorySize, memory)
	f.Timeout = cmp.Or(f.Timeout, timeout)
	f.LogRetentionDays = cmp.Or(f.LogRetentionDays, DefaultLogRetentionDays)
	return f
}

func ptr[T any](v T) *T { return &v }

// OutboxTable returns the record contract of the pipeline's table, with
// defaults applied. An adopted table is in the shared layout.
func (s Spec) OutboxTable() outbox.Table {
	t := outbox.Table{
		Name:             s.Table.Name,
		Layout:           outbox.LayoutDedicated,
		PartitionKey:     s.Table.PartitionKey,
		SortKey:          s.Table.SortKey,
		SortKeyPrefix:    s.Table.SortKeyPrefix,
		TTLAttribute:     s.Table.TTLAttribute,
		PendingIndexName: s.Table.PendingIndexName,
		PendingShards:    s.Table.PendingShards,
	}
	if s.Table.Existing {
		t.Layout = outbox.LayoutShared
	} else if t.Name == "" && s.Name != "" {
		t.Name = NamesFor(s.Name).Table
	}
	return t.WithDefaults()
}
