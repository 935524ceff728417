package provider

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// placeholderTopicARN stands for a topic ARN that is unknown at plan time,
// so that the rest of the configuration can be validated.
const placeholderTopicARN = "arn:aws:sns:us-east-1:123456789012:unknown-until-apply"

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

// spec maps the model to a provision.Spec. tags are the merged tags
// (default_tags and tags); null or unknown values mean the defaults.
func (m *PipelineResourceModel) spec(tags map[string]string, o specOptions) provision.Spec {
	s := provision.Spec{Tags: tags}
	modelToSpec(m, &s)
	s.Target = m.Target.spec(o)
	if a := m.Alarms; a != nil {
		// Present, the object enables the alarms unless it says not to.
		s.Alarms.Enabled = !isFalse(a.Enabled)
	}
	if cc := m.ClaimCheck; cc != nil {
		// Likewise the claim check.
		s.ClaimCheck.Enabled = !isFalse(cc.Enabled)
	}
	if o.validating {
		m.placeholders(&s)
	}
	return s
}

// placeholders substitutes valid values for the unknown settings without a
// default that other checks need.
func (m *PipelineResourceModel) placeholders(s *provision.Spec) {
	if t := m.Table; t != nil && s.Table.Existing && t.Name.IsUnknown() {
		s.Table.Name = "unknown-until-apply"
	}
	if a := m.Alarms; a != nil && a.SNSTopicARN.IsUnknown() {
		s.Alarms.SNSTopicARN = placeholderTopicARN
	}
}

// known reports whether a value is neither null nor unknown.
func known(v attr.Value) bool { return !v.IsNull() && !v.IsUnknown() }

// isFalse reports a known bool's value.
func isFalse(v types.Bool) bool { return known(v) && !v.ValueBool() }

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
	m.Writer = writerValue(s, m.TableName, m.TTLAttributeInUse, writerKnown{table: true, pendingIndex: true, claim: true})
	m.claimCheckOutputs(s, st.Account(), true)
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
	if s.Reconciler.Disabled {
		// Lookup cannot tell the settings of a reconciler that does not
		// exist: report the defaults.
		s.Reconciler = d.Reconciler
		s.Reconciler.Disabled = true
	}
	var m PipelineResourceModel
	specToModel(s, &m)
	m.Table.Name, m.Table.TTLAttribute = importedTable(s, d, st)
	m.Target = targetModelFromSpec(s.Target)
	if !s.Alarms.Enabled {
		m.Alarms = nil
	}
	if !s.ClaimCheck.Enabled {
		m.ClaimCheck = nil
	} else if dflt := (provision.Spec{Name: s.Name, ClaimCheck: provision.ClaimCheckSpec{Enabled: true}}).WithDefaults(); !s.ClaimCheck.Existing &&
		s.ClaimCheck.BucketName == dflt.ClaimCheck.BucketName {
		m.ClaimCheck.BucketName = types.StringNull()
	}
	if len(s.Controls.SubnetIDs) == 0 {
		m.Relay.VPCConfig = nil
	}
	if len(s.MultiRegion.Regions) == 0 {
		m.MultiRegion = nil
	}
	m.Tags, m.TagsAll = importedTags(s.Tags, defaultTags)
	m.Timeouts = nullTimeouts()
	m.setState(st)
	return m
}

// importedTable is the name and TTL attribute of the table of an imported
// pipeline. s and d have defaults applied; d is the default Spec of the same
// name. The name is null where it is the default.
func importedTable(s, d provision.Spec, st provision.State) (name, ttl types.String) {
	ttl = types.StringValue(s.Table.TTLAttribute)
	if s.Table.Existing && !st.Added.TTL {
		// The table had its own TTL attribute, which the pipeline reuses
		// whatever ttl_attribute says; report the default.
		ttl = types.StringValue(outbox.DefaultTTLAttribute)
	}
	name = types.StringNull()
	if s.Table.Existing || s.Table.Name != d.Table.Name {
		name = types.StringValue(s.Table.Name)
	}
	return name, ttl
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

// listStrings is the strings of a list, in order: empty, not nil, for a
// known empty list, which a check then reports.
func listStrings(v types.List) []string {
	if v.IsNull() || v.IsUnknown() {
		return nil
	}
	out := []string{}
	for _, e := range v.Elements() {
		if s, ok := e.(types.String); ok && !s.IsNull() && !s.IsUnknown() {
			out = append(out, s.ValueString())
		}
	}
	return out
}

// stringList is the list of s.
func stringList(s []string) types.List {
	elems := make([]attr.Value, 0, len(s))
	for _, e := range s {
		elems = append(elems, types.StringValue(e))
	}
	return types.ListValueMust(types.StringType, elems)
}

func controlsSet(s []string) types.Set {
	elems := make([]attr.Value, 0, len(s))
	for _, e := range s {
		elems = append(elems, types.StringValue(e))
	}
	return types.SetValueMust(types.StringType, elems)
}
