package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// This file holds the glue that the outbox_pipeline and
// outbox_subscription resources share: tags and the drift kept in the
// private state.

// mergedTags returns the provider's default tags overridden by the
// resource's tags. known is false when the resource's tags are unknown.
func mergedTags(ctx context.Context, defaults map[string]string, tags types.Map) (map[string]string, bool, diag.Diagnostics) {
	out := maps.Clone(defaults)
	if out == nil {
		out = map[string]string{}
	}
	if tags.IsUnknown() {
		return out, false, nil
	}
	var own map[string]string
	diags := tags.ElementsAs(ctx, &own, false)
	maps.Copy(out, own)
	return out, true, diags
}

func tagsValue(tags map[string]string) types.Map {
	elems := map[string]attr.Value{}
	for k, v := range tags {
		elems[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, elems)
}

// importedTags splits the tags that an import found into the resource's
// own (those that differ from the provider's default tags; null when there
// are none) and tags_all.
func importedTags(tags, defaultTags map[string]string) (own, all types.Map) {
	mine := map[string]string{}
	for k, v := range tags {
		if dv, ok := defaultTags[k]; !ok || dv != v {
			mine[k] = v
		}
	}
	own = types.MapNull(types.StringType)
	if len(mine) > 0 {
		own = tagsValue(mine)
	}
	return own, tagsValue(tags)
}

type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// privateDrift is the key of the drift that Read found, in the resource's
// private state.
const privateDrift = "drift"

// saveDrift records the drift that Read found; nil or no drift removes it.
func saveDrift(ctx context.Context, p privateSetter, d *awsops.Drift) diag.Diagnostics {
	var diags diag.Diagnostics
	var b []byte
	if d != nil && !d.None() {
		var err error
		if b, err = json.Marshal(d); err != nil {
			diags.AddError("Recording the drift found", fmt.Sprintf("Encoding the drift (%s): %v. Report this as a bug of the provider.", d, err))
			return diags
		}
	}
	// An empty value removes the key.
	diags.Append(p.SetKey(ctx, privateDrift, b)...)
	return diags
}

// loadDrift returns the drift that Read recorded. An unreadable record is
// reported as a warning and read as no drift: the next refresh records it
// again.
func loadDrift(ctx context.Context, p privateGetter) (awsops.Drift, diag.Diagnostics) {
	var d awsops.Drift
	b, diags := p.GetKey(ctx, privateDrift)
	if len(b) > 0 {
		if err := json.Unmarshal(b, &d); err != nil {
			diags.AddWarning("Reading the drift found", fmt.Sprintf("The drift recorded in the private state is unreadable (%v); it is ignored until the next refresh records it again.", err))
			return awsops.Drift{}, diags
		}
	}
	return d, diags
}

// computedStringAttr is a computed string that keeps its state's value in
// plans.
func computedStringAttr(desc string) schema.StringAttribute {
	return schema.StringAttribute{
		Computed: true, MarkdownDescription: desc,
		PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
	}
}

// nameAttr is the name attribute of a resource (what), which names its
// components (as components tells, after "Name of the <what>"): 1 to
// maxLength letters, digits, hyphens and underscores. Changing it replaces
// the resource.
func nameAttr(what, components string, maxLength int) schema.StringAttribute {
	return schema.StringAttribute{
		Required: true,
		MarkdownDescription: fmt.Sprintf("Name of the %s%s. 1 to %d letters, digits, hyphens and underscores. Changing it replaces the %s.",
			what, components, maxLength, what),
		PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
	}
}

// withWaitLog returns ctx whose long waits (such as SQS's 60 seconds before
// a deleted queue's name can be reused) are logged at INFO with their
// reason.
func withWaitLog(ctx context.Context) context.Context {
	return awsops.WithNotifier(ctx, func(ctx context.Context, msg string) { tflog.Info(ctx, msg) })
}

// nullTimeouts is an unset timeouts block, as an import records it.
func nullTimeouts() timeouts.Value {
	return timeouts.Value{Object: types.ObjectNull(map[string]attr.Type{
		"create": types.StringType, "update": types.StringType, "delete": types.StringType,
	})}
}
