package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

// planInputs is what ModifyPlan knows of a planned pipeline.
type planInputs struct {
	spec provision.Spec // with defaults
	// prior is the state before the plan; nil on create.
	prior *PipelineResourceModel
	// account is where the pipeline lives, when a prior state says so.
	account provision.Account
	drift   awsops.Drift
	// known reports which settings are known at plan time.
	nameKnown, tableKnown, targetKnown, reconcilerKnown, alarmsKnown bool
}

func (in planInputs) reconcilerOn() bool { return !in.reconcilerKnown || !in.spec.Reconciler.Disabled }

// noReconcilerWarning says, for a plan without the reconciler, which events
// can then never be delivered.
func (in planInputs) noReconcilerWarning() diag.Diagnostics {
	var diags diag.Diagnostics
	if !in.reconcilerOn() {
		diags.AddAttributeWarning(path.Root("reconciler").AtName("enabled"), "The outbox pipeline has no reconciler",
			"Without the reconciler, some events can never be delivered: records trimmed from the stream after its 24-hour retention (a mapping paused or failing that long), "+
				"and the events of batches that ran out of retries and went to the dead-letter queue. They stay PENDING in the table until the reconciler is enabled again.")
	}
	return diags
}

// adoptedStreamWarning says, for a plan of a pipeline whose adopted table's
// stream lacks the new image (its view type changed by hand), that apply
// will fail until the table's owner changes it back: the pipeline does not
// replace another's stream.
func (in planInputs) adoptedStreamWarning() diag.Diagnostics {
	var diags diag.Diagnostics
	if in.prior == nil || !in.spec.Table.Existing || in.prior.StreamViewType.IsNull() || provision.HasNewImage(str(in.prior.StreamViewType)) {
		return diags
	}
	diags.AddAttributeWarning(path.Root("stream_view_type"), "The adopted table's stream lacks the new image",
		fmt.Sprintf("The stream of the table %s has view type %s, which lacks the new image that the relay reads, and the pipeline does not replace the stream of a table it adopted. "+
			"Apply will fail until the stream is NEW_IMAGE or NEW_AND_OLD_IMAGES again (disable it, then enable it with that view type). Events written meanwhile stay PENDING; the reconciler publishes them.",
			str(in.prior.TableName), str(in.prior.StreamViewType)))
	return diags
}

// regionError reports, on multi_region.regions, a multi-Region pipeline
// planned in a Region that is not one of its peers (the Region of the
// provider's credentials, or of the pipeline's state): its relay would
// publish nothing. An unknown Region waits for apply, which checks again.
func (in planInputs) regionError() diag.Diagnostics {
	var diags diag.Diagnostics
	var ve *provision.ValidationError
	if err := in.spec.CheckRegion(in.account.Region); errors.As(err, &ve) {
		diags.Append(fieldDiagnostic(pipelineInvalid, specErrorPath(ve.Field), ve.Problem, ve.Fix))
	}
	return diags
}

// adoptionError reports, on the field at fault, a table to adopt that the
// pipeline cannot use (provision.CheckAdoptable): a global table with
// multi-Region strong consistency, or another key. It reads the table when
// the plan adopts one it did not adopt before; a table it cannot read
// waits for apply, which checks again.
func (r *PipelineResource) adoptionError(ctx context.Context, in planInputs) diag.Diagnostics {
	var diags diag.Diagnostics
	if r.data == nil || !in.tableKnown || !in.spec.Table.Existing || (in.prior != nil && str(in.prior.TableName) == in.spec.Table.Name) {
		return diags
	}
	var ve *provision.ValidationError
	if err := r.clients().CheckAdoptable(ctx, in.spec); errors.As(err, &ve) {
		diags.Append(fieldDiagnostic(pipelineInvalid, specErrorPath(ve.Field), ve.Problem, ve.Fix))
	}
	return diags
}

