package provider

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Defaults of the schema that are not package provision's.
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
		s.Table = t.spec(o)
	}
	if i := m.IAM; i != nil {
		s.IAM = provision.IAMSpec{PermissionsBoundary: str(i.PermissionsBoundary), Path: str(i.Path)}
	}
	if p := m.PendingIndex; p != nil {
		s.Table.PendingIndexName = str(p.Name)
		s.Table.PendingShards = int(i32(p.Shards))
		s.Table.PendingIndexDisabled = isFalse(p.Enabled)
	}
	s.Target = m.Target.spec(o)
	if p := m.Published; p != nil {
		s.PublishedAction = config.Action(str(p.Action))
		if known(p.TTLDays) {
			d := time.Duration(p.TTLDays.ValueInt64()) * 24 * time.Hour
			s.PublishedTTL = &d
		}
	}
	if r := m.Relay; r != nil {
		s.Architecture = provision.Architecture(str(r.Architecture))
		s.Relay, s.Mapping, s.Controls = r.function(), r.mapping(), r.controls()
	}
	if d := m.DeadLetter; d != nil {
		s.DeadLetterQueue = provision.QueueSpec{MessageRetentionSeconds: i32(d.MessageRetentionSeconds), KMSMasterKeyID: str(d.KMSMasterKeyID)}
	}
	if r := m.Reconciler; r != nil {
		s.Reconciler = r.spec()
	}
	if a := m.Alarms; a != nil {
		s.Alarms = a.spec(o)
	}
	return s
}

// known reports whether a value is neither null nor unknown.
func known(v attr.Value) bool { return !v.IsNull() && !v.IsUnknown() }

// isTrue and isFalse report a known bool's value.
func isTrue(v types.Bool) bool  { return known(v) && v.ValueBool() }
func isFalse(v types.Bool) bool { return known(v) && !v.ValueBool() }

func (t *TableModel) spec(o specOptions) provision.TableSpec {
	s := provision.TableSpec{
		Existing: isTrue(t.Existing), Name: str(t.Name),
		PartitionKey: str(t.PartitionKey), SortKey: str(t.SortKey), SortKeyPrefix: str(t.SortKeyPrefix), TTLAttribute: str(t.TTLAttribute),
		KMSKeyARN: str(t.KMSKeyARN), DeletionProtection: boolptr(t.DeletionProtection), PointInTimeRecovery: boolptr(t.PointInTimeRecovery),
	}
	if o.validating && s.Existing && t.Name.IsUnknown() {
		s.Name = "unknown-until-apply"
	}
	return s
}

func (r *RelayModel) function() provision.FunctionSpec {
	return provision.FunctionSpec{
		MemorySize: i32(r.MemorySize), Timeout: i32(r.Timeout),
		ReservedConcurrency: i32ptr(r.ReservedConcurrency), LogRetentionDays: i32(r.LogRetentionDays),
	}
}

func (r *RelayModel) mapping() provision.MappingSpec {
	return provision.MappingSpec{
		BatchSize:                    i32(r.BatchSize),
		MaximumBatchingWindowSeconds: i32(r.BatchingWindowSeconds),
		ParallelizationFactor:        i32(r.ParallelizationFactor),
		MaximumRetryAttempts:         i32ptr(r.MaximumRetryAttempts),
		MaximumRecordAgeSeconds:      i32ptr(r.MaximumRecordAgeSeconds),
		BisectBatchOnFunctionError:   boolptr(r.BisectOnError),
	}
}

func (r *ReconcilerModel) spec() provision.ReconcilerSpec {
	s := provision.ReconcilerSpec{
		Disabled: isFalse(r.Enabled), ScheduleExpression: str(r.ScheduleExpression),
		Function:         provision.FunctionSpec{MemorySize: i32(r.MemorySize), Timeout: i32(r.Timeout), LogRetentionDays: i32(r.LogRetentionDays)},
		ScheduleTimezone: str(r.ScheduleTimezone), ScheduleGroup: str(r.ScheduleGroup),
		FlexibleTimeWindowMinutes: i32(r.FlexibleTimeWindowMinutes),
	}
	if known(r.MinAgeSeconds) {
		s.MinAge = time.Duration(r.MinAgeSeconds.ValueInt64()) * time.Second
	}
	return s
}

