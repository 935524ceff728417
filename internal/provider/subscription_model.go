package provider

import (
	"reflect"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
)

// SubscriptionResourceModel is the outbox_subscription resource. Objects
// are pointers: nil (in a configuration that omits one) means the defaults
// of every setting in it; plans and states hold them whole. The spec tag
// of a setting names the field of subscription.Spec it sets (settings.go).
type SubscriptionResourceModel struct {
	ID           types.String `tfsdk:"id"`
	Name         types.String `tfsdk:"name" spec:"Name"`
	EventBus     types.String `tfsdk:"event_bus" spec:"EventBus"`
	Sources      types.Set    `tfsdk:"sources" spec:"Sources"`
	DetailTypes  types.Set    `tfsdk:"detail_types" spec:"DetailTypes"`
	EventPattern types.String `tfsdk:"event_pattern" spec:"EventPattern"`
	TopicARN     types.String `tfsdk:"topic_arn" spec:"TopicARN"`

	Queue      *SubscriptionQueueModel      `tfsdk:"queue"`
	DeadLetter *SubscriptionDeadLetterModel `tfsdk:"dead_letter"`
	Inbox      *SubscriptionInboxModel      `tfsdk:"inbox"`

	Tags     types.Map      `tfsdk:"tags" spec:"Tags"`
	TagsAll  types.Map      `tfsdk:"tags_all"`
	Timeouts timeouts.Value `tfsdk:"timeouts"`

	// The computed identifiers. Their drift tag names the components
	// (subscription.DriftComponents) whose drift the plan shows as an
	// update of the attribute: the queue policy and the target belong to
	// the delivery path of the rule. The first component named is the one
	// the identifier belongs to.
	RuleARN            types.String `tfsdk:"rule_arn" drift:"rule,queue_policy,target"`
	SubscriptionARN    types.String `tfsdk:"subscription_arn" drift:"topic_subscription,queue_policy"`
	QueueURL           types.String `tfsdk:"queue_url" drift:"queue"`
	QueueARN           types.String `tfsdk:"queue_arn" drift:"queue"`
	DeadLetterQueueURL types.String `tfsdk:"dead_letter_queue_url" drift:"dead_letter_queue"`
	DeadLetterQueueARN types.String `tfsdk:"dead_letter_queue_arn" drift:"dead_letter_queue"`
}

// planRepairs plans unknown the computed identifiers of the components that
// Read found missing or changed, and those it found gone (null in the
// state), so that the plan shows an update and apply repairs them. The
// identifiers of components that the subscription does not have (a rule,
// for a topic subscription) stay as they are.
func (m *SubscriptionResourceModel) planRepairs(d awsops.Drift) {
	drifted := d.Components()
	unused := subscription.UnusedComponents(str(m.TopicARN) != "")
	walkModelValues(reflect.ValueOf(m).Elem(), path.Empty(), func(_ path.Path, f reflect.StructField, v reflect.Value) {
		components := f.Tag.Get("drift")
		s, ok := v.Interface().(types.String)
		if components == "" || !ok || slices.Contains(unused, strings.Split(components, ",")[0]) {
			return
		}
		if s.IsNull() || slices.ContainsFunc(strings.Split(components, ","), func(c string) bool { return slices.Contains(drifted, c) }) {
			v.Set(reflect.ValueOf(types.StringUnknown()))
		}
	})
}

// SubscriptionQueueModel is the queue object of outbox_subscription.
type SubscriptionQueueModel struct {
	VisibilityTimeoutSeconds types.Int64  `tfsdk:"visibility_timeout_seconds" spec:"Queue.VisibilityTimeoutSeconds"`
	MessageRetentionSeconds  types.Int64  `tfsdk:"message_retention_seconds" spec:"Queue.MessageRetentionSeconds"`
	ReceiveWaitTimeSeconds   types.Int64  `tfsdk:"receive_wait_time_seconds" spec:"Queue.ReceiveWaitTimeSeconds"`
	MaxReceiveCount          types.Int64  `tfsdk:"max_receive_count" spec:"Queue.MaxReceiveCount"`
	KMSMasterKeyID           types.String `tfsdk:"kms_master_key_id" spec:"Queue.KMSMasterKeyID"`
}

// SubscriptionDeadLetterModel is the dead_letter object of
// outbox_subscription.
type SubscriptionDeadLetterModel struct {
	MessageRetentionSeconds types.Int64 `tfsdk:"message_retention_seconds" spec:"DeadLetter.MessageRetentionSeconds"`
}
