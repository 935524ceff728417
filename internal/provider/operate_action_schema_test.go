package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/action"

	"github.com/outboxkit/terraform-provider-outbox/internal/operate"
)

// Each action is its subcommand: named outbox_<subcommand>, an attribute
// for each of its flags, its permissions in the description, and a
// description with the default on every attribute.
func TestOperateActionSchemas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	actions := (&OutboxProvider{}).Actions(ctx)
	if len(actions) != len(operateCommands) {
		t.Fatalf("%d actions, want %d", len(actions), len(operateCommands))
	}
	for i, newAction := range actions {
		a := newAction()
		var meta action.MetadataResponse
		a.Metadata(ctx, action.MetadataRequest{ProviderTypeName: "outbox"}, &meta)
		if want := "outbox_" + operateCommands[i]; meta.TypeName != want {
			t.Errorf("action %d is %s, want %s", i, meta.TypeName, want)
		}
		var resp action.SchemaResponse
		a.Schema(ctx, action.SchemaRequest{}, &resp)
		if resp.Diagnostics.HasError() {
			t.Fatalf("%s: %v", meta.TypeName, resp.Diagnostics)
		}
		if diags := resp.Schema.ValidateImplementation(ctx); diags.HasError() {
			t.Errorf("%s: %v", meta.TypeName, diags)
		}
		op, _ := operate.LookupOperation(operateCommands[i])
		for _, p := range op.Permissions {
			if !strings.Contains(resp.Schema.MarkdownDescription, "`"+p+"`") {
				t.Errorf("%s: the description does not list the permission %s", meta.TypeName, p)
			}
		}
		if got, want := len(resp.Schema.Attributes), len(op.Options)+2; got != want {
			t.Errorf("%s: %d attributes, want %d (pipeline, region and one a flag)", meta.TypeName, got, want)
		}
		for _, o := range op.Options {
			if _, ok := resp.Schema.Attributes[attributeName(o.Flag)]; !ok {
				t.Errorf("%s: no attribute for --%s", meta.TypeName, o.Flag)
			}
		}
		for name, attr := range resp.Schema.Attributes {
			d := attr.GetMarkdownDescription()
			if !strings.Contains(d, "Default") && !strings.Contains(d, "default") && !strings.Contains(d, "required") {
				t.Errorf("%s.%s: the description %q gives no default", meta.TypeName, name, d)
			}
		}
	}
}

// An option's description is its flag's usage as a sentence, with the
// default.
func TestOptionDescription(t *testing.T) {
	t.Parallel()
	tests := []struct {
		o    operate.Option
		want string
	}{
		{operate.Option{Usage: "wait at most DURATION", Default: "10m"}, "Wait at most DURATION. Defaults to `10m`."},
		{operate.Option{Usage: "the ID of the event (required)", Required: true}, "The ID of the event. No default: required."},
		{operate.Option{Usage: "publish to BUS (default: the pipeline's target)"}, "Publish to BUS (default: the pipeline's target)."},
		{operate.Option{Usage: "only events of this SOURCE"}, "Only events of this SOURCE. Unset by default."},
	}
	for _, tt := range tests {
		if got := optionDescription(tt.o); got != tt.want {
			t.Errorf("optionDescription(%+v) = %q, want %q", tt.o, got, tt.want)
		}
	}
}
