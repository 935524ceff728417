package provider

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
)

var (
	_ resource.Resource                   = &SubscriptionResource{}
	_ resource.ResourceWithConfigure      = &SubscriptionResource{}
	_ resource.ResourceWithImportState    = &SubscriptionResource{}
	_ resource.ResourceWithIdentity       = &SubscriptionResource{}
	_ resource.ResourceWithValidateConfig = &SubscriptionResource{}
	_ resource.ResourceWithModifyPlan     = &SubscriptionResource{}
)

// subscriptionDefaultTimeout is the default of every operation's timeout.
const subscriptionDefaultTimeout = 10 * time.Minute

// NewSubscriptionResource returns the outbox_subscription resource.
func NewSubscriptionResource() resource.Resource {
	return &SubscriptionResource{subscriptionResourceBase}
}

// subscriptionResourceBase names the resource and its list resource.
var subscriptionResourceBase = resourceBase{suffix: "_subscription", what: "outbox subscription"}

// SubscriptionResource is the outbox_subscription resource: a consumer of a
// pipeline's events, provisioned by package subscription.
type SubscriptionResource struct {
	resourceBase
}

func (r *SubscriptionResource) clients() *subscription.Provisioner {
	return subscription.New(r.data.AWS)
}

// Schema describes the resource.
func (r *SubscriptionResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	stable := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A consumer of a pipeline's events: an EventBridge rule that matches them by source and detail type (or by a full event pattern) " +
			"and delivers them to the consumer's own SQS queue, with its own dead-letter queue (redrive) and a queue policy that lets only that rule send.\n\n" +
			"Messages are EventBridge events whose `detail` is the outbox envelope `{\"metadata\":{\"eventId\",\"occurredAt\"},\"data\":{...}}`; " +
			"delivery is at least once, so consumers deduplicate on `detail.metadata.eventId`. " +
			"The rule is called `name`, the queues `name` and `name-dlq`.\n\n" +
			"For a pipeline that publishes to an SNS topic, `topic_arn` subscribes the queue to the topic instead of a rule: raw message delivery, " +
			"so that each message is the published event itself, and a filter policy on its `source` and `detail-type` message attributes. " +
			"To a FIFO topic both queues are FIFO queues (`name.fifo`, `name-dlq.fifo`), which receive each aggregate's events in order.",
		Attributes: map[string]schema.Attribute{
			"id":   computedStringAttr("The subscription's name, its import id."),
			"name": nameAttr("subscription", ": of the rule (`<name>`), the queue (`<name>`) and the dead-letter queue (`<name>-dlq`)", subscription.MaxNameLength),
			"event_bus": schema.StringAttribute{
				Optional: true, Computed: true, Default: stringdefault.StaticString(subscription.DefaultEventBus),
				MarkdownDescription: "Name or ARN of the EventBridge bus of the rule, typically `outbox_pipeline.<name>.target_arn`. Defaults to `default`. " +
					"A name and an ARN of the same bus are the same setting. Changing the bus replaces the subscription.",
				PlanModifiers: []planmodifier.String{sameEventBus{}},
			},
			"sources": schema.SetAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Event sources to match (the outbox event's `Source`), such as `[\"com.example.orders\"]`. " +
					"With `detail_types`, builds the rule's pattern `{\"source\":[...],\"detail-type\":[...]}`; unset matches any source. Conflicts with `event_pattern`.",
			},
			"detail_types": schema.SetAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Detail types to match (the outbox event's `DetailType`), such as `[\"OrderPlaced\"]`; unset matches any detail type. Conflicts with `event_pattern`.",
			},
			"event_pattern": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "A complete EventBridge event pattern, as a JSON object (use `jsonencode`), for matching on more than source and detail type, " +
					"such as `detail.data` fields. A reformatted but equivalent document is not a change. " +
					"Conflicts with `sources` and `detail_types`; one of the three is required.",
				Validators:    []validator.String{stringvalidator.ConflictsWith(path.MatchRoot("sources"), path.MatchRoot("detail_types"))},
				PlanModifiers: []planmodifier.String{semanticJSON{}},
			},
			"topic_arn": schema.StringAttribute{
				Optional: true,
				MarkdownDescription: "ARN of an SNS topic to subscribe the queue to instead of a rule on `event_bus`, typically `outbox_pipeline.<name>.target_arn` of a pipeline that publishes to a topic. " +
					"The subscription has raw message delivery (the queue receives the published event itself) and a filter policy on the `source` and `detail-type` message attributes, built from `sources` and `detail_types`. " +
					"To a FIFO topic (`.fifo`), both queues are FIFO queues (`<name>.fifo`, `<name>-dlq.fifo`), and each order's events arrive in order. Conflicts with `event_bus` and `event_pattern`. Changing it replaces the subscription.",
				Validators:    []validator.String{stringvalidator.ConflictsWith(path.MatchRoot("event_bus"), path.MatchRoot("event_pattern"))},
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()},
			},
			"subscription_arn": schema.StringAttribute{
				Computed: true, PlanModifiers: stable,
				MarkdownDescription: "ARN of the queue's subscription to `topic_arn`; null for a subscription on a bus. Planned unknown when the subscription or the queue policy needs a repair.",
			},
			"tags": schema.MapAttribute{
				Optional: true, ElementType: types.StringType,
				MarkdownDescription: "Tags of the rule, both queues and the inbox table. Merged with the provider's `default_tags`; these win on conflicts.",
			},
			"tags_all": schema.MapAttribute{
				Computed: true, ElementType: types.StringType,
				MarkdownDescription: "The tags applied: the provider's `default_tags` merged with `tags`.",
			},
			"rule_arn": schema.StringAttribute{
				Computed: true, PlanModifiers: stable,
				MarkdownDescription: "ARN of the EventBridge rule, the only source the queue policy accepts. Planned unknown when the rule, its target or the queue policy needs a repair.",
			},
			"queue_url":             computedStringAttr("URL of the consumer's queue (`<name>`), for its `ReceiveMessage` calls."),
			"queue_arn":             computedStringAttr("ARN of the consumer's queue, for its IAM policy or an event source mapping."),
			"dead_letter_queue_url": computedStringAttr("URL of the dead-letter queue (`<name>-dlq`)."),
			"dead_letter_queue_arn": computedStringAttr("ARN of the dead-letter queue."),
			"queue":                 subscriptionQueueAttribute(),
			"dead_letter":           subscriptionDeadLetterAttribute(),
			"inbox":                 subscriptionInboxAttribute(),
		},
		Blocks: map[string]schema.Block{
			"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true}),
		},
	}
	declareSettings(resp.Schema.Attributes, settingsDeclaration{
		model: reflect.TypeFor[SubscriptionResourceModel](), defaults: subscription.Spec{}.WithDefaults(), limit: subscription.Limit, summary: subscriptionInvalid,
	})
}

