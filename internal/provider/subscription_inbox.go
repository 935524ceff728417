package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
)

// SubscriptionInboxModel is the inbox object of outbox_subscription: the
// consumer kit's inbox table. Its settings are those of outbox_pipeline's
// table; Read keeps the values it observed, so that a setting changed by
// hand plans "false -> true" and apply repairs it.
type SubscriptionInboxModel struct {
	Existing            types.Bool   `tfsdk:"existing"`
	Name                types.String `tfsdk:"name"`
	DeletionProtection  types.Bool   `tfsdk:"deletion_protection"`
	PointInTimeRecovery types.Bool   `tfsdk:"point_in_time_recovery"`
	KMSKeyARN           types.String `tfsdk:"kms_key_arn"`

	TableName types.String `tfsdk:"table_name"`
	// TableARN is planned unknown when the table is missing or changed.
	TableARN           types.String `tfsdk:"table_arn" drift:"inbox"`
	TTLAttribute       types.String `tfsdk:"ttl_attribute"`
	ConsumerPolicyJSON types.String `tfsdk:"consumer_policy_json"`
}

// subscriptionInboxAttribute is the inbox object of outbox_subscription.
func subscriptionInboxAttribute() schema.SingleNestedAttribute {
	stable := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	return optionalObject("The consumer kit's inbox (package `consumer`, see the inbox contract guide): a DynamoDB table `<name>-inbox` with one item per event id, "+
		"keyed by the string partition key `eventId`, on-demand billing, and TTL on `expiresAt`, so that completed entries expire after the kit's retention. "+
		"A consumer built with the kit applies each event once: `inbox.table_name` is the table to pass to `consumer.NewInbox`, and `inbox.consumer_policy_json` the IAM policy its role needs. "+
		"Omitted, the subscription has no inbox. Removing it deletes the table, which its deletion protection refuses.",
		map[string]schema.Attribute{
			"existing": optBoolAttr("Adopt the existing table `name` as the inbox instead of creating `<name>-inbox`: the subscription checks its key (the string partition key `eventId` alone), "+
				"enables TTL on `expiresAt` if TTL is off, and tags the table `outbox:inbox-of = <name>`, so that no other subscription adopts it (two consumers sharing an inbox would skip each other's events). "+
				"Destroying the subscription, or removing `inbox`, reverts what it added and keeps the table. "+
				"If the table is also managed with `hashicorp/aws`, add `lifecycle { ignore_changes = [ttl, tags[\"outbox:inbox-of\"], tags[\"outbox:inbox-ttl-enabled-by\"], tags_all] }` to it. "+
				"Changing it, or `name`, moves the inbox to the other table (removing the former one as removing `inbox` does).", false),
			"name": optionalStringAttr("Name of the table to adopt; required when `existing`, not allowed otherwise."),
			"deletion_protection": optBoolAttr("Deletion protection of the inbox table, as `aws_dynamodb_table`'s `deletion_protection_enabled`. "+
				"While it is on, destroying the subscription (or removing `inbox`) fails before anything is deleted: the table records which events were applied, "+
				"and without it every event delivered again would be applied again. Set it to `false` and apply before destroying. Ignored for an adopted table.", true),
			"point_in_time_recovery": optBoolAttr("Point-in-time recovery (continuous backups) of the inbox table. Ignored for an adopted table.", true),
			"kms_key_arn": optionalStringAttr("ARN of a customer managed KMS key that encrypts the inbox table (`server_side_encryption` of `aws_dynamodb_table`); unset uses the AWS owned key. " +
				"Changed in place. Not allowed on an adopted table. `consumer_policy_json` then grants `kms:Decrypt` and `kms:GenerateDataKey` on it (and on an adopted table's own key)."),
			"table_name": schema.StringAttribute{Computed: true, PlanModifiers: stable, MarkdownDescription: "Name of the inbox table, `<name>-inbox` (or the adopted `name`): the table of `consumer.NewInbox`."},
			"table_arn": schema.StringAttribute{
				Computed: true, PlanModifiers: stable,
				MarkdownDescription: "ARN of the inbox table. Planned unknown when the table is missing or one of its settings changed out of band.",
			},
			"ttl_attribute": schema.StringAttribute{
				Computed: true, PlanModifiers: []planmodifier.String{constantString(subscription.InboxTTLAttribute)},
				MarkdownDescription: fmt.Sprintf("The attribute TTL is enabled on, `%s`. Null in the state when TTL was found disabled: the plan then shows it set again, and apply enables TTL.", subscription.InboxTTLAttribute),
			},
			"consumer_policy_json": schema.StringAttribute{
				Computed: true,
				MarkdownDescription: "The least-privilege IAM policy document of a consumer that receives the subscription's queue with the kit: " +
					"`sqs:ReceiveMessage`, `sqs:DeleteMessage`, `sqs:ChangeMessageVisibility` and `sqs:GetQueueAttributes` on the queue (what an SQS event source mapping calls), " +
					"`dynamodb:PutItem` and `dynamodb:UpdateItem` on the inbox table (the kit's conditional put, and the update that completes an entry, alone or in `TransactWriteItems`), " +
					"`kms:Decrypt` on `queue.kms_master_key_id` and `kms:Decrypt` and `kms:GenerateDataKey` on `inbox.kms_key_arn` when they are set. " +
					"Attach it to the consumer's role, for instance as an `aws_iam_role_policy`'s `policy`; the handler's own tables need statements of their own.",
			},
		})
}