func (a *AlarmsModel) spec(o specOptions) provision.AlarmsSpec {
	s := provision.AlarmsSpec{
		// Present, the object enables the alarms unless it says not to.
		Enabled:                          !isFalse(a.Enabled),
		SNSTopicARN:                      str(a.SNSTopicARN),
		RelayErrorsThreshold:             i32(a.RelayErrorsThreshold),
		IteratorAgeThresholdSeconds:      i32(a.IteratorAgeThresholdSeconds),
		OldestPendingAgeThresholdSeconds: i32(a.OldestPendingAgeThresholdSeconds),
		EvaluationPeriods:                i32(a.EvaluationPeriods),
		TreatMissingData:                 str(a.TreatMissingData),
	}
	if o.validating && a.SNSTopicARN.IsUnknown() {
		s.SNSTopicARN = placeholderTopicARN
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
// Lookup reports it on import: every object with defaults is whole, as the
// plan of a configuration that omits it has it; a setting without a default
// is null where it has the value that leaving it out gives.
func modelFromSpec(s provision.Spec, st provision.State, defaultTags map[string]string) PipelineResourceModel {
	d := provision.Spec{Name: s.Name}.WithDefaults()
	s = s.WithDefaults()
	m := PipelineResourceModel{Name: types.StringValue(s.Name), ForceDestroy: types.BoolValue(s.ForceDestroy)}
	m.Table = tableModelFromSpec(s, d, st)
	m.Target = targetModelFromSpec(s.Target)
	m.Published = &PublishedModel{Action: types.StringValue(string(s.PublishedAction)), TTLDays: types.Int64Value(int64(*s.PublishedTTL / (24 * time.Hour)))}
	m.PendingIndex = &PendingIndexModel{Name: types.StringValue(s.Table.PendingIndexName), Shards: types.Int64Value(int64(s.Table.PendingShards)),
		Enabled: types.BoolValue(!s.Table.PendingIndexDisabled)}
	m.IAM = &IAMModel{PermissionsBoundary: optString(s.IAM.PermissionsBoundary), Path: types.StringValue(s.IAM.Path)}
	m.Relay = relayModelFromSpec(s)
	m.DeadLetter = &DeadLetterModel{MessageRetentionSeconds: types.Int64Value(int64(s.DeadLetterQueue.MessageRetentionSeconds)), KMSMasterKeyID: optString(s.DeadLetterQueue.KMSMasterKeyID)}
	m.Reconciler = reconcilerModelFromSpec(s.Reconciler, d.Reconciler)
	m.Alarms = alarmsModelFromSpec(s.Alarms)
	m.Tags, m.TagsAll = importedTags(s.Tags, defaultTags)
	m.Timeouts = nullTimeouts()
	m.setState(st)
	return m
}

// tableModelFromSpec is the table object of an imported pipeline. s and d
// have defaults applied; d is the default Spec of the same name.
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
	return table
}

// relayModelFromSpec is the relay object of an imported pipeline; s has
// defaults applied.
func relayModelFromSpec(s provision.Spec) *RelayModel {
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
	return relay
}

// reconcilerModelFromSpec is the reconciler object of an imported
// pipeline.
func reconcilerModelFromSpec(r, d provision.ReconcilerSpec) *ReconcilerModel {
	if r.Disabled {
		// Lookup cannot tell the settings of a reconciler that does not
		// exist: report the defaults.
		r = d
		r.Disabled = true
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

// alarmsModelFromSpec is the alarms object of an imported pipeline; nil
// without alarms.
func alarmsModelFromSpec(a provision.AlarmsSpec) *AlarmsModel {
	if !a.Enabled {
		return nil
	}
	return &AlarmsModel{
		Enabled: types.BoolValue(true), SNSTopicARN: optString(a.SNSTopicARN),
		RelayErrorsThreshold:             types.Int64Value(int64(a.RelayErrorsThreshold)),
		IteratorAgeThresholdSeconds:      types.Int64Value(int64(a.IteratorAgeThresholdSeconds)),
		OldestPendingAgeThresholdSeconds: types.Int64Value(int64(a.OldestPendingAgeThresholdSeconds)),
		EvaluationPeriods:                types.Int64Value(int64(a.EvaluationPeriods)),
		TreatMissingData:                 types.StringValue(a.TreatMissingData),
	}
}

// controls maps the relay object's tracing, KMS, logging and VPC settings.
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

// setControls records the controls in the relay object, for import.
func (r *RelayModel) setControls(c provision.LambdaControls) {
	r.TracingMode, r.KMSKeyARN = types.StringValue(c.TracingMode), optString(c.KMSKeyARN)
	r.Logging = &RelayLoggingModel{LogFormat: types.StringValue(c.LogFormat),
		ApplicationLogLevel: optString(c.ApplicationLogLevel), SystemLogLevel: optString(c.SystemLogLevel)}
	if len(c.SubnetIDs) > 0 {
		r.VPCConfig = &RelayVPCConfigModel{SubnetIDs: controlsSet(c.SubnetIDs), SecurityGroupIDs: controlsSet(c.SecurityGroupIDs)}
	}
}
