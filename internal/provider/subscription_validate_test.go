package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
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

// A whole number outside its limit, in queue or dead_letter, is reported by
// the attribute's validator with the very diagnostic of ValidateConfig (the
// Spec's check), so that Terraform shows it once; an explicit 0, which the
// Spec reads as its default, is reported by the validator alone.
func TestSubscriptionLimitDiagnosticIsTheSpecCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sch := subscriptionSchema()
	typ := sch.Type().TerraformType(ctx).(tftypes.Object)
	for _, c := range []struct {
		object, attribute string
		value             int
		want              string
	}{
		{"queue", "visibility_timeout_seconds", 43201, "queue.visibility_timeout_seconds is 43201: use 0 to 43200 seconds (12 hours)."},
		{"queue", "message_retention_seconds", 59, "queue.message_retention_seconds is 59: use 60 to 1209600 seconds (14 days)."},
		{"queue", "receive_wait_time_seconds", -1, "queue.receive_wait_time_seconds is -1: use 0 to 20 seconds."},
		{"queue", "max_receive_count", 1001, "queue.max_receive_count is 1001: use 1 to 1000 receives before a message goes to the dead-letter queue."},
		{"dead_letter", "message_retention_seconds", 1209601, "dead_letter.message_retention_seconds is 1209601: use 60 to 1209600 seconds (14 days)."},
		{"queue", "max_receive_count", 0, "queue.max_receive_count is 0: use 1 to 1000 receives before a message goes to the dead-letter queue."},
		{"queue", "message_retention_seconds", 0, "queue.message_retention_seconds is 0: use 60 to 1209600 seconds (14 days)."},
		{"dead_letter", "message_retention_seconds", 0, "dead_letter.message_retention_seconds is 0: use 60 to 1209600 seconds (14 days)."},
	} {
		ot := typ.AttributeTypes[c.object].(tftypes.Object)
		vals := map[string]tftypes.Value{}
		for n, at := range ot.AttributeTypes {
			vals[n] = tftypes.NewValue(at, nil)
		}
		vals[c.attribute] = tftypes.NewValue(tftypes.Number, c.value)
		cfg := subscriptionConfig(t, map[string]tftypes.Value{
			"name":    tftypes.NewValue(tftypes.String, "consumer"),
			"sources": tftypes.NewValue(tftypes.Set{ElementType: tftypes.String}, []tftypes.Value{tftypes.NewValue(tftypes.String, "com.example.orders")}),
			c.object:  tftypes.NewValue(ot, vals),
		})
		var resp resource.ValidateConfigResponse
		NewSubscriptionResource().(resource.ResourceWithValidateConfig).ValidateConfig(ctx, resource.ValidateConfigRequest{Config: cfg}, &resp)
		p := path.Root(c.object).AtName(c.attribute)
		own := runValidators(t, sch, cfg, p)
		if len(own) != 1 || own[0].Detail() != c.want || (c.value != 0) != resp.Diagnostics.Contains(own[0]) || len(resp.Diagnostics) > 1 {
			t.Errorf("%s = %d: the validator reports %v, ValidateConfig %v; want %q once", dotted(p), c.value, own, resp.Diagnostics, c.want)
		}
	}
}
