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

// TestAdoptedStreamWarning: a plan of a pipeline whose adopted table's
// stream was changed by hand to KEYS_ONLY warns, on stream_view_type, that
// apply will fail until the stream has the new image again; a dedicated
// table's, whose stream apply replaces, or one with the new image does not.
func TestAdoptedStreamWarning(t *testing.T) {
	t.Parallel()
	adopted := provision.Spec{Table: provision.TableSpec{Existing: true, Name: "shop"}}
	prior := func(view string) *PipelineResourceModel {
		return &PipelineResourceModel{TableName: types.StringValue("shop"), StreamViewType: types.StringValue(view)}
	}
	diags := planInputs{spec: adopted, prior: prior("KEYS_ONLY")}.adoptedStreamWarning()
	if len(diags) != 1 || diags.WarningsCount() != 1 || !strings.Contains(diags[0].Detail(), "KEYS_ONLY") || !strings.Contains(diags[0].Detail(), "Apply will fail") {
		t.Fatalf("adopted KEYS_ONLY stream: %v, want one warning naming the view type", diags)
	}
	if w, ok := diags[0].(diag.DiagnosticWithPath); !ok || !w.Path().Equal(path.Root("stream_view_type")) {
		t.Errorf("the warning is not on stream_view_type: %v", diags[0])
	}
	for name, in := range map[string]planInputs{
		"dedicated":           {prior: prior("KEYS_ONLY")},
		"new image":           {spec: adopted, prior: prior("NEW_AND_OLD_IMAGES")},
		"creation":            {spec: adopted},
		"not yet read (null)": {spec: adopted, prior: &PipelineResourceModel{StreamViewType: types.StringNull()}},
	} {
		if d := in.adoptedStreamWarning(); len(d) != 0 {
			t.Errorf("%s: %v, want no warning", name, d)
		}
	}
}

// TestTargetSizeWarning: moving a pipeline from an SQS queue or an event
// bus (1 MiB) to an SNS topic (256 KiB) warns, on target, that larger
// pending events will be marked FAILED and kept; a move to a kind that
// takes as much, a creation, or an unknown target does not.
func TestTargetSizeWarning(t *testing.T) {
	t.Parallel()
	const queue, topic = "arn:aws:sqs:us-east-1:123456789012:orders", "arn:aws:sns:us-east-1:123456789012:orders"
	priorOn := func(target TargetModel) *PipelineResourceModel { return &PipelineResourceModel{Target: &target} }
	sqsTarget := TargetModel{QueueARN: types.StringValue(queue), TopicARN: types.StringNull(), EventBus: types.StringNull(), Envelope: types.StringNull()}
	snsSpec := provision.Spec{Target: provision.TargetSpec{Type: "sns", TopicARN: topic}}.WithDefaults()
	busSpec := provision.Spec{}.WithDefaults()

	diags := planInputs{spec: snsSpec, prior: priorOn(sqsTarget), targetKnown: true}.targetSizeWarning()
	if len(diags) != 1 || diags.WarningsCount() != 1 || !strings.Contains(diags[0].Detail(), "1048576") || !strings.Contains(diags[0].Detail(), "262144") ||
		!strings.Contains(diags[0].Detail(), "FAILED") {
		t.Fatalf("sqs to sns: %v, want one warning naming both limits", diags)
	}
	if w, ok := diags[0].(diag.DiagnosticWithPath); !ok || !w.Path().Equal(path.Root("target")) {
		t.Errorf("the warning is not on target: %v", diags[0])
	}
	for name, in := range map[string]planInputs{
		"sqs to eventbridge": {spec: busSpec, prior: priorOn(sqsTarget), targetKnown: true},
		"creation":           {spec: snsSpec, targetKnown: true},
		"unknown target":     {spec: snsSpec, prior: priorOn(sqsTarget)},
	} {
		if d := in.targetSizeWarning(); len(d) != 0 {
			t.Errorf("%s: %v, want no warning", name, d)
		}
	}
}
