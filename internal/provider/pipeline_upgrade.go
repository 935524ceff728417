package provider

import (
	"context"
	"reflect"

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
// own frozen schema and model (pipeline_upgrade_prior.go):
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
	return map[int64]resource.StateUpgrader{
		0: {PriorSchema: priorSchema(ctx, 0, pipelineModelV0{}), StateUpgrader: func(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
			var old pipelineModelV0
			if priorState(ctx, req, &old, &resp.Diagnostics) {
				r.upgrade(ctx, old, resp)
			}
		}},
		1: {PriorSchema: priorSchema(ctx, 1, pipelineModelV1{}), StateUpgrader: func(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
			var old pipelineModelV1
			if priorState(ctx, req, &old, &resp.Diagnostics) {
				r.upgrade(ctx, old.pipelineModelV0, resp) // the writer is computed again
			}
		}},
	}
}

// priorState reads the state to upgrade, which the framework decoded with
// the version's prior schema, into its frozen model.
func priorState(ctx context.Context, req resource.UpgradeStateRequest, old any, diags *diag.Diagnostics) bool {
	if req.State == nil {
		diags.AddError("Upgrading the outbox pipeline's state", "The state to upgrade is empty: report this as a bug of the provider.")
		return false
	}
	diags.Append(req.State.Get(ctx, old)...)
	return !diags.HasError()
}

// upgrade writes the state of today's schema that a state of version 0 or 1
// (old) describes.
func (r *PipelineResource) upgrade(ctx context.Context, old pipelineModelV0, resp *resource.UpgradeStateResponse) {
	sch := r.schema(ctx)
	var m PipelineResourceModel
	copyByName(reflect.ValueOf(&m).Elem(), reflect.ValueOf(old))
	m.Writer = types.ObjectNull(writerAttrTypes())
	resp.State = tfsdk.State{Schema: sch}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	resp.Diagnostics.Append(fillDefaults(ctx, &resp.State, path.Empty(), sch.Attributes)...)
	resp.Diagnostics.Append(resp.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if old.ForceDestroy.IsNull() && !m.Table.Existing.ValueBool() {
		// Written before the table's protection settings existed: the table
		// has neither.
		m.Table.DeletionProtection, m.Table.PointInTimeRecovery = types.BoolValue(false), types.BoolValue(false)
	}
	if !m.Table.Existing.ValueBool() && !m.StreamARN.IsNull() {
		// Those versions enabled a dedicated table's stream as NEW_IMAGE;
		// Read reports another view type.
		m.StreamViewType = types.StringValue(provision.StreamViewNewImage)
	}
	m.Writer = writerValue(m.spec(nil, specOptions{}).WithDefaults(), m.TableName, m.TTLAttributeInUse, writerKnown{table: true, pendingIndex: true})
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
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
