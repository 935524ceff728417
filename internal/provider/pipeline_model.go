package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// PipelineResourceModel is the outbox_pipeline resource. Objects are
// pointers: nil (in a configuration that omits one) means the defaults of
// every setting in it; plans and states hold the objects with defaults
// whole, and alarms and relay.vpc_config nil when they are off.
//
// Tags of the settings: spec names the field of provision.Spec that the
// attribute sets, and how (settings.go: the setting's declaration); drift
// names the component (pipeline.Component...) whose
// value Read reports in the state when it finds that component changed out
// of band, so that the plan shows the value it will restore.
type PipelineResourceModel struct {
	ID   types.String `tfsdk:"id"`
	Name types.String `tfsdk:"name" spec:"Name"`

	Table        *TableModel        `tfsdk:"table"`
	Target       *TargetModel       `tfsdk:"target"`
	Relay        *RelayModel        `tfsdk:"relay"`
	Published    *PublishedModel    `tfsdk:"published"`
	Ordering     *OrderingModel     `tfsdk:"ordering"`
	PendingIndex *PendingIndexModel `tfsdk:"pending_index"`
	Reconciler   *ReconcilerModel   `tfsdk:"reconciler"`
	DeadLetter   *DeadLetterModel   `tfsdk:"dead_letter"`
	Alarms       *AlarmsModel       `tfsdk:"alarms"`
	ClaimCheck   *ClaimCheckModel   `tfsdk:"claim_check"`
	IAM          *IAMModel          `tfsdk:"iam"`
	MultiRegion  *MultiRegionModel  `tfsdk:"multi_region"`

	ForceDestroy types.Bool `tfsdk:"force_destroy" spec:"ForceDestroy"`

	Tags     types.Map      `tfsdk:"tags" spec:"Tags"`
	TagsAll  types.Map      `tfsdk:"tags_all"`
	Timeouts timeouts.Value `tfsdk:"timeouts"`

	TableName             types.String `tfsdk:"table_name"`
	TableARN              types.String `tfsdk:"table_arn"`
	StreamARN             types.String `tfsdk:"stream_arn"`
	StreamViewType        types.String `tfsdk:"stream_view_type"`
	PendingIndexARN       types.String `tfsdk:"pending_index_arn"`
	TTLAttributeInUse     types.String `tfsdk:"ttl_attribute_in_use"`
	TargetARN             types.String `tfsdk:"target_arn"`
	DeadLetterQueueURL    types.String `tfsdk:"dead_letter_queue_url"`
	DeadLetterQueueARN    types.String `tfsdk:"dead_letter_queue_arn"`
	RelayFunctionName     types.String `tfsdk:"relay_function_name"`
	RelayFunctionARN      types.String `tfsdk:"relay_function_arn"`
	RelayRoleARN          types.String `tfsdk:"relay_role_arn"`
	RelayLogGroup         types.String `tfsdk:"relay_log_group"`
	EventSourceMappingID  types.String `tfsdk:"event_source_mapping_uuid"`
	ReconcilerFunctionARN types.String `tfsdk:"reconciler_function_arn"`
	ReconcilerRoleARN     types.String `tfsdk:"reconciler_role_arn"`
	ReconcilerLogGroup    types.String `tfsdk:"reconciler_log_group"`
	SchedulerRoleARN      types.String `tfsdk:"scheduler_role_arn"`
	ScheduleARN           types.String `tfsdk:"schedule_arn"`
	RelayPackageSHA256    types.String `tfsdk:"relay_package_sha256"`
	AlarmARNs             types.Map    `tfsdk:"alarm_arns"`
	Writer                types.Object `tfsdk:"writer"`
}

// TableModel is the table object.
type TableModel struct {
	Existing      types.Bool   `tfsdk:"existing" spec:"Table.Existing"`
	Name          types.String `tfsdk:"name" spec:"Table.Name"`
	PartitionKey  types.String `tfsdk:"partition_key" spec:"Table.PartitionKey"`
	SortKey       types.String `tfsdk:"sort_key" spec:"Table.SortKey"`
	SortKeyPrefix types.String `tfsdk:"sort_key_prefix" spec:"Table.SortKeyPrefix"`
	TTLAttribute  types.String `tfsdk:"ttl_attribute" spec:"Table.TTLAttribute"`

	KMSKeyARN           types.String `tfsdk:"kms_key_arn" spec:"Table.KMSKeyARN" drift:"table"`
	DeletionProtection  types.Bool   `tfsdk:"deletion_protection" spec:"Table.DeletionProtection" drift:"table"`
	PointInTimeRecovery types.Bool   `tfsdk:"point_in_time_recovery" spec:"Table.PointInTimeRecovery" drift:"table"`
	ReplicaRegions      types.Set    `tfsdk:"replica_regions" spec:"Table.ReplicaRegions" drift:"table"`
}

