package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

var _ resource.ResourceWithUpgradeState = &PipelineResource{}

// pipelineSchemaVersion is the version of the resource's schema; see
// UpgradeState for the upgrades of older states.
const pipelineSchemaVersion = 2

// UpgradeState upgrades states of older schema versions, each read with its
// own frozen schema (pipeline_upgrade_prior.go), whose values are copied to
// the attributes of the same path today:
//
//   - 0 to 1 added the computed writer object, filled in here from the
//     settings and the table's name and TTL attribute;
//   - 1 to 2 turned the blocks into single nested attributes with defaults:
//     an omitted block was null, an omitted object is the object of its
//     defaults.
//
// Null settings that have a default get it, except where the version that
// wrote the state did otherwise: a state without force_destroy comes from a
// provider that created tables without deletion protection or point-in-time
// recovery, so the upgraded state records them off, and the first plan
// shows that the defaults turn them on.
func (r *PipelineResource) UpgradeState(ctx context.Context) map[int64]resource.StateUpgrader {
	upgrader := resource.StateUpgrader{StateUpgrader: r.upgrade}
	v0, v1 := upgrader, upgrader // the writer of version 1 is computed again
	v0.PriorSchema, v1.PriorSchema = priorSchema(ctx, 0), priorSchema(ctx, 1)
	return map[int64]resource.StateUpgrader{0: v0, 1: v1}
}

// upgrade writes the state of today's schema that a state of version 0 or 1
// describes.
func (r *PipelineResource) upgrade(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
	if req.State == nil {
		resp.Diagnostics.AddError("Upgrading the outbox pipeline's state", "The state to upgrade is empty: report this as a bug of the provider.")
		return
	}
	sch := r.schema(ctx)
	resp.State = tfsdk.State{Schema: sch}
	noMap := types.MapNull(types.StringType)
	resp.Diagnostics.Append(resp.State.Set(ctx, &PipelineResourceModel{
		Tags: noMap, TagsAll: noMap, AlarmARNs: noMap, Timeouts: nullTimeouts(), Writer: types.ObjectNull(writerAttrTypes()),
	})...)
	resp.Diagnostics.Append(copyPrior(ctx, *req.State, &resp.State, path.Empty(), pipelineV0)...)
	resp.Diagnostics.Append(fillDefaults(ctx, &resp.State, path.Empty(), sch.Attributes)...)
	var m PipelineResourceModel
	var forceDestroy types.Bool
	resp.Diagnostics.Append(resp.State.Get(ctx, &m)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("force_destroy"), &forceDestroy)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if forceDestroy.IsNull() && !m.Table.Existing.ValueBool() {
		// Written before the table's protection settings existed: the table
		// has neither.
		m.Table.DeletionProtection, m.Table.PointInTimeRecovery = types.BoolValue(false), types.BoolValue(false)
	}
	if !m.Table.Existing.ValueBool() && !m.StreamARN.IsNull() {
		// Those versions enabled a dedicated table's stream as NEW_IMAGE;
		// Read reports another view type.
		m.StreamViewType = types.StringValue(provision.StreamViewNewImage)
	}
	m.Writer = writerValue(m.spec(nil, specOptions{}).WithDefaults(), m.TableName, m.TTLAttributeInUse, writerKnown{table: true, pendingIndex: true, claim: true})
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// copyPrior copies the values under at of the prior state, whose frozen
// block is b, to the attributes of the same path that today's state has;
// a block the prior state has not (null) stays null, and takes its
// defaults.
func copyPrior(ctx context.Context, prior tfsdk.State, st *tfsdk.State, at path.Path, b priorBlock) diag.Diagnostics {
	var diags diag.Diagnostics
	names := []string{}
	for name := range b.attrs {
		names = append(names, name)
	}
	if at.Equal(path.Empty()) {
		names = append(names, "timeouts")
	}
	for _, name := range names {
		p := at.AtName(name)
		var v attr.Value
		diags.Append(prior.GetAttribute(ctx, p, &v)...)
		if _, err := st.Schema.AttributeAtPath(ctx, p); err.HasError() && name != "timeouts" {
			continue // removed since
		}
		diags.Append(st.SetAttribute(ctx, p, v)...)
	}
	for name, nested := range b.blocks {
		p := at.AtName(name)
		var v attr.Value
		if diags.Append(prior.GetAttribute(ctx, p, &v)...); v == nil || v.IsNull() {
			continue
		}
		diags.Append(copyPrior(ctx, prior, st, p, nested)...)
	}
	return diags
}

// fillDefaults sets the null attributes under at that have a default to
// it, and descends into the objects the state has.
func fillDefaults(ctx context.Context, st *tfsdk.State, at path.Path, attrs map[string]schema.Attribute) diag.Diagnostics {
	var diags diag.Diagnostics
	for name, a := range attrs {
		p := at.AtName(name)
		var v attr.Value
		diags.Append(st.GetAttribute(ctx, p, &v)...)
		if v == nil {
			continue
		}
		if def, ok := attributeDefault(ctx, p, a); ok && v.IsNull() {
			diags.Append(st.SetAttribute(ctx, p, def)...)
			continue
		}
		if nested, ok := a.(schema.SingleNestedAttribute); ok && !v.IsNull() && !v.IsUnknown() {
			diags.Append(fillDefaults(ctx, st, p, nested.Attributes)...)
		}
	}
	return diags
}

// attributeDefault is the default value of an attribute, if it has one.
func attributeDefault(ctx context.Context, p path.Path, a schema.Attribute) (attr.Value, bool) {
	switch a := a.(type) {
	case schema.BoolAttribute:
		if a.Default != nil {
			var resp defaults.BoolResponse
			a.Default.DefaultBool(ctx, defaults.BoolRequest{Path: p}, &resp)
			return resp.PlanValue, true
		}
	case schema.Int64Attribute:
		if a.Default != nil {
			var resp defaults.Int64Response
			a.Default.DefaultInt64(ctx, defaults.Int64Request{Path: p}, &resp)
			return resp.PlanValue, true
		}
	case schema.StringAttribute:
		if a.Default != nil {
			var resp defaults.StringResponse
			a.Default.DefaultString(ctx, defaults.StringRequest{Path: p}, &resp)
			return resp.PlanValue, true
		}
	case schema.SingleNestedAttribute:
		if a.Default != nil {
			var resp defaults.ObjectResponse
			a.Default.DefaultObject(ctx, defaults.ObjectRequest{Path: p}, &resp)
			return resp.PlanValue, true
		}
	}
	return nil, false
}
