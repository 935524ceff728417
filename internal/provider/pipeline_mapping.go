package provider

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
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

// spec maps the model to a provision.Spec. tags are the merged tags
// (default_tags and tags); null or unknown values mean the defaults.
func (m *PipelineResourceModel) spec(tags map[string]string, o specOptions) provision.Spec {
	s := provision.Spec{Name: str(m.Name), Tags: tags, ForceDestroy: m.ForceDestroy.ValueBool()}
	if t := m.Table; t != nil {
		s.Table = provision.TableSpec{
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
		s.IAM = provision.IAMSpec{PermissionsBoundary: str(i.PermissionsBoundary), Path: str(i.Path)}
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
		s.Architecture = provision.Architecture(str(r.Architecture))
		s.Relay = provision.FunctionSpec{
			MemorySize: i32(r.MemorySize), Timeout: i32(r.Timeout),
			ReservedConcurrency: i32ptr(r.ReservedConcurrency), LogRetentionDays: i32(r.LogRetentionDays),
		}
		s.Controls = r.controls()
		s.Mapping = provision.MappingSpec{
			BatchSize:                    i32(r.BatchSize),
			MaximumBatchingWindowSeconds: i32(r.BatchingWindowSeconds),
			ParallelizationFactor:        i32(r.ParallelizationFactor),
			MaximumRetryAttempts:         i32ptr(r.MaximumRetryAttempts),
			MaximumRecordAgeSeconds:      i32ptr(r.MaximumRecordAgeSeconds),
			BisectBatchOnFunctionError:   boolptr(r.BisectOnError),
		}
	}
	if d := m.DeadLetter; d != nil {
		s.DeadLetterQueue = provision.QueueSpec{MessageRetentionSeconds: i32(d.MessageRetentionSeconds), KMSMasterKeyID: str(d.KMSMasterKeyID)}
	}
	if r := m.Reconciler; r != nil {
		s.Reconciler.Disabled = !r.Enabled.IsNull() && !r.Enabled.IsUnknown() && !r.Enabled.ValueBool()
		s.Reconciler.ScheduleExpression = str(r.ScheduleExpression)
		if !r.MinAgeSeconds.IsNull() && !r.MinAgeSeconds.IsUnknown() {
			s.Reconciler.MinAge = time.Duration(r.MinAgeSeconds.ValueInt64()) * time.Second
		}
		s.Reconciler.Function = provision.FunctionSpec{MemorySize: i32(r.MemorySize), Timeout: i32(r.Timeout), LogRetentionDays: i32(r.LogRetentionDays)}
		s.Reconciler.ScheduleTimezone, s.Reconciler.ScheduleGroup = str(r.ScheduleTimezone), str(r.ScheduleGroup)
		s.Reconciler.FlexibleTimeWindowMinutes = i32(r.FlexibleTimeWindowMinutes)
	}
	if a := m.Alarms; a != nil {
		s.Alarms = provision.AlarmsSpec{
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

// setState records the computed attributes from a provision.State.
func (m *PipelineResourceModel) setState(st provision.State) {
	st.Name = m.Name.ValueString()
	m.setComputedStrings(st)
	m.AlarmARNs = alarmARNsValue(st.Alarms.Map())
	s := m.spec(nil, specOptions{}).WithDefaults()
	m.Writer = writerValue(s, m.TableName, m.TTLAttributeInUse, writerKnown{table: true, pendingIndex: true})
}

// alarmARNsValue is alarm_arns: null when there are no alarms.
func alarmARNsValue(arns map[string]string) types.Map {
	if len(arns) == 0 {
		return types.MapNull(types.StringType)
	}
	return tagsValue(arns)
}

// privateState is the key of the provision.State in the resource's private
// state.
const privateState = "pipeline_state"

// loadState returns the provision.State kept in the private state. A state
// written without it (an older provider), or one it cannot decode, is
// rebuilt from the attributes and the component names.
func loadState(ctx context.Context, p privateGetter, m *PipelineResourceModel) (provision.State, diag.Diagnostics) {
	var st provision.State
	b, diags := p.GetKey(ctx, privateState)
	if len(b) > 0 {
		decoded, err := provision.DecodeState(b)
		switch {
		case err == nil:
			return decoded, diags
		case errors.Is(err, provision.ErrNewerState):
			// What a newer provider recorded may name components that this
			// one does not know of: rebuilding would lose sight of them.
			diags.AddError("Reading the outbox pipeline's private state", err.Error())
			return st, diags
		}
		diags.AddWarning("Reading the outbox pipeline's private state",
			fmt.Sprintf("The recorded components are unreadable (%v); they are found again from the attributes and the components' names.", err))
	}
	n := provision.NamesFor(str(m.Name))
	st = m.stateFromComputedStrings()
	st.Name = str(m.Name)
	st.TableOwned = m.Table == nil || !m.Table.Existing.ValueBool()
	if a, err := provision.AccountOf(st.TableARN); err == nil {
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

func saveState(ctx context.Context, p privateSetter, st provision.State, drift *provision.Drift) diag.Diagnostics {
	b, err := provision.EncodeState(st)
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
func modelFromSpec(s provision.Spec, st provision.State, defaultTags map[string]string) PipelineResourceModel {
	d := provision.Spec{Name: s.Name}.WithDefaults()
	s = s.WithDefaults()
	m := PipelineResourceModel{Name: types.StringValue(s.Name), ForceDestroy: types.BoolValue(s.ForceDestroy)}
	m.Table = tableModelFromSpec(s, d, st)
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
	if s.IAM != d.IAM {
		m.IAM = &IAMModel{PermissionsBoundary: optString(s.IAM.PermissionsBoundary), Path: types.StringValue(s.IAM.Path)}
	}
	m.Relay = relayModelFromSpec(s, d)
	if s.DeadLetterQueue != d.DeadLetterQueue {
		m.DeadLetter = &DeadLetterModel{MessageRetentionSeconds: types.Int64Value(int64(s.DeadLetterQueue.MessageRetentionSeconds)), KMSMasterKeyID: optString(s.DeadLetterQueue.KMSMasterKeyID)}
	}
	m.Reconciler = reconcilerModelFromSpec(s.Reconciler, d.Reconciler)
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

// tableModelFromSpec is the table block of an imported pipeline; nil when
// every setting is the default. s and d have defaults applied; d is the
// default Spec of the same name.
func tableModelFromSpec(s, d provision.Spec, st provision.State) *TableModel {
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
	if s.Table.Existing || s.Table.Name != d.Table.Name {
		table.Name = types.StringValue(s.Table.Name)
	}
	if s.Table.Existing || s.Table.PartitionKey != d.Table.PartitionKey || s.Table.SortKey != d.Table.SortKey ||
		s.Table.SortKeyPrefix != d.Table.SortKeyPrefix || ttl != d.Table.TTLAttribute || s.Table.Name != d.Table.Name ||
		*s.Table.DeletionProtection != *d.Table.DeletionProtection || *s.Table.PointInTimeRecovery != *d.Table.PointInTimeRecovery || s.Table.KMSKeyARN != "" {
		return table
	}
	return nil
}

// relayModelFromSpec is the relay block of an imported pipeline; nil when
// every setting is the default.
func relayModelFromSpec(s, d provision.Spec) *RelayModel {
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
		return relay
	}
	return nil
}

// reconcilerModelFromSpec is the reconciler block of an imported pipeline;
// nil when every setting is the default.
func reconcilerModelFromSpec(r, d provision.ReconcilerSpec) *ReconcilerModel {
	if r.Disabled {
		// Lookup cannot tell the settings of a reconciler that does not
		// exist: report the defaults.
		r = d
		r.Disabled = true
	}
	if !r.Disabled && r.ScheduleExpression == d.ScheduleExpression && r.MinAge == d.MinAge && r.Function == d.Function &&
		r.ScheduleTimezone == d.ScheduleTimezone && r.FlexibleTimeWindowMinutes == d.FlexibleTimeWindowMinutes && r.ScheduleGroup == d.ScheduleGroup {
		return nil
	}
	return &ReconcilerModel{
		Enabled: types.BoolValue(!r.Disabled), ScheduleExpression: types.StringValue(r.ScheduleExpression),
		MinAgeSeconds: types.Int64Value(int64(r.MinAge / time.Second)),
		MemorySize:    types.Int64Value(int64(r.Function.MemorySize)), Timeout: types.Int64Value(int64(r.Function.Timeout)),
		LogRetentionDays: types.Int64Value(int64(r.Function.LogRetentionDays)),
		ScheduleTimezone: types.StringValue(r.ScheduleTimezone), ScheduleGroup: types.StringValue(r.ScheduleGroup),
		FlexibleTimeWindowMinutes: types.Int64Value(int64(r.FlexibleTimeWindowMinutes)),
	}
}

// controls maps the relay block's tracing, KMS, logging and VPC settings.
func (r *RelayModel) controls() provision.LambdaControls {
	c := provision.LambdaControls{TracingMode: str(r.TracingMode), KMSKeyARN: str(r.KMSKeyARN)}
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
func (r *RelayModel) setControls(c provision.LambdaControls) {
	r.TracingMode, r.KMSKeyARN = types.StringValue(c.TracingMode), optString(c.KMSKeyARN)
	if c.LogFormat != provision.DefaultLogFormat {
		r.Logging = &RelayLoggingModel{LogFormat: types.StringValue(c.LogFormat),
			ApplicationLogLevel: optString(c.ApplicationLogLevel), SystemLogLevel: optString(c.SystemLogLevel)}
	}
	if len(c.SubnetIDs) > 0 {
		r.VPCConfig = &RelayVPCConfigModel{SubnetIDs: controlsSet(c.SubnetIDs), SecurityGroupIDs: controlsSet(c.SecurityGroupIDs)}
	}
}
