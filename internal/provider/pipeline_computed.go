package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

// computedAttr is one top-level computed string of outbox_pipeline. The
// table below is the one place that ties an attribute to its field of the
// model, its field of provision.State and the components whose drift
// changes it: the schema, setState, loadState and ModifyPlan all read it.
type computedAttr struct {
	name string
	desc string
	// stable values keep their state when nothing they follow from changes.
	stable bool
	// reconciler values are null when the reconciler is disabled.
	reconciler bool
	// components whose drift (missing or changed) may change the value.
	components []string
	// replacedBy are the changes found by Read whose repair gives the value
	// a new one: a component ("stream") or a field of one
	// ("event_source_mapping.event_source_arn"). Other changes are repaired
	// in place.
	replacedBy []string
	model      func(*PipelineResourceModel) *types.String
	state      func(*provision.State) *string
}

var computedStrings = []computedAttr{
	{name: "id", desc: "The pipeline's name, its import id.", stable: true,
		model: func(m *PipelineResourceModel) *types.String { return &m.ID }, state: func(s *provision.State) *string { return &s.Name }},
	{name: "table_name", desc: "Name of the outbox table: `table.name`, or `<name>-outbox` for a dedicated table.",
		model: func(m *PipelineResourceModel) *types.String { return &m.TableName }, state: func(s *provision.State) *string { return &s.TableName }},
	{name: "table_arn", desc: "ARN of the outbox table.", stable: true, components: []string{provision.ComponentTable},
		model: func(m *PipelineResourceModel) *types.String { return &m.TableARN }, state: func(s *provision.State) *string { return &s.TableARN }},
	{name: "stream_arn", desc: "ARN of the table's stream that the relay reads.", stable: true,
		components: []string{provision.ComponentTable, provision.ComponentStream}, replacedBy: []string{provision.ComponentStream},
		model: func(m *PipelineResourceModel) *types.String { return &m.StreamARN }, state: func(s *provision.State) *string { return &s.StreamARN }},
	{name: "stream_view_type", desc: "View type of the table's stream: `NEW_IMAGE`, or `NEW_AND_OLD_IMAGES` on an adopted table that has it; both carry the new image that the relay reads. " +
		"A stream changed by hand to another view type shows here, and the next apply replaces it with a `NEW_IMAGE` stream on a dedicated table (the relay's mapping moves to it; events written meanwhile stay `PENDING` until the reconciler publishes them), or fails on an adopted table, whose stream is its owner's.",
		stable: true, components: []string{provision.ComponentTable, provision.ComponentStream},
		model: func(m *PipelineResourceModel) *types.String { return &m.StreamViewType }, state: func(s *provision.State) *string { return &s.StreamViewType }},
	{name: "pending_index_arn", desc: "ARN of the sparse pending index.", stable: true,
		components: []string{provision.ComponentTable, provision.ComponentPendingIndex},
		model:      func(m *PipelineResourceModel) *types.String { return &m.PendingIndexARN }, state: func(s *provision.State) *string { return &s.PendingIndexARN }},
	{name: "ttl_attribute_in_use", desc: "The table's TTL attribute that published items expire on: `table.ttl_attribute`, or the attribute an adopted table already had.", stable: true,
		components: []string{provision.ComponentTable, provision.ComponentTTL}, replacedBy: []string{provision.ComponentTTL},
		model: func(m *PipelineResourceModel) *types.String { return &m.TTLAttributeInUse }, state: func(s *provision.State) *string { return &s.TTLAttribute }},
	{name: "target_arn", desc: "ARN of the event bus or topic the pipeline publishes to.",
		model: func(m *PipelineResourceModel) *types.String { return &m.TargetARN }, state: func(s *provision.State) *string { return &s.TargetARN }},
	{name: "dead_letter_queue_url", desc: "URL of the relay's dead-letter queue (`<name>-relay-dlq`).", stable: true,
		components: []string{provision.ComponentDeadLetterQueue},
		model:      func(m *PipelineResourceModel) *types.String { return &m.DeadLetterQueueURL }, state: func(s *provision.State) *string { return &s.QueueURL }},
	{name: "dead_letter_queue_arn", desc: "ARN of the relay's dead-letter queue.", stable: true,
		components: []string{provision.ComponentDeadLetterQueue},
		model:      func(m *PipelineResourceModel) *types.String { return &m.DeadLetterQueueARN }, state: func(s *provision.State) *string { return &s.QueueARN }},
	{name: "relay_function_name", desc: "Name of the relay function (`<name>-relay`).", stable: true,
		components: []string{provision.ComponentRelayFunction},
		model:      func(m *PipelineResourceModel) *types.String { return &m.RelayFunctionName }, state: func(s *provision.State) *string { return &s.RelayFunctionName }},
	{name: "relay_function_arn", desc: "ARN of the relay function.", stable: true,
		components: []string{provision.ComponentRelayFunction},
		model:      func(m *PipelineResourceModel) *types.String { return &m.RelayFunctionARN }, state: func(s *provision.State) *string { return &s.RelayFunctionARN }},
	{name: "relay_role_arn", desc: "ARN of the relay function's execution role.", stable: true,
		components: []string{provision.ComponentRelayRole},
		model:      func(m *PipelineResourceModel) *types.String { return &m.RelayRoleARN }, state: func(s *provision.State) *string { return &s.RelayRoleARN }},
	{name: "relay_log_group", desc: "Log group of the relay function (`/aws/lambda/<name>-relay`).", stable: true,
		components: []string{provision.ComponentRelayLogGroup},
		model:      func(m *PipelineResourceModel) *types.String { return &m.RelayLogGroup }, state: func(s *provision.State) *string { return &s.RelayLogGroup }},
	{name: "event_source_mapping_uuid", desc: "UUID of the event source mapping of the relay on the stream.", stable: true,
		components: []string{provision.ComponentMapping}, replacedBy: []string{provision.ComponentStream, provision.ComponentMapping + ".event_source_arn"},
		model: func(m *PipelineResourceModel) *types.String { return &m.EventSourceMappingID }, state: func(s *provision.State) *string { return &s.MappingUUID }},
	{name: "reconciler_function_arn", desc: "ARN of the reconciler function (`<name>-reconciler`); null when the reconciler is disabled.", stable: true, reconciler: true,
		components: []string{provision.ComponentReconcilerFunction},
		model:      func(m *PipelineResourceModel) *types.String { return &m.ReconcilerFunctionARN }, state: func(s *provision.State) *string { return &s.ReconcilerFunctionARN }},
	{name: "reconciler_role_arn", desc: "ARN of the reconciler function's execution role; null when the reconciler is disabled.", stable: true, reconciler: true,
		components: []string{provision.ComponentReconcilerRole},
		model:      func(m *PipelineResourceModel) *types.String { return &m.ReconcilerRoleARN }, state: func(s *provision.State) *string { return &s.ReconcilerRoleARN }},
	{name: "reconciler_log_group", desc: "Log group of the reconciler function (`/aws/lambda/<name>-reconciler`); null when the reconciler is disabled.", stable: true, reconciler: true,
		components: []string{provision.ComponentReconcilerLogGroup},
		model:      func(m *PipelineResourceModel) *types.String { return &m.ReconcilerLogGroup }, state: func(s *provision.State) *string { return &s.ReconcilerLogGroup }},
	{name: "scheduler_role_arn", desc: "ARN of the role that EventBridge Scheduler assumes to invoke the reconciler; null when the reconciler is disabled.", stable: true, reconciler: true,
		components: []string{provision.ComponentSchedulerRole},
		model:      func(m *PipelineResourceModel) *types.String { return &m.SchedulerRoleARN }, state: func(s *provision.State) *string { return &s.SchedulerRoleARN }},
	{name: "schedule_arn", desc: "ARN of the reconciler's EventBridge Scheduler schedule (`<name>-reconcile`); null when the reconciler is disabled.", stable: true, reconciler: true,
		components: []string{provision.ComponentSchedule},
		model:      func(m *PipelineResourceModel) *types.String { return &m.ScheduleARN }, state: func(s *provision.State) *string { return &s.ScheduleARN }},
	{name: "relay_package_sha256", desc: "Base64 SHA-256 of the relay package the functions run. " +
		"It changes when the provider ships new relay code, and the next plan updates the functions' code in place.",
		model: func(m *PipelineResourceModel) *types.String { return &m.RelayPackageSHA256 }, state: func(s *provision.State) *string { return &s.RelayPackageSHA256 }},
}

// computedStringAttributes returns the schema of the computed strings.
func computedStringAttributes() map[string]schema.Attribute {
	out := make(map[string]schema.Attribute, len(computedStrings))
	for _, c := range computedStrings {
		if c.stable {
			out[c.name] = computedStringAttr(c.desc)
		} else {
			out[c.name] = schema.StringAttribute{Computed: true, MarkdownDescription: c.desc}
		}
	}
	return out
}

// setComputedStrings records the computed strings of a provision.State;
// empty fields are null.
func (m *PipelineResourceModel) setComputedStrings(st provision.State) {
	for _, c := range computedStrings {
		*c.model(m) = optString(*c.state(&st))
	}
}

// stateFromComputedStrings is the inverse of setComputedStrings.
func (m *PipelineResourceModel) stateFromComputedStrings() provision.State {
	var st provision.State
	for _, c := range computedStrings {
		*c.state(&st) = str(*c.model(m))
	}
	return st
}