// inboxSpec maps the inbox object to a subscription.InboxSpec; nil when
// there is none.
func (m *SubscriptionInboxModel) inboxSpec() *subscription.InboxSpec {
	if m == nil {
		return nil
	}
	return &subscription.InboxSpec{
		Existing: isTrue(m.Existing), Name: str(m.Name),
		DeletionProtection: boolptr(m.DeletionProtection), PointInTimeRecovery: boolptr(m.PointInTimeRecovery), KMSKeyARN: str(m.KMSKeyARN),
	}
}

// inboxState returns the subscription.InboxState recorded in the object.
func (m *SubscriptionInboxModel) inboxState() subscription.InboxState {
	if m == nil {
		return subscription.InboxState{}
	}
	return subscription.InboxState{TableName: str(m.TableName), TableARN: str(m.TableARN), TTLAttribute: str(m.TTLAttribute), Adopted: isTrue(m.Existing)}
}

// setInboxState records the inbox's computed attributes. An inbox that
// exists although the model has none (a removal that the deletion
// protection refused) is recorded with the settings observed, so that the
// state keeps track of the table.
func (m *SubscriptionResourceModel) setInboxState(st subscription.State) {
	in := st.Inbox
	if m.Inbox == nil && in.TableName == "" {
		return
	}
	if m.Inbox == nil {
		m.Inbox = &SubscriptionInboxModel{Existing: types.BoolValue(in.Adopted), Name: types.StringNull()}
		if in.Adopted {
			m.Inbox.Name = types.StringValue(in.TableName)
		}
		m.Inbox.DeletionProtection, m.Inbox.PointInTimeRecovery = types.BoolValue(in.DeletionProtection), types.BoolValue(in.PointInTimeRecovery)
		m.Inbox.KMSKeyARN = types.StringNull()
		m.showInbox(in)
	}
	i := m.Inbox
	i.TableName, i.TableARN, i.TTLAttribute = optString(in.TableName), optString(in.TableARN), optString(in.TTLAttribute)
	i.ConsumerPolicyJSON = types.StringNull()
	if in.TableARN != "" && st.QueueARN != "" {
		i.ConsumerPolicyJSON = types.StringValue(subscription.ConsumerPolicy(st.QueueARN, m.queueKMSKey(), in.TableARN, in.KMSKeyARN).JSON())
	}
}

// showInbox sets the inbox's settings to the values observed, as Read
// does, so that the plan shows what changed out of band.
func (m *SubscriptionResourceModel) showInbox(in subscription.InboxState) {
	if m.Inbox == nil || in.TableName == "" || in.Adopted {
		// An adopted table's own settings are ignored.
		return
	}
	m.Inbox.DeletionProtection = types.BoolValue(in.DeletionProtection)
	m.Inbox.PointInTimeRecovery = types.BoolValue(in.PointInTimeRecovery)
	m.Inbox.KMSKeyARN = optString(in.KMSKeyARN)
}

func (m *SubscriptionResourceModel) queueKMSKey() string {
	if m.Queue == nil {
		return ""
	}
	return str(m.Queue.KMSMasterKeyID)
}