// TargetModel is the target object.
type TargetModel struct {
	EventBus types.String `tfsdk:"event_bus" spec:"Target.EventBus"`
	TopicARN types.String `tfsdk:"topic_arn" spec:"Target.TopicARN"`
	QueueARN types.String `tfsdk:"queue_arn" spec:"Target.QueueARN"`
	Envelope types.String `tfsdk:"envelope" spec:"Target.Envelope"`
}

// RelayModel is the relay object: the relay function and its event source
// mapping.
type RelayModel struct {
	BatchSize               types.Int64  `tfsdk:"batch_size" spec:"Mapping.BatchSize" drift:"event_source_mapping"`
	BatchingWindowSeconds   types.Int64  `tfsdk:"batching_window_seconds" spec:"Mapping.MaximumBatchingWindowSeconds" drift:"event_source_mapping"`
	ParallelizationFactor   types.Int64  `tfsdk:"parallelization_factor" spec:"Mapping.ParallelizationFactor" drift:"event_source_mapping"`
	MaximumRetryAttempts    types.Int64  `tfsdk:"maximum_retry_attempts" spec:"Mapping.MaximumRetryAttempts" drift:"event_source_mapping"`
	MaximumRecordAgeSeconds types.Int64  `tfsdk:"maximum_record_age_seconds" spec:"Mapping.MaximumRecordAgeSeconds" drift:"event_source_mapping"`
	BisectOnError           types.Bool   `tfsdk:"bisect_on_error" spec:"Mapping.BisectBatchOnFunctionError" drift:"event_source_mapping"`
	MemorySize              types.Int64  `tfsdk:"memory_size" spec:"Relay.MemorySize" drift:"relay_function"`
	Timeout                 types.Int64  `tfsdk:"timeout" spec:"Relay.Timeout" drift:"relay_function"`
	Architecture            types.String `tfsdk:"architecture" spec:"Architecture"`
	LogRetentionDays        types.Int64  `tfsdk:"log_retention_days" spec:"Relay.LogRetentionDays" drift:"relay_log_group"`
	ReservedConcurrency     types.Int64  `tfsdk:"reserved_concurrency" spec:"Relay.ReservedConcurrency" drift:"relay_function"`

	TracingMode types.String         `tfsdk:"tracing_mode" spec:"Controls.TracingMode" drift:"relay_function"`
	KMSKeyARN   types.String         `tfsdk:"kms_key_arn" spec:"Controls.KMSKeyARN"`
	Logging     *RelayLoggingModel   `tfsdk:"logging"`
	VPCConfig   *RelayVPCConfigModel `tfsdk:"vpc_config"`
}

// RelayLoggingModel is the relay.logging object.
type RelayLoggingModel struct {
	LogFormat           types.String `tfsdk:"log_format" spec:"Controls.LogFormat" drift:"relay_function"`
	ApplicationLogLevel types.String `tfsdk:"application_log_level" spec:"Controls.ApplicationLogLevel" drift:"relay_function"`
	SystemLogLevel      types.String `tfsdk:"system_log_level" spec:"Controls.SystemLogLevel" drift:"relay_function"`
}

// RelayVPCConfigModel is the relay.vpc_config object.
type RelayVPCConfigModel struct {
	SubnetIDs        types.Set `tfsdk:"subnet_ids" spec:"Controls.SubnetIDs"`
	SecurityGroupIDs types.Set `tfsdk:"security_group_ids" spec:"Controls.SecurityGroupIDs"`
}

// PublishedModel is the published object.
type PublishedModel struct {
	Action  types.String `tfsdk:"action" spec:"PublishedAction"`
	TTLDays types.Int64  `tfsdk:"ttl_days" spec:"PublishedTTL,days"`
}

// OrderingModel is the ordering object.
type OrderingModel struct {
	Enabled types.Bool `tfsdk:"enabled" spec:"Ordered"`
}

