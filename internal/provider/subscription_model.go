package provider

import (
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// SubscriptionResourceModel is the outbox_subscription resource. Objects
// are pointers: nil (in a configuration that omits one) means the defaults
// of every setting in it; plans and states hold them whole.
type SubscriptionResourceModel struct {
	ID           types.String `tfsdk:"id"`
	Name         types.String `tfsdk:"name"`
	EventBus     types.String `tfsdk:"event_bus"`
	Sources      types.Set    `tfsdk:"sources"`
	DetailTypes  types.Set    `tfsdk:"detail_types"`
	EventPattern types.String `tfsdk:"event_pattern"`

	Queue      *SubscriptionQueueModel      `tfsdk:"queue"`
	DeadLetter *SubscriptionDeadLetterModel `tfsdk:"dead_letter"`

	Tags     types.Map      `tfsdk:"tags"`
	TagsAll  types.Map      `tfsdk:"tags_all"`
	Timeouts timeouts.Value `tfsdk:"timeouts"`

	RuleARN            types.String `tfsdk:"rule_arn"`
	QueueURL           types.String `tfsdk:"queue_url"`
	QueueARN           types.String `tfsdk:"queue_arn"`
	DeadLetterQueueURL types.String `tfsdk:"dead_letter_queue_url"`
	DeadLetterQueueARN types.String `tfsdk:"dead_letter_queue_arn"`
}

// SubscriptionQueueModel is the queue object of outbox_subscription.
type SubscriptionQueueModel struct {
	VisibilityTimeoutSeconds types.Int64  `tfsdk:"visibility_timeout_seconds"`
	MessageRetentionSeconds  types.Int64  `tfsdk:"message_retention_seconds"`
	ReceiveWaitTimeSeconds   types.Int64  `tfsdk:"receive_wait_time_seconds"`
	MaxReceiveCount          types.Int64  `tfsdk:"max_receive_count"`
	KMSMasterKeyID           types.String `tfsdk:"kms_master_key_id"`
}

// SubscriptionDeadLetterModel is the dead_letter object of
// outbox_subscription.
type SubscriptionDeadLetterModel struct {
	MessageRetentionSeconds types.Int64 `tfsdk:"message_retention_seconds"`
}