// subscriptionInvalid is the summary of an invalid subscription setting.
const subscriptionInvalid = "Invalid outbox subscription configuration"

// subscriptionQueueAttribute is the queue object of outbox_subscription.
func subscriptionQueueAttribute() schema.SingleNestedAttribute {
	return defaultedObject("The consumer's queue.", map[string]schema.Attribute{
		"visibility_timeout_seconds": intSetting("How long a received message stays hidden from other consumers, {limit}; longer than the consumer takes to process a message."),
		"message_retention_seconds":  intSetting("How long the queue keeps a message, {limit} (14 days)."),
		"receive_wait_time_seconds":  intSetting("Long polling: how long `ReceiveMessage` waits for a message, {limit}."),
		"max_receive_count":          intSetting("Receives of a message that was not deleted before SQS moves it to the dead-letter queue, {limit}."),
		"kms_master_key_id": schema.StringAttribute{
			Optional: true,
			MarkdownDescription: "KMS key (id, ARN or alias) that encrypts both queues; unset uses SQS-managed encryption (SSE-SQS). " +
				"The key's policy must let `events.amazonaws.com` call `kms:GenerateDataKey` and `kms:Decrypt`, which rules out the AWS managed key `alias/aws/sqs`.",
		},
	})
}

// subscriptionDeadLetterAttribute is the dead_letter object of
// outbox_subscription.
func subscriptionDeadLetterAttribute() schema.SingleNestedAttribute {
	return defaultedObject("The dead-letter queue, which receives the messages that the consumer failed to process `queue.max_receive_count` times.", map[string]schema.Attribute{
		"message_retention_seconds": intSetting("How long the dead-letter queue keeps a message, {limit}; at least `queue.message_retention_seconds`, " +
			"since a dead letter keeps the time it was first enqueued."),
	})
}