// planInbox plans the consumer policy from the planned queue and table,
// unknown until both are known.
func (m *SubscriptionResourceModel) planInbox() {
	i := m.Inbox
	if i == nil {
		return
	}
	known := func(v types.String) bool { return !v.IsNull() && !v.IsUnknown() }
	if isTrue(i.Existing) && known(i.TableARN) && known(i.ConsumerPolicyJSON) {
		// The policy names an adopted table's own key, which only apply
		// and refresh observe: it stays as they recorded it.
		return
	}
	i.ConsumerPolicyJSON = types.StringUnknown()
	if known(m.QueueARN) && known(i.TableARN) && !i.KMSKeyARN.IsUnknown() && (m.Queue == nil || !m.Queue.KMSMasterKeyID.IsUnknown()) {
		i.ConsumerPolicyJSON = types.StringValue(subscription.ConsumerPolicy(str(m.QueueARN), m.queueKMSKey(), str(i.TableARN), str(i.KMSKeyARN)).JSON())
	}
}

// inboxModelFromSpec is the inbox object of an imported subscription.
func inboxModelFromSpec(s subscription.Spec, st subscription.State) *SubscriptionInboxModel {
	if s.Inbox == nil {
		return nil
	}
	return &SubscriptionInboxModel{
		Existing: types.BoolValue(false), Name: types.StringNull(),
		DeletionProtection: types.BoolValue(st.Inbox.DeletionProtection), PointInTimeRecovery: types.BoolValue(st.Inbox.PointInTimeRecovery),
		KMSKeyARN: optString(st.Inbox.KMSKeyARN),
	}
}

// validateInboxUnset reports an empty kms_key_arn, which would read as
// "the AWS owned key".
func (m *SubscriptionResourceModel) validateInboxUnset() diag.Diagnostics {
	var diags diag.Diagnostics
	if m.Inbox == nil {
		return diags
	}
	if v := m.Inbox.KMSKeyARN; !v.IsNull() && !v.IsUnknown() && v.ValueString() == "" {
		p := path.Root("inbox").AtName("kms_key_arn")
		diags.AddAttributeError(p, "Invalid outbox subscription configuration", fmt.Sprintf("%s is empty: remove it to use the AWS owned key, or set the ARN of a KMS key.", dotted(p)))
	}
	if v := m.Inbox.Name; !v.IsNull() && !v.IsUnknown() && v.ValueString() == "" {
		p := path.Root("inbox").AtName("name")
		diags.AddAttributeError(p, "Invalid outbox subscription configuration", fmt.Sprintf("%s is empty: set the name of the table to adopt, or remove it with existing.", dotted(p)))
	}
	return diags
}

// constantString plans a computed string that always has one value.
type constantString string

func (c constantString) Description(context.Context) string {
	return fmt.Sprintf("Always %q.", string(c))
}

func (c constantString) MarkdownDescription(ctx context.Context) string { return c.Description(ctx) }

func (c constantString) PlanModifyString(_ context.Context, _ planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	resp.PlanValue = types.StringValue(string(c))
}

// placeholders fills in what is not known yet when the configuration is
// validated, so that only known values are checked then.
func (m *SubscriptionInboxModel) placeholders(in *subscription.InboxSpec) {
	if m == nil || in == nil {
		return
	}
	if m.Existing.IsUnknown() {
		in.Existing = in.Name != "" || m.Name.IsUnknown()
	}
	if m.Name.IsUnknown() {
		in.Name = "unknown-until-apply"
		if !in.Existing {
			in.Name = ""
		}
	}
}

// optBoolAttr is an optional bool of the inbox object with a default, which
// its description states. (The inbox is an optional object without a
// Spec default, so its attributes declare their defaults themselves.)
func optBoolAttr(desc string, def bool) schema.BoolAttribute {
	return schema.BoolAttribute{Optional: true, Computed: true, Default: booldefault.StaticBool(def),
		MarkdownDescription: fmt.Sprintf("%s Defaults to `%t`.", desc, def)}
}

func isTrue(v types.Bool) bool { return known(v) && v.ValueBool() }

func boolptr(v types.Bool) *bool {
	if !known(v) {
		return nil
	}
	b := v.ValueBool()
	return &b
}
