package provider

import (
	"context"
	"reflect"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// This file freezes the past: the outbox_pipeline states of schema versions
// 0 and 1, which had blocks. Nothing here follows today's schema; a
// setting added, renamed or removed today leaves it as it is.
//
// Both versions grew without a version change, so each model is the union
// of what its states may hold, and an attribute that a state lacks reads as
// null: force_destroy and the table's deletion_protection,
// point_in_time_recovery and kms_key_arn came with the same change, later
// than the first states of either version.

// pipelineModelV0 is a state of version 0: the settings' blocks (null when
// omitted) and the computed attributes.
type pipelineModelV0 struct {
	ID   types.String `tfsdk:"id"`
	Name types.String `tfsdk:"name"`

	Table        *tableModelV0        `tfsdk:"table"`
	Target       *targetModelV0       `tfsdk:"target"`
	Relay        *relayModelV0        `tfsdk:"relay"`
	Published    *publishedModelV0    `tfsdk:"published"`
	PendingIndex *pendingIndexModelV0 `tfsdk:"pending_index"`
	Reconciler   *reconcilerModelV0   `tfsdk:"reconciler"`
	DeadLetter   *deadLetterModelV0   `tfsdk:"dead_letter"`
	Alarms       *alarmsModelV0       `tfsdk:"alarms"`
	IAM          *iamModelV0          `tfsdk:"iam"`

	ForceDestroy types.Bool `tfsdk:"force_destroy"`

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

// pipelineModelV1 is a state of version 1: version 0 and the computed
// writer object.
type pipelineModelV1 struct {
	pipelineModelV0
	Writer types.Object `tfsdk:"writer"`
}

type tableModelV0 struct {
	Existing            types.Bool   `tfsdk:"existing"`
	Name                types.String `tfsdk:"name"`
	PartitionKey        types.String `tfsdk:"partition_key"`
	SortKey             types.String `tfsdk:"sort_key"`
	SortKeyPrefix       types.String `tfsdk:"sort_key_prefix"`
	TTLAttribute        types.String `tfsdk:"ttl_attribute"`
	KMSKeyARN           types.String `tfsdk:"kms_key_arn"`
	DeletionProtection  types.Bool   `tfsdk:"deletion_protection"`
	PointInTimeRecovery types.Bool   `tfsdk:"point_in_time_recovery"`
}

type targetModelV0 struct {
	EventBus types.String `tfsdk:"event_bus"`
	TopicARN types.String `tfsdk:"topic_arn"`
}

type relayModelV0 struct {
	BatchSize               types.Int64            `tfsdk:"batch_size"`
	BatchingWindowSeconds   types.Int64            `tfsdk:"batching_window_seconds"`
	ParallelizationFactor   types.Int64            `tfsdk:"parallelization_factor"`
	MaximumRetryAttempts    types.Int64            `tfsdk:"maximum_retry_attempts"`
	MaximumRecordAgeSeconds types.Int64            `tfsdk:"maximum_record_age_seconds"`
	BisectOnError           types.Bool             `tfsdk:"bisect_on_error"`
	MemorySize              types.Int64            `tfsdk:"memory_size"`
	Timeout                 types.Int64            `tfsdk:"timeout"`
	Architecture            types.String           `tfsdk:"architecture"`
	LogRetentionDays        types.Int64            `tfsdk:"log_retention_days"`
	ReservedConcurrency     types.Int64            `tfsdk:"reserved_concurrency"`
	TracingMode             types.String           `tfsdk:"tracing_mode"`
	KMSKeyARN               types.String           `tfsdk:"kms_key_arn"`
	Logging                 *relayLoggingModelV0   `tfsdk:"logging"`
	VPCConfig               *relayVPCConfigModelV0 `tfsdk:"vpc_config"`
}

type relayLoggingModelV0 struct {
	LogFormat           types.String `tfsdk:"log_format"`
	ApplicationLogLevel types.String `tfsdk:"application_log_level"`
	SystemLogLevel      types.String `tfsdk:"system_log_level"`
}

type relayVPCConfigModelV0 struct {
	SubnetIDs        types.Set `tfsdk:"subnet_ids"`
	SecurityGroupIDs types.Set `tfsdk:"security_group_ids"`
}

type publishedModelV0 struct {
	Action  types.String `tfsdk:"action"`
	TTLDays types.Int64  `tfsdk:"ttl_days"`
}

type pendingIndexModelV0 struct {
	Name    types.String `tfsdk:"name"`
	Shards  types.Int64  `tfsdk:"shards"`
	Enabled types.Bool   `tfsdk:"enabled"`
}

type reconcilerModelV0 struct {
	Enabled                   types.Bool   `tfsdk:"enabled"`
	ScheduleExpression        types.String `tfsdk:"schedule_expression"`
	MinAgeSeconds             types.Int64  `tfsdk:"min_age_seconds"`
	MemorySize                types.Int64  `tfsdk:"memory_size"`
	Timeout                   types.Int64  `tfsdk:"timeout"`
	LogRetentionDays          types.Int64  `tfsdk:"log_retention_days"`
	ScheduleTimezone          types.String `tfsdk:"schedule_timezone"`
	FlexibleTimeWindowMinutes types.Int64  `tfsdk:"flexible_time_window_minutes"`
	ScheduleGroup             types.String `tfsdk:"schedule_group"`
}

type deadLetterModelV0 struct {
	MessageRetentionSeconds types.Int64  `tfsdk:"message_retention_seconds"`
	KMSMasterKeyID          types.String `tfsdk:"kms_master_key_id"`
}

type alarmsModelV0 struct {
	Enabled                          types.Bool   `tfsdk:"enabled"`
	SNSTopicARN                      types.String `tfsdk:"sns_topic_arn"`
	RelayErrorsThreshold             types.Int64  `tfsdk:"relay_errors_threshold"`
	IteratorAgeThresholdSeconds      types.Int64  `tfsdk:"iterator_age_threshold_seconds"`
	OldestPendingAgeThresholdSeconds types.Int64  `tfsdk:"oldest_pending_age_threshold_seconds"`
	EvaluationPeriods                types.Int64  `tfsdk:"evaluation_periods"`
	TreatMissingData                 types.String `tfsdk:"treat_missing_data"`
}

type iamModelV0 struct {
	PermissionsBoundary types.String `tfsdk:"permissions_boundary"`
	Path                types.String `tfsdk:"path"`
}

// writerTypesV1 are the attributes of version 1's writer object.
var writerTypesV1 = map[string]attr.Type{
	"table_name": types.StringType, "partition_key": types.StringType, "sort_key": types.StringType,
	"sort_key_prefix": types.StringType, "pending_index_name": types.StringType,
	"pending_index_shards": types.Int64Type, "ttl_attribute": types.StringType,
}

// priorSchema is the schema of the states that model (pipelineModelV0 or
// pipelineModelV1) reads: each setting optional and computed (a prior
// schema only decodes), each block a single nested block. It follows
// from the frozen model, so that the two cannot disagree.
func priorSchema(ctx context.Context, version int64, model any) *schema.Schema {
	attrs, blocks := priorAttributes(ctx, reflect.TypeOf(model))
	return &schema.Schema{Version: version, Attributes: attrs, Blocks: blocks}
}

// priorAttributes are the attributes and blocks of a frozen model struct.
func priorAttributes(ctx context.Context, t reflect.Type) (map[string]schema.Attribute, map[string]schema.Block) {
	attrs, blocks := map[string]schema.Attribute{}, map[string]schema.Block{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			a, b := priorAttributes(ctx, f.Type)
			for k, v := range a {
				attrs[k] = v
			}
			for k, v := range b {
				blocks[k] = v
			}
			continue
		}
		name := f.Tag.Get("tfsdk")
		switch f.Type {
		case reflect.TypeOf(types.String{}):
			attrs[name] = schema.StringAttribute{Optional: true, Computed: true}
		case reflect.TypeOf(types.Int64{}):
			attrs[name] = schema.Int64Attribute{Optional: true, Computed: true}
		case reflect.TypeOf(types.Bool{}):
			attrs[name] = schema.BoolAttribute{Optional: true, Computed: true}
		case reflect.TypeOf(types.Map{}):
			attrs[name] = schema.MapAttribute{Optional: true, Computed: true, ElementType: types.StringType}
		case reflect.TypeOf(types.Set{}):
			attrs[name] = schema.SetAttribute{Optional: true, Computed: true, ElementType: types.StringType}
		case reflect.TypeOf(types.Object{}):
			attrs[name] = schema.ObjectAttribute{Computed: true, AttributeTypes: writerTypesV1}
		case reflect.TypeOf(timeouts.Value{}):
			blocks[name] = timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true})
		default: // a pointer to a block's struct
			a, b := priorAttributes(ctx, f.Type.Elem())
			blocks[name] = schema.SingleNestedBlock{Attributes: a, Blocks: b}
		}
	}
	return attrs, blocks
}

// copyByName sets the fields of the struct dst to the fields of the struct
// src that have the same tfsdk name and type, descending into the objects
// that src has; the others stay as they are (null).
func copyByName(dst, src reflect.Value) {
	for i := range src.NumField() {
		f, v := src.Type().Field(i), src.Field(i)
		if f.Anonymous {
			copyByName(dst, v)
			continue
		}
		d, ok := fieldByTfsdk(dst, f.Tag.Get("tfsdk"))
		switch {
		case !ok:
		case v.Type() == d.Type():
			d.Set(v)
		case v.Kind() == reflect.Pointer && d.Kind() == reflect.Pointer && !v.IsNil():
			d.Set(reflect.New(d.Type().Elem()))
			copyByName(d.Elem(), v.Elem())
		}
	}
}

// fieldByTfsdk is the field of the struct v whose tfsdk name is name.
func fieldByTfsdk(v reflect.Value, name string) (reflect.Value, bool) {
	for i := range v.NumField() {
		if v.Type().Field(i).Tag.Get("tfsdk") == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}
