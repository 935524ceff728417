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

// UpgradeState upgrades states of older schema versions:
//
//   - 0 to 1: version 1 adds the computed writer object, filled in here
//     from the settings and the table's name and TTL attribute, and optional
//     settings with a default (force_destroy, table.deletion_protection,
//     reconciler.schedule_timezone...), set to their defaults in the blocks
//     the state has, so that the first plan after the upgrade shows only
//     what the new defaults change.
func (r *PipelineResource) UpgradeState(ctx context.Context) map[int64]resource.StateUpgrader {
	return map[int64]resource.StateUpgrader{0: {StateUpgrader: r.upgradeV0}}
}

func (r *PipelineResource) upgradeV0(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(ctx)
	if req.RawState == nil {
		resp.Diagnostics.AddError("Upgrading the outbox pipeline's state", "The state to upgrade is empty: report this as a bug of the provider.")
		return
	}
	// Attributes that version 0 lacks are read as null.
	raw, err := req.RawState.Unmarshal(typ)
	if err != nil {
		resp.Diagnostics.AddError("Upgrading the outbox pipeline's state", fmt.Sprintf("Reading the version 0 state: %v.", err))
		return
	}
	old := tfsdk.State{Schema: sr.Schema, Raw: raw}
	resp.Diagnostics.Append(fillDefaults(ctx, sr.Schema, &old)...)
	var m PipelineResourceModel
	resp.Diagnostics.Append(old.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	m.Writer = writerValue(m.spec(nil, specOptions{}).WithDefaults(), m.TableName, m.TTLAttributeInUse, writerKnown{table: true, pendingIndex: true})
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// fillDefaults sets the null attributes that have a default, at the top
// level and in the single nested blocks the state has, to their defaults.
func fillDefaults(ctx context.Context, s schema.Schema, st *tfsdk.State) diag.Diagnostics {
	var diags diag.Diagnostics
	fill := func(at path.Path, attrs map[string]schema.Attribute) {
		for name, a := range attrs {
			p := at.AtName(name)
			def, ok := attributeDefault(ctx, p, a)
			if !ok {
				continue
			}
			var v attr.Value
			diags.Append(st.GetAttribute(ctx, p, &v)...)
			if v != nil && v.IsNull() {
				diags.Append(st.SetAttribute(ctx, p, def)...)
			}
		}
	}
	fill(path.Empty(), s.Attributes)
	for name, b := range s.Blocks {
		nb, ok := b.(schema.SingleNestedBlock)
		if !ok {
			continue
		}
		var v attr.Value
		diags.Append(st.GetAttribute(ctx, path.Root(name), &v)...)
		if v != nil && !v.IsNull() {
			fill(path.Root(name), nb.Attributes)
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
	}
	return nil, false
}
