package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
)

var _ resource.ResourceWithUpgradeState = &PipelineResource{}

// pipelineSchemaVersion is the version of the resource's schema; see
// UpgradeState for the upgrades of older states.
const pipelineSchemaVersion = 2

// UpgradeState upgrades states of older schema versions. Blocks and single
// nested attributes have the same shape in a state, so one upgrade serves
// every older version:
//
//   - 0 to 1 added the computed writer object, filled in here from the
//     settings and the table's name and TTL attribute, and optional
//     settings with a default (force_destroy, table.deletion_protection,
//     reconciler.schedule_timezone...);
//   - 1 to 2 turned the blocks into single nested attributes with defaults:
//     an omitted block was null, an omitted object is the object of its
//     defaults.
//
// Null attributes and objects that have a default get it, so that the first
// plan after the upgrade shows only what the new defaults change.
func (r *PipelineResource) UpgradeState(ctx context.Context) map[int64]resource.StateUpgrader {
	return map[int64]resource.StateUpgrader{0: {StateUpgrader: r.upgrade}, 1: {StateUpgrader: r.upgrade}}
}

func (r *PipelineResource) upgrade(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
	sch := r.schema(ctx)
	typ := sch.Type().TerraformType(ctx)
	if req.RawState == nil {
		resp.Diagnostics.AddError("Upgrading the outbox pipeline's state", "The state to upgrade is empty: report this as a bug of the provider.")
		return
	}
	// Attributes that an older version lacks are read as null.
	raw, err := req.RawState.Unmarshal(typ)
	if err != nil {
		resp.Diagnostics.AddError("Upgrading the outbox pipeline's state", fmt.Sprintf("Reading the older state: %v.", err))
		return
	}
	old := tfsdk.State{Schema: sch, Raw: raw}
	resp.Diagnostics.Append(fillDefaults(ctx, &old, path.Empty(), sch.Attributes)...)
	var m PipelineResourceModel
	resp.Diagnostics.Append(old.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
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