// semanticJSON keeps the prior value of a JSON string that means the same as
// the configured one, so that reformatting it is not a change.
type semanticJSON struct{}

func (semanticJSON) Description(context.Context) string {
	return "An equivalent JSON document (layout and key order aside) is not a change."
}

func (m semanticJSON) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (semanticJSON) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.StateValue.IsNull() || req.StateValue.IsUnknown() || req.PlanValue.IsNull() || req.PlanValue.IsUnknown() {
		return
	}
	if subscription.SameJSON(req.StateValue.ValueString(), req.PlanValue.ValueString()) {
		resp.PlanValue = req.StateValue
	}
}

// sameEventBus keeps the prior value of event_bus when the configured one
// names the same bus (a name and an ARN), and otherwise requires replacing
// the subscription.
type sameEventBus struct{}

func (sameEventBus) Description(context.Context) string {
	return "A bus name and the ARN of the same bus are the same setting; another bus replaces the subscription."
}

func (m sameEventBus) MarkdownDescription(ctx context.Context) string { return m.Description(ctx) }

func (sameEventBus) PlanModifyString(_ context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.State.Raw.IsNull() || req.Plan.Raw.IsNull() || req.StateValue.IsNull() {
		return
	}
	if !req.PlanValue.IsUnknown() && subscription.BusName(req.PlanValue.ValueString()) == subscription.BusName(req.StateValue.ValueString()) {
		resp.PlanValue = req.StateValue
		return
	}
	resp.RequiresReplace = true
}