// PendingIndexModel is the pending_index object.
type PendingIndexModel struct {
	Name    types.String `tfsdk:"name" spec:"Table.PendingIndexName"`
	Shards  types.Int64  `tfsdk:"shards" spec:"Table.PendingShards"`
	Enabled types.Bool   `tfsdk:"enabled" spec:"Table.PendingIndexDisabled,not"`
}

// ReconcilerModel is the reconciler object.
type ReconcilerModel struct {
	Enabled            types.Bool   `tfsdk:"enabled" spec:"Reconciler.Disabled,not"`
	ScheduleExpression types.String `tfsdk:"schedule_expression" spec:"Reconciler.ScheduleExpression" drift:"schedule"`
	MinAgeSeconds      types.Int64  `tfsdk:"min_age_seconds" spec:"Reconciler.MinAge,seconds"`
	MemorySize         types.Int64  `tfsdk:"memory_size" spec:"Reconciler.Function.MemorySize" drift:"reconciler_function"`
	Timeout            types.Int64  `tfsdk:"timeout" spec:"Reconciler.Function.Timeout" drift:"reconciler_function"`
	LogRetentionDays   types.Int64  `tfsdk:"log_retention_days" spec:"Reconciler.Function.LogRetentionDays" drift:"reconciler_log_group"`

	ScheduleTimezone          types.String `tfsdk:"schedule_timezone" spec:"Reconciler.ScheduleTimezone" drift:"schedule"`
	FlexibleTimeWindowMinutes types.Int64  `tfsdk:"flexible_time_window_minutes" spec:"Reconciler.FlexibleTimeWindowMinutes" drift:"schedule"`
	ScheduleGroup             types.String `tfsdk:"schedule_group" spec:"Reconciler.ScheduleGroup"`
	MaxWorkers                types.Int64  `tfsdk:"max_workers" spec:"Reconciler.MaxWorkers"`
	MaxEventsPerSecond        types.Int64  `tfsdk:"max_events_per_second" spec:"Reconciler.MaxEventsPerSecond"`
}

// DeadLetterModel is the dead_letter object.
type DeadLetterModel struct {
	MessageRetentionSeconds types.Int64  `tfsdk:"message_retention_seconds" spec:"DeadLetterQueue.MessageRetentionSeconds" drift:"dead_letter_queue"`
	KMSMasterKeyID          types.String `tfsdk:"kms_master_key_id" spec:"DeadLetterQueue.KMSMasterKeyID" drift:"dead_letter_queue"`
}

// MultiRegionModel is the multi_region object.
type MultiRegionModel struct {
	Regions               types.List  `tfsdk:"regions" spec:"MultiRegion.Regions"`
	TakeoverAfterSeconds  types.Int64 `tfsdk:"takeover_after_seconds" spec:"MultiRegion.TakeoverAfter,seconds"`
	TakeoverSettleSeconds types.Int64 `tfsdk:"takeover_settle_seconds" spec:"MultiRegion.TakeoverSettle,seconds"`
}

// AlarmsModel is the alarms object.
type AlarmsModel struct {
	Enabled                          types.Bool   `tfsdk:"enabled" spec:"Alarms.Enabled"`
	SNSTopicARN                      types.String `tfsdk:"sns_topic_arn" spec:"Alarms.SNSTopicARN"`
	RelayErrorsThreshold             types.Int64  `tfsdk:"relay_errors_threshold" spec:"Alarms.RelayErrorsThreshold"`
	IteratorAgeThresholdSeconds      types.Int64  `tfsdk:"iterator_age_threshold_seconds" spec:"Alarms.IteratorAgeThresholdSeconds"`
	OldestPendingAgeThresholdSeconds types.Int64  `tfsdk:"oldest_pending_age_threshold_seconds" spec:"Alarms.OldestPendingAgeThresholdSeconds"`
	EvaluationPeriods                types.Int64  `tfsdk:"evaluation_periods" spec:"Alarms.EvaluationPeriods"`
	TreatMissingData                 types.String `tfsdk:"treat_missing_data" spec:"Alarms.TreatMissingData"`
}

// IAMModel is the iam object.
type IAMModel struct {
	PermissionsBoundary types.String `tfsdk:"permissions_boundary" spec:"IAM.PermissionsBoundary"`
	Path                types.String `tfsdk:"path" spec:"IAM.Path"`
}
