package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
)

var _ resource.ResourceWithUpgradeState = &PipelineResource{}

// UpgradeState upgrades states of older schema versions:
//
//   - 0 to 1: version 1 adds the computed writer object, filled in here
//     from the settings and the table's name and TTL attribute, so that the
//     first plan after the upgrade shows no change.
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
	var m PipelineResourceModel
	resp.Diagnostics.Append(old.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	m.Writer = writerValue(m.spec(nil, specOptions{}).WithDefaults(), m.TableName, m.TTLAttributeInUse, writerKnown{table: true, pendingIndex: true})
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