// ModifyPlan computes what is known at plan time (the names and ARNs that
// follow from name, merged tags, the relay package's checksum, the target's
// ARN, the writer's settings), plans replacements that AWS cannot apply in
// place, and turns drift found by Read into an update.
func (r *PipelineResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var plan PipelineResourceModel
	unknownObjects, ok := getPlan(ctx, req, resp, &plan)
	if !ok {
		return
	}
	tags, _ := r.plannedTags(ctx, plan.Tags, &plan.TagsAll, &resp.Diagnostics)
	in := planInputs{spec: plan.spec(tags, specOptions{}).WithDefaults()}
	in.setKnown(&plan)
	if !req.State.Raw.IsNull() {
		in.prior = &PipelineResourceModel{}
		resp.Diagnostics.Append(req.State.Get(ctx, in.prior)...)
		st, diags := loadState(ctx, req.Private, in.prior)
		if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
			return
		}
		in.account = st.Account()
		in.drift, diags = loadDrift(ctx, req.Private)
		resp.Diagnostics.Append(diags...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	if in.account.ID == "" && in.prior != nil {
		in.account, _ = stateAccount(*in.prior)
	}
	if in.account.ID == "" {
		in.account = r.callerAccount()
	}
	resp.Diagnostics.Append(in.noReconcilerWarning()...)
	resp.Diagnostics.Append(in.adoptedStreamWarning()...)
	if resp.Diagnostics.Append(in.regionError()...); resp.Diagnostics.HasError() {
		return
	}
	if resp.Diagnostics.Append(r.adoptionError(ctx, in)...); resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(in.targetSizeWarning()...)
	r.planPackage(&plan, in, &resp.Diagnostics)
	in.planComputedStrings(&plan)
	in.planAlarmARNs(&plan)
	plan.claimCheckOutputs(in.spec, in.account, in.claimCheckKnown(&plan))
	plan.Writer = in.writer(&plan)
	plan.PendingIndexARN = plannedIndexARN(in.spec, plan.PendingIndexARN)
	plan.StreamViewType = in.plannedViewType()
	if in.prior != nil {
		plannedMovedARNs(*in.prior, in.spec, &plan)
		resp.RequiresReplace = append(resp.RequiresReplace, in.replacements(ctx, &plan)...)
		if len(resp.RequiresReplace) > 0 {
			resp.Diagnostics.Append(r.warnUndeliveredOnReplace(ctx, *in.prior)...)
		}
	}
	resp.Diagnostics.Append(setPlan(ctx, &resp.Plan, &plan, unknownObjects)...)
	if in.prior != nil && !resp.Diagnostics.HasError() && resp.Plan.Raw.Equal(req.State.Raw) && in.planUnseenDrift(&plan) {
		resp.Diagnostics.Append(setPlan(ctx, &resp.Plan, &plan, unknownObjects)...)
	}
}

// callerAccount is the account and region that the provider's credentials
// create components in, as STS GetCallerIdentity reported them; empty when
// the credentials were not checked (skip_credentials_validation).
func (r *PipelineResource) callerAccount() provision.Account {
	if r.data == nil || r.data.Identity.AccountID == "" || r.data.AWS.Region == "" {
		return provision.Account{}
	}
	arn, err := provision.ParseARN(r.data.Identity.ARN)
	if err != nil {
		return provision.Account{}
	}
	return provision.Account{Partition: arn.Partition, Region: r.data.AWS.Region, ID: r.data.Identity.AccountID}
}

// setKnown records which parts of the configuration are known.
func (in *planInputs) setKnown(plan *PipelineResourceModel) {
	in.nameKnown = !plan.Name.IsUnknown()
	t := plan.Table
	in.tableKnown = in.nameKnown && (t == nil || (!t.Name.IsUnknown() && !t.Existing.IsUnknown() &&
		!t.TTLAttribute.IsUnknown() && !t.PartitionKey.IsUnknown() && !t.SortKey.IsUnknown() && !t.SortKeyPrefix.IsUnknown() &&
		!partlyUnknown(t.ReplicaRegions)))
	in.targetKnown = targetKnown(plan.Target)
	in.reconcilerKnown = plan.Reconciler == nil || !plan.Reconciler.Enabled.IsUnknown()
	in.alarmsKnown = plan.Alarms == nil || (!plan.Alarms.Enabled.IsUnknown() && in.reconcilerKnown)
}

// planPackage plans the checksum of the relay package of the architecture.
func (r *PipelineResource) planPackage(plan *PipelineResourceModel, in planInputs, diags *diag.Diagnostics) {
	plan.RelayPackageSHA256 = types.StringUnknown()
	if plan.Relay != nil && plan.Relay.Architecture.IsUnknown() {
		return
	}
	sha, err := r.relayCode().SHA256(string(in.spec.Architecture))
	if err != nil {
		diags.AddWarning("The relay package is not built into this provider",
			fmt.Sprintf("%v. Apply will fail: %v", err, provision.ErrNoRelayCode))
		return
	}
	plan.RelayPackageSHA256 = types.StringValue(sha)
}

// predicted returns the values that follow from the configuration alone,
// where what they follow from is known.
func (in planInputs) predicted() provision.State {
	if !in.nameKnown {
		return provision.State{}
	}
	p := in.spec.Predicted(in.account)
	if !in.tableKnown {
		p.TableName, p.TableARN, p.PendingIndexARN, p.TTLAttribute = "", "", "", ""
	}
	if !in.targetKnown {
		p.TargetARN = ""
	}
	if !in.reconcilerKnown {
		p.ReconcilerFunctionName, p.ReconcilerFunctionARN, p.ReconcilerLogGroup = "", "", ""
	}
	if in.prior != nil && in.spec.Table.Existing && in.tableKnown && p.TTLAttribute == "" &&
		!in.hasDrift(provision.ComponentTable, provision.ComponentTTL) && str(in.prior.TableName) == in.spec.Table.Name {
		// An adopted table keeps the TTL attribute it has.
		p.TTLAttribute = str(in.prior.TTLAttributeInUse)
	}
	return p
}

// missing reports whether Read found one of the components deleted out of
// band.
func (in planInputs) missing(components ...string) bool {
	return slices.ContainsFunc(in.drift.Missing, func(c string) bool { return slices.Contains(components, c) })
}

func (in planInputs) hasDrift(components ...string) bool {
	return slices.ContainsFunc(in.drift.Components(), func(c string) bool { return slices.Contains(components, c) })
}

// planComputedStrings plans every computed string: null for the
// reconciler's when it is disabled; unknown where the repair of a change
// found by Read gives it a new value (a stream of the wrong view type is
// replaced); the predicted value where there is one (a component deleted
// out of band was cleared by Read, so its predicted ARN shows its
// re-creation); unknown where drift will change it; otherwise what the
// framework planned (the state's value for stable attributes). A change
// that no setting shows is left to planUnseenDrift.
func (in planInputs) planComputedStrings(plan *PipelineResourceModel) {
	p := in.predicted()
	for _, c := range computedStrings {
		if c.name == "relay_package_sha256" {
			continue
		}
		v := c.model(plan)
		switch predicted := *c.state(&p); {
		case c.reconciler && !in.reconcilerOn():
			*v = types.StringNull()
		case in.prior != nil && in.replaced(c):
			*v = types.StringUnknown()
		case predicted != "":
			*v = types.StringValue(predicted)
		case in.missing(c.components...):
			*v = types.StringUnknown()
		case c.reconciler && (in.prior == nil || c.model(in.prior).IsNull()):
			*v = types.StringUnknown()
		case !c.stable:
			*v = types.StringUnknown()
		}
	}
}

// planAlarmARNs keeps the alarms' ARNs while the same alarms exist
// unchanged.
func (in planInputs) planAlarmARNs(plan *PipelineResourceModel) {
	want := map[string]bool{}
	for _, d := range provision.AlarmDefinitions(in.spec) {
		want[d.Key] = true
	}
	plan.AlarmARNs = types.MapUnknown(types.StringType)
	if !in.alarmsKnown {
		return
	}
	if len(want) == 0 {
		plan.AlarmARNs = types.MapNull(types.StringType)
		return
	}
	alarmDrift := slices.ContainsFunc(in.drift.Components(), func(c string) bool { return strings.HasPrefix(c, "alarm_") })
	if in.prior == nil || alarmDrift || in.prior.AlarmARNs.IsNull() || len(in.prior.AlarmARNs.Elements()) != len(want) {
		return
	}
	for k := range in.prior.AlarmARNs.Elements() {
		if !want[k] {
			return
		}
	}
	plan.AlarmARNs = in.prior.AlarmARNs
}

// replacements returns the attributes whose change replaces the pipeline,
// by the pipeline's own rules (defaults applied). A changed setting of an
// absent object (a default that follows from another setting, such as the
// table's name from name) is reported on its object, the attribute path that
// exists in the plan.
func (in planInputs) replacements(ctx context.Context, plan *PipelineResourceModel) []path.Path {
	var out []path.Path
	priorTags := map[string]string{}
	in.prior.TagsAll.ElementsAs(ctx, &priorTags, false)
	for _, f := range provision.ReplacementFields(in.prior.spec(priorTags, specOptions{}), in.spec) {
		p, ok := specFieldPaths()[f]
		if !ok {
			continue
		}
		if block := p.Steps()[0].String(); len(p.Steps()) > 1 && !blockPresent(plan, strings.Trim(block, `"`)) {
			p = path.Root(strings.Trim(block, `"`))
		}
		out = append(out, p)
	}
	if t := plan.Table; t != nil && (t.Name.IsUnknown() || t.Existing.IsUnknown() || t.PartitionKey.IsUnknown() || t.SortKey.IsUnknown()) {
		out = append(out, path.Root("table"))
	}
	return out
}

// replaced reports whether Read found a change whose repair gives the
// computed string a new value (see computedAttr.replacedBy).
func (in planInputs) replaced(c computedAttr) bool {
	for _, ch := range in.drift.Changed {
		if slices.Contains(c.replacedBy, ch.Component) {
			return true
		}
		for _, f := range ch.Fields {
			if slices.Contains(c.replacedBy, ch.Component+"."+f) {
				return true
			}
		}
	}
	return false
}

// planUnseenDrift turns a plan that changes nothing, while Read found
// components changed out of band in a way that no setting shows (a
// function's environment, a role's policy), into an update that repairs
// them: it plans their computed strings unknown. A plan that changes
// anything else is an update already, and Update repairs every component,
// so the values that do not change stay known. It reports whether it
// changed the plan.
func (in planInputs) planUnseenDrift(plan *PipelineResourceModel) bool {
	changed := false
	for _, c := range computedStrings {
		if v := c.model(plan); !v.IsNull() && in.changedUnseen(plan, c.components) {
			*v, changed = types.StringUnknown(), true
		}
	}
	return changed
}

// plannedViewType is the view type of the table's stream after apply: the
// stream's when it carries the new image; else NEW_IMAGE, the stream that
// apply creates on a dedicated table (new, or replacing one changed by
// hand); unknown for an adopted table whose stream was not read yet.
func (in planInputs) plannedViewType() types.String {
	if !in.tableKnown {
		return types.StringUnknown()
	}
	sameTable := in.prior != nil && str(in.prior.TableName) == in.spec.Table.Name && !in.missing(provision.ComponentTable)
	switch {
	case sameTable && in.spec.KeepsStream(str(in.prior.StreamViewType)):
		return in.prior.StreamViewType
	case in.spec.Table.Existing && (!sameTable || in.prior.StreamViewType.IsNull()):
		return types.StringUnknown()
	}
	return types.StringValue(in.spec.StreamViewType())
}

// targetSizeWarning says, for a plan that moves the pipeline to a kind of
// target that takes smaller events than its current one (an SQS queue or
// an event bus to an SNS topic), what becomes of the larger events already
// written: the relay marks each FAILED, kept in the table with its reason,
// and none is lost.
func (in planInputs) targetSizeWarning() diag.Diagnostics {
	var diags diag.Diagnostics
	if in.prior == nil || !in.targetKnown {
		return diags
	}
	before, errBefore := in.prior.spec(nil, specOptions{}).WithDefaults().Target.Kind()
	after, errAfter := in.spec.Target.Kind()
	if errBefore != nil || errAfter != nil || after.Limits().MessageBytes >= before.Limits().MessageBytes {
		return diags
	}
	diags.AddAttributeWarning(path.Root("target"), "The new target takes smaller events",
		fmt.Sprintf("The %s target takes events of up to %d bytes; the %s target takes %d. Events already written, and still pending, that are larger "+
			"will be marked FAILED by the relay, with their reason, and kept in the table (`outbox failed` lists them; `outbox requeue` publishes them again once a target takes them), "+
			"so wait for the backlog to drain before applying. From now on, write with the %s target's limit (Go: outbox.WithTarget(%q)), "+
			"and give the writer a claim check for larger events.",
			before.Type(), before.Limits().MessageBytes, after.Type(), after.Limits().MessageBytes, after.Type(), after.Type()))
	return diags
}
