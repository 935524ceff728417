package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// subscriptionConfig returns a configuration of outbox_subscription with
// every attribute and block null but those given.
func subscriptionConfig(t *testing.T, set map[string]tftypes.Value) tfsdk.Config {
	t.Helper()
	ctx := context.Background()
	var sr resource.SchemaResponse
	NewSubscriptionResource().Schema(ctx, resource.SchemaRequest{}, &sr)
	if sr.Diagnostics.HasError() {
		t.Fatal(sr.Diagnostics)
	}
	typ, ok := sr.Schema.Type().TerraformType(ctx).(tftypes.Object)
	if !ok {
		t.Fatalf("the schema's type is %T", sr.Schema.Type().TerraformType(ctx))
	}
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	for name, v := range set {
		vals[name] = v
	}
	return tfsdk.Config{Schema: sr.Schema, Raw: tftypes.NewValue(typ, vals)}
}

// A set whose elements are not known yet (sources = [var.source] while
// Terraform validates a root module, or an attribute of another resource)
// is checked at apply, not converted.
func TestSubscriptionValidateConfigUnknownElements(t *testing.T) {
	t.Parallel()
	set := tftypes.Set{ElementType: tftypes.String}
	for _, attr := range []string{"sources", "detail_types"} {
		cfg := subscriptionConfig(t, map[string]tftypes.Value{
			"name": tftypes.NewValue(tftypes.String, "consumer"),
			attr:   tftypes.NewValue(set, []tftypes.Value{tftypes.NewValue(tftypes.String, tftypes.UnknownValue)}),
		})
		var resp resource.ValidateConfigResponse
		NewSubscriptionResource().(resource.ResourceWithValidateConfig).ValidateConfig(context.Background(), resource.ValidateConfigRequest{Config: cfg}, &resp)
		if resp.Diagnostics.HasError() {
			t.Errorf("%s with an unknown element: %v", attr, resp.Diagnostics)
		}
	}
	// The check still runs on known values.
	cfg := subscriptionConfig(t, map[string]tftypes.Value{"name": tftypes.NewValue(tftypes.String, "consumer")})
	var resp resource.ValidateConfigResponse
	NewSubscriptionResource().(resource.ResourceWithValidateConfig).ValidateConfig(context.Background(), resource.ValidateConfigRequest{Config: cfg}, &resp)
	if !resp.Diagnostics.HasError() {
		t.Error("a subscription with no sources, detail_types or event_pattern passes validation")
	}
}
