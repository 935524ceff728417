package provision

import (
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// WithDefaults returns s with every unset field set to its default.
func (s Spec) WithDefaults() Spec {
	t := s.OutboxTable()
	s.Table.PartitionKey, s.Table.SortKey, s.Table.SortKeyPrefix = t.PartitionKey, t.SortKey, t.SortKeyPrefix
	s.Table.TTLAttribute, s.Table.PendingIndexName, s.Table.PendingShards = t.TTLAttribute, t.PendingIndexName, t.PendingShards
	s.Table.Name = t.Name
	if s.Table.DeletionProtection == nil {
		s.Table.DeletionProtection = ptr(true)
	}
	if s.Table.PointInTimeRecovery == nil {
		s.Table.PointInTimeRecovery = ptr(true)
	}
	if s.Target.Type == "" {
		s.Target.Type = config.TargetEventBridge
	}
	if s.Target.Type == config.TargetEventBridge && s.Target.EventBus == "" {
		s.Target.EventBus = config.DefaultEventBus
	}
	if s.PublishedAction == "" {
		s.PublishedAction = config.ActionMark
	}
	if s.PublishedTTL == nil {
		d := config.DefaultPublishedTTL
		s.PublishedTTL = &d
	}
	if s.Architecture == "" {
		s.Architecture = DefaultArchitecture
	}
	s.Relay = s.Relay.withDefaults(DefaultRelayMemory, DefaultRelayTimeout)
	s.Reconciler.Function = s.Reconciler.Function.withDefaults(DefaultReconcilerMemory, DefaultReconcilerTimeout)
	m := &s.Mapping
	if m.BatchSize == 0 {
		m.BatchSize = DefaultBatchSize
	}
	if m.ParallelizationFactor == 0 {
		m.ParallelizationFactor = DefaultParallelizationFactor
	}
	if m.MaximumRetryAttempts == nil {
		m.MaximumRetryAttempts = ptr(int32(DefaultMaximumRetryAttempts))
	}
	if m.MaximumRecordAgeSeconds == nil {
		m.MaximumRecordAgeSeconds = ptr(int32(DefaultMaximumRecordAgeSeconds))
	}
	if m.BisectBatchOnFunctionError == nil {
		m.BisectBatchOnFunctionError = ptr(DefaultBisectBatchOnError)
	}
	if s.DeadLetterQueue.MessageRetentionSeconds == 0 {
		s.DeadLetterQueue.MessageRetentionSeconds = DefaultQueueRetentionSeconds
	}
	if s.Reconciler.ScheduleExpression == "" {
		s.Reconciler.ScheduleExpression = DefaultScheduleExpression
	}
	if s.Reconciler.MinAge == 0 {
		s.Reconciler.MinAge = config.DefaultReconcileMinAge
	}
	if s.Reconciler.ScheduleTimezone == "" {
		s.Reconciler.ScheduleTimezone = DefaultScheduleTimezone
	}
	if s.Reconciler.ScheduleGroup == "" {
		s.Reconciler.ScheduleGroup = ScheduleGroup
	}
	s.Alarms = s.Alarms.withDefaults()
	s.Controls = s.Controls.withDefaults()
	if s.IAM.Path == "" {
		s.IAM.Path = "/"
	}
	return s
}

func (f FunctionSpec) withDefaults(memory, timeout int32) FunctionSpec {
	if f.MemorySize == 0 {
		f.MemorySize = memory
	}
	if f.Timeout == 0 {
		f.Timeout = timeout
	}
	if f.LogRetentionDays == 0 {
		f.LogRetentionDays = DefaultLogRetentionDays
	}
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
