package provider

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// The warning of a plan that replaces a pipeline counts the undelivered
// events of its table and says what apply will do.
func TestWarnUndeliveredOnReplace(t *testing.T) {
	t.Parallel()
	stack := localawstest.Start(t)
	cfg := localawstest.Config(stack)
	ctx := t.Context()
	r := &PipelineResource{resourceBase{data: &ProviderData{AWS: cfg}}}
	c := r.clients()
	table := outbox.Table{Name: "warned-outbox"}.WithDefaults()
	if _, err := c.DynamoDB.CreateTable(ctx, table.CreateTableInput()); err != nil {
		t.Fatal(err)
	}
	state := PipelineResourceModel{Name: types.StringValue("warned"), TableName: types.StringValue(table.Name), ForceDestroy: types.BoolValue(false)}
	if diags := r.warnUndeliveredOnReplace(ctx, state); len(diags) != 0 {
		t.Fatalf("an empty table warns: %v", diags)
	}
	w, err := outbox.NewWriter(c.DynamoDB, table)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := w.Write(ctx, nil, outbox.Event{Source: "shop", DetailType: "OrderPlaced", Detail: json.RawMessage(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	diags := r.warnUndeliveredOnReplace(ctx, state)
	if len(diags) != 1 || !strings.Contains(diags[0].Detail(), "2 PENDING and 0 FAILED") || !strings.Contains(diags[0].Detail(), "Apply will fail") {
		t.Fatalf("warning = %v", diags)
	}
	state.ForceDestroy = types.BoolValue(true)
	if diags := r.warnUndeliveredOnReplace(ctx, state); len(diags) != 1 || !strings.Contains(diags[0].Detail(), "apply will delete the table and these events") {
		t.Fatalf("warning under force_destroy = %v", diags)
	}
	state.Table = &TableModel{Existing: types.BoolValue(true)}
	if diags := r.warnUndeliveredOnReplace(ctx, state); len(diags) != 0 {
		t.Fatalf("an adopted table, which a replacement keeps, warns: %v", diags)
	}
}

// TestNoReconcilerWarning: a plan without the reconciler warns, on
// reconciler.enabled, which events can then never be delivered; a plan with
// it, or one where it is not known yet, does not.
func TestNoReconcilerWarning(t *testing.T) {
	t.Parallel()
	off := planInputs{reconcilerKnown: true, spec: provision.Spec{Reconciler: provision.ReconcilerSpec{Disabled: true}}}
	diags := off.noReconcilerWarning()
	if len(diags) != 1 || diags.WarningsCount() != 1 {
		t.Fatalf("without the reconciler: %v, want one warning", diags)
	}
	w, ok := diags[0].(diag.DiagnosticWithPath)
	if !ok || !w.Path().Equal(path.Root("reconciler").AtName("enabled")) {
		t.Errorf("the warning is not on reconciler.enabled: %v", diags[0])
	}
	for _, want := range []string{"24-hour retention", "dead-letter queue"} {
		if !strings.Contains(diags[0].Detail(), want) {
			t.Errorf("the warning does not name %q: %s", want, diags[0].Detail())
		}
	}
	for name, in := range map[string]planInputs{
		"with the reconciler": {reconcilerKnown: true},
		"not known yet":       {spec: provision.Spec{Reconciler: provision.ReconcilerSpec{Disabled: true}}},
	} {
		if d := in.noReconcilerWarning(); len(d) != 0 {
			t.Errorf("%s: %v, want no warning", name, d)
		}
	}
}
