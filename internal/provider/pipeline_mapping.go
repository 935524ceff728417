package provider

import (
	"context"
	"encoding/json"
	"reflect"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/pipeline"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Defaults of the schema that are not the pipeline package's.
const (
	defaultPublishedTTLDays = 30
	defaultMinAgeSeconds    = 300
	// placeholderTopicARN stands for a topic ARN that is unknown at plan
	// time, so that the rest of the configuration can be validated.
	placeholderTopicARN = "arn:aws:sns:us-east-1:123456789012:unknown-until-apply"
)

// specOptions say how to map values that are unknown at plan time.
type specOptions struct {
	// validating substitutes valid placeholders for unknown values that
	// have no default.
	validating bool
}

func str(v types.String) string {
	if v.IsNull() || v.IsUnknown() {
		return ""
	}
	return v.ValueString()
}

func i32(v types.Int64) int32 {
	if v.IsNull() || v.IsUnknown() {
		return 0
	}
	return int32(v.ValueInt64())
}

func i32ptr(v types.Int64) *int32 {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	n := int32(v.ValueInt64())
	return &n
}

func boolptr(v types.Bool) *bool {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	b := v.ValueBool()
	return &b
}

// spec maps the model to a pipeline.Spec. tags are the merged tags
// (default_tags and tags); null or unknown values mean the defaults.
func (m *PipelineResourceModel) spec(tags map[string]string, o specOptions) pipeline.Spec {
	s := pipeline.Spec{Name: str(m.Name), Tags: tags, ForceDestroy: m.ForceDestroy.ValueBool()}
	if t := m.Table; t != nil {
		s.Table = pipeline.TableSpec{
			Existing:      !t.Existing.IsNull() && !t.Existing.IsUnknown() && t.Existing.ValueBool(),
			Name:          str(t.Name),
			PartitionKey:  str(t.PartitionKey),
			SortKey:       str(t.SortKey),
			SortKeyPrefix: str(t.SortKeyPrefix),
			TTLAttribute:  str(t.TTLAttribute),
		}
		s.Table.KMSKeyARN = str(t.KMSKeyARN)
		s.Table.DeletionProtection = boolptr(t.DeletionProtection)
		s.Table.PointInTimeRecovery = boolptr(t.PointInTimeRecovery)
		if o.validating && s.Table.Existing && t.Name.IsUnknown() {
			s.Table.Name = "unknown-until-apply"
		}
	}
	if i := m.IAM; i != nil {
		s.IAM = pipeline.IAMSpec{PermissionsBoundary: str(i.PermissionsBoundary), Path: str(i.Path)}
	}
	if p := m.PendingIndex; p != nil {
		s.Table.PendingIndexName = str(p.Name)
		s.Table.PendingShards = int(i32(p.Shards))
		s.Table.PendingIndexDisabled = !p.Enabled.IsNull() && !p.Enabled.IsUnknown() && !p.Enabled.ValueBool()
	}
	s.Target.Type = config.TargetEventBridge
	if t := m.Target; t != nil {
		if !t.TopicARN.IsNull() {
			s.Target.Type = config.TargetSNS
			s.Target.TopicARN = str(t.TopicARN)
			if o.validating && t.TopicARN.IsUnknown() {
				s.Target.TopicARN = placeholderTopicARN
			}
		}
		s.Target.EventBus = str(t.EventBus)
	}
	if p := m.Published; p != nil {
		s.PublishedAction = config.Action(str(p.Action))
		if !p.TTLDays.IsNull() && !p.TTLDays.IsUnknown() {
			d := time.Duration(p.TTLDays.ValueInt64()) * 24 * time.Hour
			s.PublishedTTL = &d
		}
	}
	if r := m.Relay; r != nil {
		s.Architecture = pipeline.Architecture(str(r.Architecture))
		s.Relay = pipeline.FunctionSpec{
			MemorySize: i32(r.MemorySize), Timeout: i32(r.Timeout),
			ReservedConcurrency: i32ptr(r.ReservedConcurrency), LogRetentionDays: i32(r.LogRetentionDays),
		}
		s.Controls = r.controls()
		s.Mapping = pipeline.MappingSpec{
			BatchSize:                    i32(r.BatchSize),
			MaximumBatchingWindowSeconds: i32(r.BatchingWindowSeconds),
			ParallelizationFactor:        i32(r.ParallelizationFactor),
			MaximumRetryAttempts:         i32ptr(r.MaximumRetryAttempts),
			MaximumRecordAgeSeconds:      i32ptr(r.MaximumRecordAgeSeconds),
			BisectBatchOnFunctionError:   boolptr(r.BisectOnError),
		}
	}
	if d := m.DeadLetter; d != nil {
		s.DeadLetterQueue = pipeline.QueueSpec{MessageRetentionSeconds: i32(d.MessageRetentionSeconds), KMSMasterKeyID: str(d.KMSMasterKeyID)}
	}
	if r := m.Reconciler; r != nil {
		s.Reconciler.Disabled = !r.Enabled.IsNull() && !r.Enabled.IsUnknown() && !r.Enabled.ValueBool()
		s.Reconciler.ScheduleExpression = str(r.ScheduleExpression)
		if !r.MinAgeSeconds.IsNull() && !r.MinAgeSeconds.IsUnknown() {
			s.Reconciler.MinAge = time.Duration(r.MinAgeSeconds.ValueInt64()) * time.Second
		}
		s.Reconciler.Function = pipeline.FunctionSpec{MemorySize: i32(r.MemorySize), Timeout: i32(r.Timeout), LogRetentionDays: i32(r.LogRetentionDays)}
		s.Reconciler.ScheduleTimezone, s.Reconciler.ScheduleGroup = str(r.ScheduleTimezone), str(r.ScheduleGroup)
		s.Reconciler.FlexibleTimeWindowMinutes = i32(r.FlexibleTimeWindowMinutes)
	}
	if a := m.Alarms; a != nil {
		s.Alarms = pipeline.AlarmsSpec{
			// Present, the block enables the alarms unless it says not to.
			Enabled:                          a.Enabled.IsNull() || a.Enabled.IsUnknown() || a.Enabled.ValueBool(),
			SNSTopicARN:                      str(a.SNSTopicARN),
			RelayErrorsThreshold:             i32(a.RelayErrorsThreshold),
			IteratorAgeThresholdSeconds:      i32(a.IteratorAgeThresholdSeconds),
			OldestPendingAgeThresholdSeconds: i32(a.OldestPendingAgeThresholdSeconds),
			EvaluationPeriods:                i32(a.EvaluationPeriods),
			TreatMissingData:                 str(a.TreatMissingData),
		}
		if o.validating && a.SNSTopicARN.IsUnknown() {
			s.Alarms.SNSTopicARN = placeholderTopicARN
		}
	}
	return s
}

func optString(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// setState records the computed attributes from a pipeline.State.
func (m *PipelineResourceModel) setState(st pipeline.State) {
	m.ID = types.StringValue(m.Name.ValueString())
	m.TableName = optString(st.TableName)
	m.TableARN = optString(st.TableARN)
	m.StreamARN = optString(st.StreamARN)
	m.PendingIndexARN = optString(st.PendingIndexARN)
	m.TTLAttributeInUse = optString(st.TTLAttribute)
	m.TargetARN = optString(st.TargetARN)
	m.DeadLetterQueueURL = optString(st.QueueURL)
	m.DeadLetterQueueARN = optString(st.QueueARN)
	m.RelayFunctionName = optString(st.RelayFunctionName)
	m.RelayFunctionARN = optString(st.RelayFunctionARN)
	m.RelayRoleARN = optString(st.RelayRoleARN)
	m.RelayLogGroup = optString(st.RelayLogGroup)
	m.EventSourceMappingID = optString(st.MappingUUID)
	m.ReconcilerFunctionARN = optString(st.ReconcilerFunctionARN)
	m.ReconcilerRoleARN = optString(st.ReconcilerRoleARN)
	m.ReconcilerLogGroup = optString(st.ReconcilerLogGroup)
	m.SchedulerRoleARN = optString(st.SchedulerRoleARN)
	m.ScheduleARN = optString(st.ScheduleARN)
	m.RelayPackageSHA256 = optString(st.RelayPackageSHA256)
	m.AlarmARNs = alarmARNsValue(st.Alarms.Map())
}

// alarmARNsValue is alarm_arns: null when there are no alarms.
func alarmARNsValue(arns map[string]string) types.Map {
	if len(arns) == 0 {
		return types.MapNull(types.StringType)
	}
	return tagsValue(arns)
}

// privateState is the key of the pipeline.State in the resource's private
// state.
const privateState = "pipeline_state"

// loadState returns the pipeline.State kept in the private state. A state
// written without it (an older provider) is rebuilt from the attributes and
// the component names.
func loadState(ctx context.Context, p privateGetter, m *PipelineResourceModel) (pipeline.State, diag.Diagnostics) {
	var st pipeline.State
	b, diags := p.GetKey(ctx, privateState)
	if len(b) > 0 {
		if err := json.Unmarshal(b, &st); err == nil {
			return st, diags
		}
	}
	n := pipeline.NamesFor(str(m.Name))
	st = pipeline.State{
		Name: str(m.Name), TableName: str(m.TableName), TableARN: str(m.TableARN), StreamARN: str(m.StreamARN),
		TableOwned: m.Table == nil || !m.Table.Existing.ValueBool(), TTLAttribute: str(m.TTLAttributeInUse),
		PendingIndexARN: str(m.PendingIndexARN), TargetARN: str(m.TargetARN),
		QueueURL: str(m.DeadLetterQueueURL), QueueARN: str(m.DeadLetterQueueARN),
		RelayRoleARN: str(m.RelayRoleARN), RelayLogGroup: str(m.RelayLogGroup),
		RelayFunctionName: str(m.RelayFunctionName), RelayFunctionARN: str(m.RelayFunctionARN),
		MappingUUID:       str(m.EventSourceMappingID),
		ReconcilerRoleARN: str(m.ReconcilerRoleARN), ReconcilerLogGroup: str(m.ReconcilerLogGroup),
		ReconcilerFunctionARN: str(m.ReconcilerFunctionARN), SchedulerRoleARN: str(m.SchedulerRoleARN),
		ScheduleARN: str(m.ScheduleARN), RelayPackageSHA256: str(m.RelayPackageSHA256),
	}
	if a, err := pipeline.AccountOf(st.TableARN); err == nil {
		st.Partition, st.Region, st.AccountID = a.Partition, a.Region, a.ID
	}
	if st.RelayRoleARN != "" {
		st.RelayRoleName = n.RelayRole
	}
	if st.ReconcilerRoleARN != "" {
		st.ReconcilerRoleName = n.ReconcilerRole
	}
	if st.ReconcilerFunctionARN != "" {
		st.ReconcilerFunctionName = n.ReconcilerFunction
	}
	if st.SchedulerRoleARN != "" {
		st.SchedulerRoleName = n.SchedulerRole
	}
	if st.ScheduleARN != "" {
		st.ScheduleName = n.Schedule
	}
	return st, diags
}

func saveState(ctx context.Context, p privateSetter, st pipeline.State, drift *pipeline.Drift) diag.Diagnostics {
	b, err := json.Marshal(st)
	if err != nil {
		var diags diag.Diagnostics
		diags.AddError("Recording the outbox pipeline", err.Error())
		return diags
	}
	diags := p.SetKey(ctx, privateState, b)
	diags.Append(saveDrift(ctx, p, drift)...)
	return diags
}

// modelFromSpec builds the configuration part of the model from a Spec, as
// Lookup reports it on import. A block whose settings are all defaults is
// left out, as a configuration would leave it out.
func modelFromSpec(s pipeline.Spec, st pipeline.State, defaultTags map[string]string) PipelineResourceModel {
	d := pipeline.Spec{Name: s.Name}.WithDefaults()
	s = s.WithDefaults()
	m := PipelineResourceModel{Name: types.StringValue(s.Name), ForceDestroy: types.BoolValue(s.ForceDestroy)}

	ttl := s.Table.TTLAttribute
	if s.Table.Existing && !st.Added.TTL {
		// The table had its own TTL attribute, which the pipeline reuses
		// whatever ttl_attribute says; report the default.
		ttl = outbox.DefaultTTLAttribute
	}
	table := &TableModel{
		Existing: types.BoolValue(s.Table.Existing), Name: types.StringNull(),
		PartitionKey: types.StringValue(s.Table.PartitionKey), SortKey: types.StringValue(s.Table.SortKey),
		SortKeyPrefix: types.StringValue(s.Table.SortKeyPrefix), TTLAttribute: types.StringValue(ttl),
		DeletionProtection: types.BoolValue(*s.Table.DeletionProtection), PointInTimeRecovery: types.BoolValue(*s.Table.PointInTimeRecovery),
		KMSKeyARN: optString(s.Table.KMSKeyARN),
	}
	if s.IAM != d.IAM {
		m.IAM = &IAMModel{PermissionsBoundary: optString(s.IAM.PermissionsBoundary), Path: types.StringValue(s.IAM.Path)}
	}
	if s.Table.Existing || s.Table.Name != d.Table.Name {
		table.Name = types.StringValue(s.Table.Name)
	}
	if s.Table.Existing || s.Table.PartitionKey != d.Table.PartitionKey || s.Table.SortKey != d.Table.SortKey ||
		s.Table.SortKeyPrefix != d.Table.SortKeyPrefix || ttl != d.Table.TTLAttribute || s.Table.Name != d.Table.Name ||
		*s.Table.DeletionProtection != *d.Table.DeletionProtection || *s.Table.PointInTimeRecovery != *d.Table.PointInTimeRecovery || s.Table.KMSKeyARN != "" {
		m.Table = table
	}

	if s.Target.Type == config.TargetSNS {
		m.Target = &TargetModel{EventBus: types.StringNull(), TopicARN: types.StringValue(s.Target.TopicARN)}
	} else if s.Target.EventBus != d.Target.EventBus {
		m.Target = &TargetModel{EventBus: types.StringValue(s.Target.EventBus), TopicARN: types.StringNull()}
	}

	if s.PublishedAction != d.PublishedAction || *s.PublishedTTL != *d.PublishedTTL {
		m.Published = &PublishedModel{Action: types.StringValue(string(s.PublishedAction)), TTLDays: types.Int64Value(int64(*s.PublishedTTL / (24 * time.Hour)))}
	}
	if s.Table.PendingIndexName != d.Table.PendingIndexName || s.Table.PendingShards != d.Table.PendingShards || s.Table.PendingIndexDisabled {
		m.PendingIndex = &PendingIndexModel{Name: types.StringValue(s.Table.PendingIndexName), Shards: types.Int64Value(int64(s.Table.PendingShards)),
			Enabled: types.BoolValue(!s.Table.PendingIndexDisabled)}
	}

	relay := &RelayModel{
		BatchSize:               types.Int64Value(int64(s.Mapping.BatchSize)),
		BatchingWindowSeconds:   types.Int64Value(int64(s.Mapping.MaximumBatchingWindowSeconds)),
		ParallelizationFactor:   types.Int64Value(int64(s.Mapping.ParallelizationFactor)),
		MaximumRetryAttempts:    types.Int64Value(int64(*s.Mapping.MaximumRetryAttempts)),
		MaximumRecordAgeSeconds: types.Int64Value(int64(*s.Mapping.MaximumRecordAgeSeconds)),
		BisectOnError:           types.BoolValue(*s.Mapping.BisectBatchOnFunctionError),
		MemorySize:              types.Int64Value(int64(s.Relay.MemorySize)),
		Timeout:                 types.Int64Value(int64(s.Relay.Timeout)),
		Architecture:            types.StringValue(string(s.Architecture)),
		LogRetentionDays:        types.Int64Value(int64(s.Relay.LogRetentionDays)),
		ReservedConcurrency:     types.Int64Null(),
	}
	if s.Relay.ReservedConcurrency != nil {
		relay.ReservedConcurrency = types.Int64Value(int64(*s.Relay.ReservedConcurrency))
	}
	relay.setControls(s.Controls)
	dr := d.Relay
	dr.ReservedConcurrency = s.Relay.ReservedConcurrency
	dm := d.Mapping
	if s.Architecture != d.Architecture || s.Relay.ReservedConcurrency != nil || s.Relay != dr || !reflect.DeepEqual(s.Controls, d.Controls) ||
		s.Mapping.BatchSize != dm.BatchSize || s.Mapping.MaximumBatchingWindowSeconds != dm.MaximumBatchingWindowSeconds ||
		s.Mapping.ParallelizationFactor != dm.ParallelizationFactor || *s.Mapping.MaximumRetryAttempts != *dm.MaximumRetryAttempts ||
		*s.Mapping.MaximumRecordAgeSeconds != *dm.MaximumRecordAgeSeconds || *s.Mapping.BisectBatchOnFunctionError != *dm.BisectBatchOnFunctionError {
		m.Relay = relay
	}

	if s.DeadLetterQueue != d.DeadLetterQueue {
		m.DeadLetter = &DeadLetterModel{MessageRetentionSeconds: types.Int64Value(int64(s.DeadLetterQueue.MessageRetentionSeconds)), KMSMasterKeyID: optString(s.DeadLetterQueue.KMSMasterKeyID)}
	}

	r, dr2 := s.Reconciler, d.Reconciler
	if r.Disabled {
		// Lookup cannot tell the settings of a reconciler that does not
		// exist: report the defaults.
		r = dr2
		r.Disabled = true
	}
	if r.Disabled || r.ScheduleExpression != dr2.ScheduleExpression || r.MinAge != dr2.MinAge || r.Function != dr2.Function ||
		r.ScheduleTimezone != dr2.ScheduleTimezone || r.FlexibleTimeWindowMinutes != dr2.FlexibleTimeWindowMinutes || r.ScheduleGroup != dr2.ScheduleGroup {
		m.Reconciler = &ReconcilerModel{
			Enabled: types.BoolValue(!r.Disabled), ScheduleExpression: types.StringValue(r.ScheduleExpression),
			MinAgeSeconds: types.Int64Value(int64(r.MinAge / time.Second)),
			MemorySize:    types.Int64Value(int64(r.Function.MemorySize)), Timeout: types.Int64Value(int64(r.Function.Timeout)),
			LogRetentionDays: types.Int64Value(int64(r.Function.LogRetentionDays)),
			ScheduleTimezone: types.StringValue(r.ScheduleTimezone), ScheduleGroup: types.StringValue(r.ScheduleGroup),
			FlexibleTimeWindowMinutes: types.Int64Value(int64(r.FlexibleTimeWindowMinutes)),
		}
	}

	if a := s.Alarms; a.Enabled {
		m.Alarms = &AlarmsModel{
			Enabled: types.BoolValue(true), SNSTopicARN: optString(a.SNSTopicARN),
			RelayErrorsThreshold:             types.Int64Value(int64(a.RelayErrorsThreshold)),
			IteratorAgeThresholdSeconds:      types.Int64Value(int64(a.IteratorAgeThresholdSeconds)),
			OldestPendingAgeThresholdSeconds: types.Int64Value(int64(a.OldestPendingAgeThresholdSeconds)),
			EvaluationPeriods:                types.Int64Value(int64(a.EvaluationPeriods)),
			TreatMissingData:                 types.StringValue(a.TreatMissingData),
		}
	}

	m.Tags, m.TagsAll = importedTags(s.Tags, defaultTags)
	m.setState(st)
	return m
}

// fieldPaths maps the fields of pipeline.ValidationError to attributes.
var fieldPaths = map[string]path.Path{
	"Name":                                    path.Root("name"),
	"Table.Name":                              path.Root("table").AtName("name"),
	"Table.PartitionKey":                      path.Root("table").AtName("partition_key"),
	"Table.SortKey":                           path.Root("table").AtName("sort_key"),
	"Table.SortKeyPrefix":                     path.Root("table").AtName("sort_key_prefix"),
	"Table.TTLAttribute":                      path.Root("table").AtName("ttl_attribute"),
	"Table.PendingIndexName":                  path.Root("pending_index").AtName("name"),
	"Table.PendingShards":                     path.Root("pending_index").AtName("shards"),
	"Table.PendingIndexDisabled":              path.Root("pending_index").AtName("enabled"),
	"Target.EventBus":                         path.Root("target").AtName("event_bus"),
	"Target.TopicARN":                         path.Root("target").AtName("topic_arn"),
	"PublishedAction":                         path.Root("published").AtName("action"),
	"PublishedTTL":                            path.Root("published").AtName("ttl_days"),
	"Architecture":                            path.Root("relay").AtName("architecture"),
	"Relay.MemorySize":                        path.Root("relay").AtName("memory_size"),
	"Relay.Timeout":                           path.Root("relay").AtName("timeout"),
	"Relay.ReservedConcurrency":               path.Root("relay").AtName("reserved_concurrency"),
	"Relay.LogRetentionDays":                  path.Root("relay").AtName("log_retention_days"),
	"Mapping.BatchSize":                       path.Root("relay").AtName("batch_size"),
	"Mapping.MaximumBatchingWindowSeconds":    path.Root("relay").AtName("batching_window_seconds"),
	"Mapping.ParallelizationFactor":           path.Root("relay").AtName("parallelization_factor"),
	"Mapping.MaximumRetryAttempts":            path.Root("relay").AtName("maximum_retry_attempts"),
	"Mapping.MaximumRecordAgeSeconds":         path.Root("relay").AtName("maximum_record_age_seconds"),
	"DeadLetterQueue.MessageRetentionSeconds": path.Root("dead_letter").AtName("message_retention_seconds"),
	"Reconciler.ScheduleExpression":           path.Root("reconciler").AtName("schedule_expression"),
	"Reconciler.MinAge":                       path.Root("reconciler").AtName("min_age_seconds"),
	"Reconciler.Function.MemorySize":          path.Root("reconciler").AtName("memory_size"),
	"Reconciler.Function.Timeout":             path.Root("reconciler").AtName("timeout"),
	"Reconciler.Function.LogRetentionDays":    path.Root("reconciler").AtName("log_retention_days"),
	"Reconciler.ScheduleTimezone":             path.Root("reconciler").AtName("schedule_timezone"),
	"Reconciler.FlexibleTimeWindowMinutes":    path.Root("reconciler").AtName("flexible_time_window_minutes"),
	"Reconciler.ScheduleGroup":                path.Root("reconciler").AtName("schedule_group"),
	"Tags":                                    path.Root("tags"),
	"Table.KMSKeyARN":                         path.Root("table").AtName("kms_key_arn"),
	"IAM.PermissionsBoundary":                 path.Root("iam").AtName("permissions_boundary"),
	"IAM.Path":                                path.Root("iam").AtName("path"),
	"Controls.TracingMode":                    path.Root("relay").AtName("tracing_mode"),
	"Controls.KMSKeyARN":                      path.Root("relay").AtName("kms_key_arn"),
	"Controls.LogFormat":                      path.Root("relay").AtName("logging").AtName("log_format"),
	"Controls.ApplicationLogLevel":            path.Root("relay").AtName("logging").AtName("application_log_level"),
	"Controls.SystemLogLevel":                 path.Root("relay").AtName("logging").AtName("system_log_level"),
	"Controls.SubnetIDs":                      path.Root("relay").AtName("vpc_config").AtName("subnet_ids"),
	"Controls.SecurityGroupIDs":               path.Root("relay").AtName("vpc_config").AtName("security_group_ids"),
	"Alarms.SNSTopicARN":                      path.Root("alarms").AtName("sns_topic_arn"),
	"Alarms.RelayErrorsThreshold":             path.Root("alarms").AtName("relay_errors_threshold"),
	"Alarms.IteratorAgeThresholdSeconds":      path.Root("alarms").AtName("iterator_age_threshold_seconds"),
	"Alarms.OldestPendingAgeThresholdSeconds": path.Root("alarms").AtName("oldest_pending_age_threshold_seconds"),
	"Alarms.EvaluationPeriods":                path.Root("alarms").AtName("evaluation_periods"),
	"Alarms.TreatMissingData":                 path.Root("alarms").AtName("treat_missing_data"),
}

// replacementPaths maps the fields of pipeline.ReplacementFields to
// attributes.
var replacementPaths = map[string]path.Path{
	"Name":                   path.Root("name"),
	"Table.Existing":         path.Root("table").AtName("existing"),
	"Table.Name":             path.Root("table").AtName("name"),
	"Table.PartitionKey":     path.Root("table").AtName("partition_key"),
	"Table.SortKey":          path.Root("table").AtName("sort_key"),
	"Table.PendingIndexName": path.Root("pending_index").AtName("name"),
	"Table.TTLAttribute":     path.Root("table").AtName("ttl_attribute"),
}

// controls maps the relay block's tracing, KMS, logging and VPC settings.
func (r *RelayModel) controls() pipeline.LambdaControls {
	c := pipeline.LambdaControls{TracingMode: str(r.TracingMode), KMSKeyARN: str(r.KMSKeyARN)}
	if l := r.Logging; l != nil {
		c.LogFormat, c.ApplicationLogLevel, c.SystemLogLevel = str(l.LogFormat), str(l.ApplicationLogLevel), str(l.SystemLogLevel)
	}
	if v := r.VPCConfig; v != nil {
		c.SubnetIDs, c.SecurityGroupIDs = setStrings(v.SubnetIDs), setStrings(v.SecurityGroupIDs)
	}
	return c
}

func setStrings(v types.Set) []string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	var out []string
	for _, e := range v.Elements() {
		if s, ok := e.(types.String); ok && !s.IsNull() && !s.IsUnknown() {
			out = append(out, s.ValueString())
		}
	}
	return out
}

func controlsSet(s []string) types.Set {
	elems := make([]attr.Value, 0, len(s))
	for _, e := range s {
		elems = append(elems, types.StringValue(e))
	}
	return types.SetValueMust(types.StringType, elems)
}

// setControls records the controls in the relay block, for import.
func (r *RelayModel) setControls(c pipeline.LambdaControls) {
	r.TracingMode, r.KMSKeyARN = types.StringValue(c.TracingMode), optString(c.KMSKeyARN)
	if c.LogFormat != pipeline.DefaultLogFormat {
		r.Logging = &RelayLoggingModel{LogFormat: types.StringValue(c.LogFormat),
			ApplicationLogLevel: optString(c.ApplicationLogLevel), SystemLogLevel: optString(c.SystemLogLevel)}
	}
	if len(c.SubnetIDs) > 0 {
		r.VPCConfig = &RelayVPCConfigModel{SubnetIDs: controlsSet(c.SubnetIDs), SecurityGroupIDs: controlsSet(c.SecurityGroupIDs)}
	}
}