// ValidateConfig checks the configuration at plan time with the
// subscription's own validation, reporting the attribute at fault and the
// fix. Values unknown until apply are checked then.
func (r *SubscriptionResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m SubscriptionResourceModel
	resp.Diagnostics.Append(getConfig(ctx, req.Config, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if diags := append(m.validateUnset(), m.validateInboxUnset()...); diags.HasError() {
		resp.Diagnostics.Append(diags...)
		return
	}
	patternUnknown := partlyUnknown(m.Sources) || partlyUnknown(m.DetailTypes) || m.EventPattern.IsUnknown()
	if !patternUnknown && m.Sources.IsNull() && m.DetailTypes.IsNull() && m.EventPattern.IsNull() {
		resp.Diagnostics.AddAttributeError(path.Root("sources"), "Invalid outbox subscription configuration",
			"sources, detail_types and event_pattern are all unset: set sources and/or detail_types to the events to receive, such as detail_types = [\"OrderPlaced\"], or a full event_pattern.")
		return
	}
	if !m.EventPattern.IsNull() && (!m.Sources.IsNull() || !m.DetailTypes.IsNull()) {
		return // reported by the ConflictsWith validator
	}
	tags := configuredTags(ctx, m.Tags, &resp.Diagnostics)
	s := m.spec(tags)
	// Placeholders for what is not known yet.
	if m.Name.IsUnknown() {
		s.Name = "unknown-until-apply"
	}
	if m.EventBus.IsUnknown() {
		s.EventBus = subscription.DefaultEventBus
	}
	if patternUnknown {
		s.Sources, s.DetailTypes, s.EventPattern = []string{"unknown-until-apply"}, nil, ""
	}
	if q := m.Queue; q != nil && q.VisibilityTimeoutSeconds.IsUnknown() {
		s.Queue.VisibilityTimeoutSeconds = nil
	}
	m.Inbox.placeholders(s.Inbox)
	err := s.Validate()
	if err == nil {
		return
	}
	var ve *subscription.ValidationError
	if !errors.As(err, &ve) {
		resp.Diagnostics.AddError("Invalid outbox subscription configuration", err.Error())
		return
	}
	p, ok := subscriptionFieldPaths()[ve.Field]
	if !ok {
		p = path.Root("name")
	}
	if p.Equal(path.Root("dead_letter").AtName("message_retention_seconds")) && m.DeadLetter == nil {
		// The default is at fault only because the queue keeps messages longer.
		p = path.Root("queue").AtName("message_retention_seconds")
	}
	resp.Diagnostics.Append(fieldDiagnostic(subscriptionInvalid, p, ve.Problem, ve.Fix))
}

// validateUnset reports empty strings and sets that the subscription
// package would read as "use the default". An explicit 0 that it would
// read so is outside the attribute's limit, which its validator reports.
func (m *SubscriptionResourceModel) validateUnset() diag.Diagnostics {
	var diags diag.Diagnostics
	empty := func(p path.Path, v types.String, fix string) {
		if !v.IsNull() && !v.IsUnknown() && strings.TrimSpace(v.ValueString()) == "" {
			diags.AddAttributeError(p, "Invalid outbox subscription configuration", fmt.Sprintf("%s is empty: %s.", dotted(p), fix))
		}
	}
	empty(path.Root("event_bus"), m.EventBus, `remove it to use the default bus, or set a bus name or ARN`)
	empty(path.Root("event_pattern"), m.EventPattern, `remove it and set sources or detail_types, or set a JSON object such as jsonencode({ source = ["com.example.orders"] })`)
	for name, set := range map[string]types.Set{"sources": m.Sources, "detail_types": m.DetailTypes} {
		if !set.IsNull() && !set.IsUnknown() && len(set.Elements()) == 0 {
			diags.AddAttributeError(path.Root(name), "Invalid outbox subscription configuration",
				fmt.Sprintf("%s is an empty set, which would match nothing: list at least one value, or remove it to match any value.", name))
		}
	}
	if q := m.Queue; q != nil {
		p := path.Root("queue")
		empty(p.AtName("kms_master_key_id"), q.KMSMasterKeyID, "remove it to use SQS-managed encryption, or set a KMS key id, ARN or alias")
	}
	return diags
}

// ModifyPlan computes the merged tags and turns drift found by Read into an
// update that repairs it.
func (r *SubscriptionResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var plan SubscriptionResourceModel
	unknownObjects, ok := getPlan(ctx, req, resp, &plan)
	if !ok {
		return
	}
	r.plannedTags(ctx, plan.Tags, &plan.TagsAll, &resp.Diagnostics)
	plan.ID = types.StringUnknown()
	if !plan.Name.IsUnknown() {
		plan.ID = plan.Name
	}
	if req.State.Raw.IsNull() {
		resp.Diagnostics.Append(setPlan(ctx, &resp.Plan, &plan, unknownObjects)...)
		return
	}
	drift, diags := loadDrift(ctx, req.Private)
	resp.Diagnostics.Append(diags...)
	plan.planRepairs(drift)
	plan.planInbox()
	resp.Diagnostics.Append(setPlan(ctx, &resp.Plan, &plan, unknownObjects)...)
}

// applySpec returns the Spec of the planned model, with the merged tags
// recorded in tags_all.
func (r *SubscriptionResource) applySpec(ctx context.Context, m *SubscriptionResourceModel, diags *diag.Diagnostics) subscription.Spec {
	tags, _ := r.plannedTags(ctx, m.Tags, &m.TagsAll, diags)
	return m.spec(tags)
}

// recordSubscription sets the model's computed attributes from st and
// keeps m in the state; the drift that Read found is kept in the private
// state until the next apply repairs it.
func recordSubscription(ctx context.Context, m *SubscriptionResourceModel, st subscription.State, d *awsops.Drift, p privateSetter, state *tfsdk.State, diags *diag.Diagnostics) {
	m.setState(st)
	diags.Append(saveDrift(ctx, p, d)...)
	diags.Append(state.Set(ctx, m)...)
}

// Create builds the subscription. If a step fails and its clean-up fails
// too, what remains is recorded (the resource is tainted) so that nothing is
// orphaned.
func (r *SubscriptionResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan SubscriptionResourceModel
	if !r.begin(&resp.Diagnostics, req.Plan.Get(ctx, &plan)) {
		return
	}
	ctx, cancel := operationContext(ctx, plan.Timeouts.Create, subscriptionDefaultTimeout, &resp.Diagnostics)
	defer cancel()
	s := r.applySpec(ctx, &plan, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	st, err := r.clients().Create(ctx, s)
	if err != nil {
		r.failed(&resp.Diagnostics, "Creating", s.Name, err.Error())
		if !st.Exists() {
			return
		}
	}
	recordSubscription(ctx, &plan, st, nil, resp.Private, &resp.State, &resp.Diagnostics)
	r.setIdentity(ctx, resp.Identity, plan.Name.ValueString(), &resp.Diagnostics)
}

// Read observes every component. Components deleted out of band are
// cleared and the drift is kept in the private state, so that the next plan
// shows an update that repairs them. A subscription of which nothing remains
// is removed from the state.
func (r *SubscriptionResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var state SubscriptionResourceModel
	if !r.begin(&resp.Diagnostics, req.State.Get(ctx, &state)) {
		return
	}
	s := state.spec(stateTags(ctx, state.TagsAll, &resp.Diagnostics))
	observed, drift, err := r.clients().Read(ctx, s, state.subscriptionState())
	if !r.observed(ctx, err, subscription.ErrNotFound, state.Name.ValueString(), resp) {
		return
	}
	state.showInbox(observed.Inbox)
	recordSubscription(ctx, &state, observed, &drift, resp.Private, &resp.State, &resp.Diagnostics)
	r.setIdentity(ctx, resp.Identity, state.Name.ValueString(), &resp.Diagnostics)
}

// Update applies every change in place and repairs drift. Progress is
// recorded even when a step fails.
func (r *SubscriptionResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state SubscriptionResourceModel
	if !r.begin(&resp.Diagnostics, req.Plan.Get(ctx, &plan), req.State.Get(ctx, &state)) {
		return
	}
	ctx, cancel := operationContext(ctx, plan.Timeouts.Update, subscriptionDefaultTimeout, &resp.Diagnostics)
	defer cancel()
	s := r.applySpec(ctx, &plan, &resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	st, err := r.clients().Update(ctx, s, state.subscriptionState())
	if err != nil {
		r.failed(&resp.Diagnostics, "Updating", s.Name, err.Error())
	}
	recordSubscription(ctx, &plan, st, nil, resp.Private, &resp.State, &resp.Diagnostics)
	r.setIdentity(ctx, resp.Identity, plan.Name.ValueString(), &resp.Diagnostics)
}

// Delete removes the subscription; components already gone are skipped.
func (r *SubscriptionResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state SubscriptionResourceModel
	if !r.begin(&resp.Diagnostics, req.State.Get(ctx, &state)) {
		return
	}
	ctx, cancel := operationContext(ctx, state.Timeouts.Delete, subscriptionDefaultTimeout, &resp.Diagnostics)
	defer cancel()
	if _, err := r.clients().Delete(ctx, state.subscriptionState()); err != nil {
		r.failed(&resp.Diagnostics, "Deleting", state.Name.ValueString(), err.Error())
	}
}

// ImportState imports a subscription by name:
// `terraform import outbox_subscription.x NAME`.
func (r *SubscriptionResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	var s subscription.Spec
	var st subscription.State
	absent := func(name string) string {
		return fmt.Sprintf("No outbox subscription named %q exists in this account and region: neither its queue nor its rule on the default bus was found.", name)
	}
	id, ok := r.importedName(ctx, req, &resp.Diagnostics)
	if !ok || !r.lookUp(id, "billing", &resp.Diagnostics, subscription.ErrNotFound, absent, func(name string) (err error) {
		s, st, err = r.clients().Lookup(ctx, name)
		return err
	}) {
		return
	}
	m := subscriptionModelFromSpec(s, st, r.defaultTags())
	recordSubscription(ctx, &m, st, nil, resp.Private, &resp.State, &resp.Diagnostics)
	r.setIdentity(ctx, resp.Identity, m.Name.ValueString(), &resp.Diagnostics)
}
