package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// PipelineResourceModel is the outbox_pipeline resource. Blocks are pointers:
// an absent block is nil and means the defaults of every setting in it.
type PipelineResourceModel struct {
	ID   types.String `tfsdk:"id"`
	Name types.String `tfsdk:"name"`

	Table        *TableModel        `tfsdk:"table"`
	Target       *TargetModel       `tfsdk:"target"`
	Relay        *RelayModel        `tfsdk:"relay"`
	Published    *PublishedModel    `tfsdk:"published"`
	PendingIndex *PendingIndexModel `tfsdk:"pending_index"`
	Reconciler   *ReconcilerModel   `tfsdk:"reconciler"`
	DeadLetter   *DeadLetterModel   `tfsdk:"dead_letter"`
	Alarms       *AlarmsModel       `tfsdk:"alarms"`
	IAM          *IAMModel          `tfsdk:"iam"`

	ForceDestroy types.Bool `tfsdk:"force_destroy" spec:"ForceDestroy"`

	Tags     types.Map      `tfsdk:"tags"`
	TagsAll  types.Map      `tfsdk:"tags_all"`
	Timeouts timeouts.Value `tfsdk:"timeouts"`

	TableName             types.String `tfsdk:"table_name"`
	TableARN              types.String `tfsdk:"table_arn"`
	StreamARN             types.String `tfsdk:"stream_arn"`
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
}

// TableModel is the table block.
type TableModel struct {
	Existing      types.Bool   `tfsdk:"existing"`
	Name          types.String `tfsdk:"name"`
	PartitionKey  types.String `tfsdk:"partition_key"`
	SortKey       types.String `tfsdk:"sort_key"`
	SortKeyPrefix types.String `tfsdk:"sort_key_prefix"`
	TTLAttribute  types.String `tfsdk:"ttl_attribute"`

	KMSKeyARN           types.String `tfsdk:"kms_key_arn" spec:"Table.KMSKeyARN"`
	DeletionProtection  types.Bool   `tfsdk:"deletion_protection" spec:"Table.DeletionProtection"`
	PointInTimeRecovery types.Bool   `tfsdk:"point_in_time_recovery" spec:"Table.PointInTimeRecovery"`
}

// TargetModel is the target block.
type TargetModel struct {
	EventBus types.String `tfsdk:"event_bus"`
	TopicARN types.String `tfsdk:"topic_arn"`
}

// RelayModel is the relay block: the relay function and its event source
// mapping.
type RelayModel struct {
	BatchSize               types.Int64  `tfsdk:"batch_size"`
	BatchingWindowSeconds   types.Int64  `tfsdk:"batching_window_seconds"`
	ParallelizationFactor   types.Int64  `tfsdk:"parallelization_factor"`
	MaximumRetryAttempts    types.Int64  `tfsdk:"maximum_retry_attempts"`
	MaximumRecordAgeSeconds types.Int64  `tfsdk:"maximum_record_age_seconds"`
	BisectOnError           types.Bool   `tfsdk:"bisect_on_error"`
	MemorySize              types.Int64  `tfsdk:"memory_size"`
	Timeout                 types.Int64  `tfsdk:"timeout"`
	Architecture            types.String `tfsdk:"architecture"`
	LogRetentionDays        types.Int64  `tfsdk:"log_retention_days"`
	ReservedConcurrency     types.Int64  `tfsdk:"reserved_concurrency"`

	TracingMode types.String         `tfsdk:"tracing_mode" spec:"Controls.TracingMode"`
	KMSKeyARN   types.String         `tfsdk:"kms_key_arn" spec:"Controls.KMSKeyARN"`
	Logging     *RelayLoggingModel   `tfsdk:"logging"`
	VPCConfig   *RelayVPCConfigModel `tfsdk:"vpc_config"`
}

// RelayLoggingModel is the relay.logging block.
type RelayLoggingModel struct {
	LogFormat           types.String `tfsdk:"log_format" spec:"Controls.LogFormat"`
	ApplicationLogLevel types.String `tfsdk:"application_log_level" spec:"Controls.ApplicationLogLevel"`
	SystemLogLevel      types.String `tfsdk:"system_log_level" spec:"Controls.SystemLogLevel"`
}

// RelayVPCConfigModel is the relay.vpc_config block.
type RelayVPCConfigModel struct {
	SubnetIDs        types.Set `tfsdk:"subnet_ids" spec:"Controls.SubnetIDs"`
	SecurityGroupIDs types.Set `tfsdk:"security_group_ids" spec:"Controls.SecurityGroupIDs"`
}

// PublishedModel is the published block.
type PublishedModel struct {
	Action  types.String `tfsdk:"action"`
	TTLDays types.Int64  `tfsdk:"ttl_days"`
}

// PendingIndexModel is the pending_index block.
type PendingIndexModel struct {
	Name    types.String `tfsdk:"name"`
	Shards  types.Int64  `tfsdk:"shards"`
	Enabled types.Bool   `tfsdk:"enabled" spec:"Table.PendingIndexDisabled"`
}

// ReconcilerModel is the reconciler block.
type ReconcilerModel struct {
	Enabled            types.Bool   `tfsdk:"enabled"`
	ScheduleExpression types.String `tfsdk:"schedule_expression"`
	MinAgeSeconds      types.Int64  `tfsdk:"min_age_seconds"`

	ScheduleTimezone          types.String `tfsdk:"schedule_timezone" spec:"Reconciler.ScheduleTimezone"`
	FlexibleTimeWindowMinutes types.Int64  `tfsdk:"flexible_time_window_minutes" spec:"Reconciler.FlexibleTimeWindowMinutes"`
	ScheduleGroup             types.String `tfsdk:"schedule_group" spec:"Reconciler.ScheduleGroup"`
	MemorySize                types.Int64  `tfsdk:"memory_size"`
	Timeout                   types.Int64  `tfsdk:"timeout"`
	LogRetentionDays          types.Int64  `tfsdk:"log_retention_days"`
}

// DeadLetterModel is the dead_letter block.
type DeadLetterModel struct {
	MessageRetentionSeconds types.Int64  `tfsdk:"message_retention_seconds"`
	KMSMasterKeyID          types.String `tfsdk:"kms_master_key_id"`
}

// AlarmsModel is the alarms block.
type AlarmsModel struct {
	Enabled                          types.Bool   `tfsdk:"enabled"`
	SNSTopicARN                      types.String `tfsdk:"sns_topic_arn"`
	RelayErrorsThreshold             types.Int64  `tfsdk:"relay_errors_threshold"`
	IteratorAgeThresholdSeconds      types.Int64  `tfsdk:"iterator_age_threshold_seconds"`
	OldestPendingAgeThresholdSeconds types.Int64  `tfsdk:"oldest_pending_age_threshold_seconds"`
	EvaluationPeriods                types.Int64  `tfsdk:"evaluation_periods"`
	TreatMissingData                 types.String `tfsdk:"treat_missing_data"`
}

// IAMModel is the iam block.
type IAMModel struct {
	PermissionsBoundary types.String `tfsdk:"permissions_boundary" spec:"IAM.PermissionsBoundary"`
	Path                types.String `tfsdk:"path" spec:"IAM.Path"`
}
