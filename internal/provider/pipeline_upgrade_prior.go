package provider

import (
	"context"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// This file freezes the past: the outbox_pipeline states of schema versions
// 0 and 1, which had blocks. Nothing here follows today's schema; a
// setting added, renamed or removed today leaves it as it is. The upgrade
// copies each value of a prior state to the attribute of the same path
// and type today, if there is one (pipeline_upgrade.go).
//
// Both versions grew without a version change, so each schema is the
// union of what its states may hold, and an attribute that a state lacks
// reads as null: force_destroy and the table's deletion_protection,
// point_in_time_recovery and kms_key_arn came with the same change, later
// than the first states of either version.

// priorBlock is a frozen object: its attributes by type (each optional and
// computed: a prior schema only decodes) and its blocks.
type priorBlock struct {
	attrs  map[string]attr.Type
	blocks map[string]priorBlock
}

var (
	priorString = types.StringType
	priorNumber = types.Int64Type
	priorBool   = types.BoolType
	priorSet    = types.SetType{ElemType: types.StringType}
	priorMap    = types.MapType{ElemType: types.StringType}
)

// typed gives each of names the type t; maps of them are merged.
func typed(t attr.Type, names ...string) map[string]attr.Type {
	out := make(map[string]attr.Type, len(names))
	for _, n := range names {
		out[n] = t
	}
	return out
}

func merged(parts ...map[string]attr.Type) map[string]attr.Type {
	out := map[string]attr.Type{}
	for _, p := range parts {
		maps.Copy(out, p)
	}
	return out
}

// pipelineV0 is a state of version 0: the settings' blocks (null when
// omitted) and the computed attributes.
var pipelineV0 = priorBlock{
	attrs: merged(
		typed(priorString, "id", "name", "table_name", "table_arn", "stream_arn", "pending_index_arn", "ttl_attribute_in_use", "target_arn",
			"dead_letter_queue_url", "dead_letter_queue_arn", "relay_function_name", "relay_function_arn", "relay_role_arn", "relay_log_group",
			"event_source_mapping_uuid", "reconciler_function_arn", "reconciler_role_arn", "reconciler_log_group", "scheduler_role_arn",
			"schedule_arn", "relay_package_sha256"),
		typed(priorBool, "force_destroy"),
		typed(priorMap, "tags", "tags_all", "alarm_arns"),
	),
	blocks: map[string]priorBlock{
		"table": {attrs: merged(typed(priorBool, "existing", "deletion_protection", "point_in_time_recovery"),
			typed(priorString, "name", "partition_key", "sort_key", "sort_key_prefix", "ttl_attribute", "kms_key_arn"))},
		"target": {attrs: typed(priorString, "event_bus", "topic_arn")},
		"relay": {
			attrs: merged(typed(priorNumber, "batch_size", "batching_window_seconds", "parallelization_factor", "maximum_retry_attempts",
				"maximum_record_age_seconds", "memory_size", "timeout", "log_retention_days", "reserved_concurrency"),
				typed(priorBool, "bisect_on_error"), typed(priorString, "architecture", "tracing_mode", "kms_key_arn")),
			blocks: map[string]priorBlock{
				"logging":    {attrs: typed(priorString, "log_format", "application_log_level", "system_log_level")},
				"vpc_config": {attrs: typed(priorSet, "subnet_ids", "security_group_ids")},
			},
		},
		"published":     {attrs: merged(typed(priorString, "action"), typed(priorNumber, "ttl_days"))},
		"pending_index": {attrs: merged(typed(priorString, "name"), typed(priorNumber, "shards"), typed(priorBool, "enabled"))},
		"reconciler": {attrs: merged(typed(priorBool, "enabled"), typed(priorString, "schedule_expression", "schedule_timezone", "schedule_group"),
			typed(priorNumber, "min_age_seconds", "memory_size", "timeout", "log_retention_days", "flexible_time_window_minutes"))},
		"dead_letter": {attrs: merged(typed(priorNumber, "message_retention_seconds"), typed(priorString, "kms_master_key_id"))},
		"alarms": {attrs: merged(typed(priorBool, "enabled"), typed(priorString, "sns_topic_arn", "treat_missing_data"),
			typed(priorNumber, "relay_errors_threshold", "iterator_age_threshold_seconds", "oldest_pending_age_threshold_seconds", "evaluation_periods"))},
		"iam": {attrs: typed(priorString, "permissions_boundary", "path")},
	},
}

// writerTypesV1 are the attributes of version 1's writer object, which
// version 1 added to version 0.
var writerTypesV1 = map[string]attr.Type{
	"table_name": types.StringType, "partition_key": types.StringType, "sort_key": types.StringType,
	"sort_key_prefix": types.StringType, "pending_index_name": types.StringType,
	"pending_index_shards": types.Int64Type, "ttl_attribute": types.StringType,
}

// priorSchema is the schema of the states of a version: version 0's
// blocks and attributes, the timeouts block and, from version 1, the
// writer.
func priorSchema(ctx context.Context, version int64) *schema.Schema {
	attrs, blocks := priorAttributes(pipelineV0)
	if version >= 1 {
		attrs["writer"] = schema.ObjectAttribute{Computed: true, AttributeTypes: writerTypesV1}
	}
	blocks["timeouts"] = timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true})
	return &schema.Schema{Version: version, Attributes: attrs, Blocks: blocks}
}

// priorAttributes are the schema attributes and blocks of a frozen block.
func priorAttributes(b priorBlock) (map[string]schema.Attribute, map[string]schema.Block) {
	attrs, blocks := map[string]schema.Attribute{}, map[string]schema.Block{}
	for name, t := range b.attrs {
		switch t {
		case priorString:
			attrs[name] = schema.StringAttribute{Optional: true, Computed: true}
		case priorNumber:
			attrs[name] = schema.Int64Attribute{Optional: true, Computed: true}
		case priorBool:
			attrs[name] = schema.BoolAttribute{Optional: true, Computed: true}
		case priorSet:
			attrs[name] = schema.SetAttribute{Optional: true, Computed: true, ElementType: types.StringType}
		case priorMap:
			attrs[name] = schema.MapAttribute{Optional: true, Computed: true, ElementType: types.StringType}
		}
	}
	for name, nested := range b.blocks {
		a, bl := priorAttributes(nested)
		blocks[name] = schema.SingleNestedBlock{Attributes: a, Blocks: bl}
	}
	return attrs, blocks
}
