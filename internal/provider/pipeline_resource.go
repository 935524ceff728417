package provider

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relaypackage"
)

var (
	_ resource.Resource                   = &PipelineResource{}
	_ resource.ResourceWithConfigure      = &PipelineResource{}
	_ resource.ResourceWithImportState    = &PipelineResource{}
	_ resource.ResourceWithIdentity       = &PipelineResource{}
	_ resource.ResourceWithValidateConfig = &PipelineResource{}
	_ resource.ResourceWithModifyPlan     = &PipelineResource{}
)

// Default operation timeouts.
const (
	defaultCreateTimeout = 30 * time.Minute
	defaultUpdateTimeout = 30 * time.Minute
	defaultDeleteTimeout = 30 * time.Minute
)

// NewPipelineResource returns the outbox_pipeline resource.
func NewPipelineResource() resource.Resource {
	return &PipelineResource{pipelineResourceBase}
}

// pipelineResourceBase names the resource and its list resource.
var pipelineResourceBase = resourceBase{suffix: "_pipeline", what: "outbox pipeline"}

// PipelineResource is the outbox_pipeline resource: a complete
// transactional outbox on one DynamoDB table, provisioned by package
// pipeline.
type PipelineResource struct {
	resourceBase
}

func (r *PipelineResource) clients() *provision.Provisioner {
	return provision.New(r.data.AWS, r.relayCode())
}

// relayCode is the relay package embedded in the provider.
func (r *PipelineResource) relayCode() provision.RelayCode {
	return provision.RelayCode{Zip: relaypackage.Zip, SHA256: relaypackage.SHA256}
}

// ValidateConfig checks the configuration at plan time with the pipeline's
// own validation, reporting the attribute at fault and the fix.
func (r *PipelineResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m PipelineResourceModel
	resp.Diagnostics.Append(getConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() || m.Name.IsUnknown() {
		return
	}
	tags := configuredTags(ctx, m.Tags, &resp.Diagnostics)
	if m.Table != nil && m.Table.Existing.ValueBool() && m.Table.Name.IsNull() {
		resp.Diagnostics.Append(fieldDiagnostic(pipelineInvalid, path.Root("table").AtName("name"), "is required with table.existing = true", "name the existing table to adopt"))
		return
	}
	if diags := m.validateUnset(); diags.HasError() {
		resp.Diagnostics.Append(diags...)
		return
	}
	for _, err := range joined(m.spec(tags, specOptions{validating: true}).Validate()) {
		var ve *provision.ValidationError
		if !errors.As(err, &ve) {
			resp.Diagnostics.AddError(pipelineInvalid, err.Error())
			continue
		}
		fields := append([]string{ve.Field}, ve.Related...)
		if anyUnknown(ctx, req.Config, fields) || comparesUnknownTarget(m.Target, fields) {
			// A check against a value known only at apply (read as its
			// default or a placeholder here) waits for apply, where the
			// pipeline validates again.
			continue
		}
		// A limit's error is the diagnostic of the attribute's validator
		// (limitValidator) when both see the value: the framework shows
		// it once.
		resp.Diagnostics.Append(fieldDiagnostic(pipelineInvalid, specErrorPath(ve.Field), ve.Problem, ve.Fix))
	}
}

// specErrorPath is the attribute path of a Spec field in an error: name
// for a field that no attribute sets.
func specErrorPath(field string) path.Path {
	if p, ok := attributePath(field); ok {
		return p
	}
	return path.Root("name")
}

// joined returns the errors that errors.Join joined, or err alone.
func joined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// anyUnknown reports whether the value of one of the Spec's fields is
// unknown in the configuration.
func anyUnknown(ctx context.Context, config tfsdk.Config, fields []string) bool {
	for _, f := range fields {
		if p, ok := attributePath(f); ok && configUnknown(ctx, config, p) {
			return true
		}
	}
	return false
}

// comparesUnknownTarget reports whether a check of fields compares the
// target as a whole (as ordering does, which needs a FIFO topic or queue)
// while the target's address is unknown: its placeholder says nothing of
// the target that apply will see.
func comparesUnknownTarget(t *TargetModel, fields []string) bool {
	return !targetKnown(t) && slices.Contains(fields, "Target")
}

// configUnknown reports whether the configuration's value at p, or the
// object that holds it, is unknown.
func configUnknown(ctx context.Context, config tfsdk.Config, p path.Path) bool {
	for ; len(p.Steps()) > 0; p = p.ParentPath() {
		var v attr.Value
		if diags := config.GetAttribute(ctx, p, &v); !diags.HasError() && v != nil && v.IsUnknown() {
			return true
		}
	}
	return false
}

// Create builds the pipeline. If a step fails and its clean-up fails too,
// what remains is recorded (the resource is tainted) so that nothing is
// orphaned.
func (r *PipelineResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan PipelineResourceModel
	if !r.begin(&resp.Diagnostics, req.Plan.Get(ctx, &plan)) {
		return
	}
	ctx, cancel := operationContext(ctx, plan.Timeouts.Create, defaultCreateTimeout, &resp.Diagnostics)
	defer cancel()
	tags, _ := r.plannedTags(ctx, plan.Tags, &plan.TagsAll, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	st, err := r.clients().Create(ctx, plan.spec(tags, specOptions{}))
	if err != nil {
		r.failed(&resp.Diagnostics, "Creating", plan.Name.ValueString(), errorDetail(err))
		if !st.Exists() {
			return
		}
	}
	plan.setState(st)
	recordPipeline(ctx, &plan, st, nil, resp.Private, &resp.State, &resp.Diagnostics)
	r.setIdentity(ctx, resp.Identity, plan.Name.ValueString(), &resp.Diagnostics)
}

// recordPipeline keeps st and the drift found in the private state, and m in the
// state.
func recordPipeline(ctx context.Context, m *PipelineResourceModel, st provision.State, d *provision.Drift, p privateSetter, state *tfsdk.State, diags *diag.Diagnostics) {
	diags.Append(saveState(ctx, p, st, d)...)
	diags.Append(state.Set(ctx, m)...)
}

// errorDetail is the detail of an error of package provision: each invalid
// setting it holds (a ValidationError, maybe wrapped) written with its
// attribute path, built from the error's field.
func errorDetail(err error) string {
	lines := make([]string, 0, 1)
	for _, e := range joined(err) {
		msg := e.Error()
		var ve *provision.ValidationError
		if errors.As(e, &ve) {
			// The message that wraps it, with the field at its attribute.
			at := fmt.Sprintf("%s %s %s: %s", ve.Subject, dotted(specErrorPath(ve.Field)), ve.Problem, ve.Fix)
			msg = strings.Replace(msg, ve.Error(), at, 1)
		}
		lines = append(lines, msg)
	}
	detail := strings.Join(lines, "\n")
	if errors.Is(err, provision.ErrNoRelayCode) || errors.Is(err, relaypackage.ErrNotBuilt) {
		detail += "\n\nThis build of the provider does not embed the relay Lambda package. Build it with `make relay` (or `go generate ./internal/relaypackage`), then rebuild the provider with `make build`."
	}
	return detail
}

// Read observes every component. Components deleted out of band are
// cleared and the drift is kept in the private state, so that the next plan
// shows an update that repairs them. A pipeline of which nothing remains is
// removed from the state.
func (r *PipelineResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state PipelineResourceModel
	if !r.begin(&resp.Diagnostics, req.State.Get(ctx, &state)) {
		return
	}
	st, diags := loadState(ctx, req.Private, &state)
	if !r.begin(&resp.Diagnostics, diags) {
		return
	}
	tags := stateTags(ctx, state.TagsAll, &resp.Diagnostics)
	observed, drift, err := r.clients().Read(ctx, state.spec(tags, specOptions{}), st)
	if !r.observed(ctx, err, provision.ErrNotFound, state.Name.ValueString(), resp) {
		return
	}
	state.setState(observed)
	if changed := changedComponents(drift); len(changed) > 0 {
		// Show what was changed out of band: the plan restores it.
		if spec, found, err := r.clients().Lookup(ctx, state.Name.ValueString()); err == nil {
			state.showObserved(spec, foundChanged(changed, observed, found))
		}
	}
	r.showObservedClaimBucket(ctx, &state, observed, drift)
	recordPipeline(ctx, &state, observed, &drift, resp.Private, &resp.State, &resp.Diagnostics)
	r.setIdentity(ctx, resp.Identity, state.Name.ValueString(), &resp.Diagnostics)
}

// Update applies every change in place and repairs drift. Progress is
// recorded even when a step fails.
func (r *PipelineResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state PipelineResourceModel
	if !r.begin(&resp.Diagnostics, req.Plan.Get(ctx, &plan), req.State.Get(ctx, &state)) {
		return
	}
	ctx, cancel := operationContext(ctx, plan.Timeouts.Update, defaultUpdateTimeout, &resp.Diagnostics)
	defer cancel()
	st, diags := loadState(ctx, req.Private, &state)
	tags, _ := r.plannedTags(ctx, plan.Tags, &plan.TagsAll, &resp.Diagnostics)
	if !r.begin(&resp.Diagnostics, diags) {
		return
	}
	st, err := r.clients().Update(ctx, plan.spec(tags, specOptions{}), st)
	if err != nil {
		r.failed(&resp.Diagnostics, "Updating", plan.Name.ValueString(), errorDetail(err))
	}
	plan.setState(st)
	recordPipeline(ctx, &plan, st, nil, resp.Private, &resp.State, &resp.Diagnostics)
	r.setIdentity(ctx, resp.Identity, plan.Name.ValueString(), &resp.Diagnostics)
}

// Delete removes the pipeline; components already gone are skipped, and an
// adopted table only loses what the pipeline added to it.
func (r *PipelineResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state PipelineResourceModel
	if !r.begin(&resp.Diagnostics, req.State.Get(ctx, &state)) {
		return
	}
	ctx, cancel := operationContext(ctx, state.Timeouts.Delete, defaultDeleteTimeout, &resp.Diagnostics)
	defer cancel()
	st, diags := loadState(ctx, req.Private, &state)
	if !r.begin(&resp.Diagnostics, diags) {
		return
	}
	st.ForceDestroy = state.ForceDestroy.ValueBool()
	if _, err := r.clients().Delete(ctx, st); err != nil {
		r.failed(&resp.Diagnostics, "Deleting", state.Name.ValueString(), err.Error())
	}
}

// ImportState imports a pipeline by name: `terraform import outbox_pipeline.x NAME`.
func (r *PipelineResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	var spec provision.Spec
	var st provision.State
	absent := func(name string) string {
		return fmt.Sprintf("No outbox pipeline named %q exists in this account and region (its relay function %s was not found).", name, provision.NamesFor(name).RelayFunction)
	}
	id, ok := r.importedName(ctx, req, &resp.Diagnostics)
	if !ok || !r.lookUp(id, "orders", &resp.Diagnostics, provision.ErrNotFound, absent, func(name string) (err error) {
		spec, st, err = r.clients().Lookup(ctx, name)
		return err
	}) {
		return
	}
	m := modelFromSpec(spec, st, r.defaultTags())
	recordPipeline(ctx, &m, st, nil, resp.Private, &resp.State, &resp.Diagnostics)
	r.setIdentity(ctx, resp.Identity, m.Name.ValueString(), &resp.Diagnostics)
}

// validateUnset reports the empty strings of objects: package provision
// reads them as "use the default", which is not what a configuration that
// spells them out means. (Explicit zeros are refused by the attributes'
// validators.)
func (m *PipelineResourceModel) validateUnset() diag.Diagnostics {
	var diags diag.Diagnostics
	walkModelValues(reflect.ValueOf(m).Elem(), path.Empty(), func(p path.Path, _ reflect.StructField, v reflect.Value) {
		s, ok := v.Interface().(types.String)
		if ok && len(p.Steps()) > 1 && !s.IsNull() && !s.IsUnknown() && s.ValueString() == "" {
			diags.Append(fieldDiagnostic(pipelineInvalid, p, "is empty", "remove it to use the default, or set a value"))
		}
	})
	return diags
}

// dotted writes an attribute path as in configurations: relay.batch_size.
func dotted(p path.Path) string { return strings.ReplaceAll(p.String(), "\"", "") }

// warnUndeliveredOnReplace warns, on a plan that replaces the pipeline,
// when its dedicated table holds events not yet delivered: the replacement
// deletes that table, so apply will refuse unless force_destroy is set.
func (r *PipelineResource) warnUndeliveredOnReplace(ctx context.Context, state PipelineResourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	if r.data == nil || (state.Table != nil && state.Table.Existing.ValueBool()) || str(state.TableName) == "" {
		return diags
	}
	u, err := r.clients().CountUndelivered(ctx, str(state.TableName), nil)
	if err != nil || u.Total() == 0 {
		return diags
	}
	outcome := "Apply will fail before deleting anything, because force_destroy is false."
	if state.ForceDestroy.ValueBool() {
		outcome = "force_destroy is true: apply will delete the table and these events with it."
	}
	name := str(state.Name)
	diags.AddWarning("Replacing the outbox pipeline deletes undelivered events",
		fmt.Sprintf("The planned change replaces the pipeline %s, which deletes its table %s. The table holds %s events. %s "+
			"Deliver them first: `outbox drain %s` waits until none is pending, and `outbox requeue %s` sends FAILED events again once their cause is fixed.",
			name, str(state.TableName), u, outcome, name, name))
	return diags
}

// plannedIndexARN is the pending index's ARN after a rename or a switch of
// the index, both made in place: null without the index; the planned value
// when it names the index (predicted from the name, or kept); else unknown.
func plannedIndexARN(spec provision.Spec, planned types.String) types.String {
	if spec.Table.PendingIndexDisabled {
		return types.StringNull()
	}
	if planned.IsUnknown() || strings.HasSuffix(str(planned), "/index/"+spec.Table.PendingIndexName) {
		return planned
	}
	return types.StringUnknown()
}

// stateAccount is the pipeline's account and region, from the first ARN in
// the state that has both: a component deleted out of band (the table)
// leaves the others.
func stateAccount(state PipelineResourceModel) (provision.Account, error) {
	var err error
	for _, arn := range []types.String{state.TableARN, state.RelayFunctionARN, state.DeadLetterQueueARN, state.StreamARN} {
		var a provision.Account
		if a, err = provision.AccountOf(str(arn)); err == nil && a.Region != "" && a.ID != "" {
			return a, nil
		}
	}
	return provision.Account{}, fmt.Errorf("no ARN with an account in the state: %w", err)
}

// plannedMovedARNs plans unknown the ARNs that a change made in place
// alters: the roles' under a new IAM path, the schedule's in a new group.
func plannedMovedARNs(state PipelineResourceModel, spec provision.Spec, plan *PipelineResourceModel) {
	if arn := str(state.RelayRoleARN); arn != "" && !strings.Contains(arn, ":role"+spec.IAM.Path+provision.NamesFor(spec.Name).RelayRole) {
		plan.RelayRoleARN = types.StringUnknown()
		if !plan.ReconcilerRoleARN.IsNull() {
			plan.ReconcilerRoleARN, plan.SchedulerRoleARN = types.StringUnknown(), types.StringUnknown()
		}
	}
	if arn := str(state.ScheduleARN); arn != "" && !plan.ScheduleARN.IsNull() && !strings.Contains(arn, ":schedule/"+spec.Reconciler.ScheduleGroup+"/") {
		plan.ScheduleARN = types.StringUnknown()
	}
}
