package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
)

// stringSet returns the strings of a set; null, unknown or with unknown
// elements is nil.
func stringSet(ctx context.Context, v types.Set) ([]string, diag.Diagnostics) {
	if v.IsNull() || partlyUnknown(v) {
		return nil, nil
	}
	var out []string
	diags := v.ElementsAs(ctx, &out, false)
	return out, diags
}

// partlyUnknown reports whether a set, or one of its elements, is not known
// yet: sources = [var.source] while Terraform validates a root module, or an
// attribute of a resource still to be created.
func partlyUnknown(v types.Set) bool {
	if v.IsUnknown() {
		return true
	}
	for _, e := range v.Elements() {
		if e.IsUnknown() {
			return true
		}
	}
	return false
}

func setOfStrings(v []string) types.Set {
	if len(v) == 0 {
		return types.SetNull(types.StringType)
	}
	elems := make([]attr.Value, len(v))
	for i, s := range v {
		elems[i] = types.StringValue(s)
	}
	return types.SetValueMust(types.StringType, elems)
}

// spec maps the model to a subscription.Spec. tags are the merged tags
// (default_tags and tags); null or unknown values mean the defaults.
func (m *SubscriptionResourceModel) spec(ctx context.Context, tags map[string]string) (subscription.Spec, diag.Diagnostics) {
	var diags diag.Diagnostics
	s := subscription.Spec{Name: str(m.Name), EventBus: str(m.EventBus), EventPattern: str(m.EventPattern), TopicARN: str(m.TopicARN), Tags: tags}
	var d diag.Diagnostics
	s.Sources, d = stringSet(ctx, m.Sources)
	diags.Append(d...)
	s.DetailTypes, d = stringSet(ctx, m.DetailTypes)
	diags.Append(d...)
	if q := m.Queue; q != nil {
		s.Queue = subscription.QueueSpec{
			VisibilityTimeoutSeconds: i32ptr(q.VisibilityTimeoutSeconds),
			MessageRetentionSeconds:  i32(q.MessageRetentionSeconds),
			ReceiveWaitTimeSeconds:   i32(q.ReceiveWaitTimeSeconds),
			MaxReceiveCount:          i32(q.MaxReceiveCount),
			KMSMasterKeyID:           str(q.KMSMasterKeyID),
		}
	}
	if dl := m.DeadLetter; dl != nil {
		s.DeadLetter.MessageRetentionSeconds = i32(dl.MessageRetentionSeconds)
	}
	s.Inbox = m.Inbox.inboxSpec()
	return s, diags
}

// subscriptionState returns the subscription.State recorded in the model's
// computed attributes.
func (m *SubscriptionResourceModel) subscriptionState() subscription.State {
	return subscription.State{
		Name: str(m.Name), EventBusName: subscription.BusName(str(m.EventBus)), RuleARN: str(m.RuleARN),
		QueueURL: str(m.QueueURL), QueueARN: str(m.QueueARN),
		DeadLetterQueueURL: str(m.DeadLetterQueueURL), DeadLetterQueueARN: str(m.DeadLetterQueueARN),
		TopicARN: str(m.TopicARN), SubscriptionARN: str(m.SubscriptionARN), Inbox: m.Inbox.inboxState(),
	}
}

// setState records the computed attributes from a subscription.State.
func (m *SubscriptionResourceModel) setState(st subscription.State) {
	m.ID = types.StringValue(m.Name.ValueString())
	m.RuleARN = optString(st.RuleARN)
	m.QueueURL = optString(st.QueueURL)
	m.QueueARN = optString(st.QueueARN)
	m.DeadLetterQueueURL = optString(st.DeadLetterQueueURL)
	m.DeadLetterQueueARN = optString(st.DeadLetterQueueARN)
	m.SubscriptionARN = optString(st.SubscriptionARN)
	m.setInboxState(st)
}

// subscriptionModelFromSpec builds the configuration part of the model from
// a Spec, as Lookup reports it on import: whole objects, as the plan of a
// configuration that omits them has them.
func subscriptionModelFromSpec(s subscription.Spec, st subscription.State, defaultTags map[string]string) SubscriptionResourceModel {
	s = s.WithDefaults()
	m := SubscriptionResourceModel{
		Name: types.StringValue(s.Name), EventBus: types.StringValue(s.EventBus),
		Sources: setOfStrings(s.Sources), DetailTypes: setOfStrings(s.DetailTypes), EventPattern: optString(s.EventPattern),
		TopicARN: optString(s.TopicARN),
	}
	q := s.Queue
	m.Queue = &SubscriptionQueueModel{
		VisibilityTimeoutSeconds: types.Int64Value(int64(*q.VisibilityTimeoutSeconds)),
		MessageRetentionSeconds:  types.Int64Value(int64(q.MessageRetentionSeconds)),
		ReceiveWaitTimeSeconds:   types.Int64Value(int64(q.ReceiveWaitTimeSeconds)),
		MaxReceiveCount:          types.Int64Value(int64(q.MaxReceiveCount)),
		KMSMasterKeyID:           optString(q.KMSMasterKeyID),
	}
	m.DeadLetter = &SubscriptionDeadLetterModel{MessageRetentionSeconds: types.Int64Value(int64(s.DeadLetter.MessageRetentionSeconds))}
	m.Inbox = inboxModelFromSpec(s, st)
	m.Tags, m.TagsAll = importedTags(s.Tags, defaultTags)
	m.Timeouts = nullTimeouts()
	m.setState(st)
	return m
}

// subscriptionFieldPaths maps the fields of subscription.ValidationError to
// attributes.
var subscriptionFieldPaths = map[string]path.Path{
	"Name":                               path.Root("name"),
	"EventBus":                           path.Root("event_bus"),
	"Sources":                            path.Root("sources"),
	"DetailTypes":                        path.Root("detail_types"),
	"EventPattern":                       path.Root("event_pattern"),
	"TopicARN":                           path.Root("topic_arn"),
	"Queue.VisibilityTimeoutSeconds":     path.Root("queue").AtName("visibility_timeout_seconds"),
	"Queue.MessageRetentionSeconds":      path.Root("queue").AtName("message_retention_seconds"),
	"Queue.ReceiveWaitTimeSeconds":       path.Root("queue").AtName("receive_wait_time_seconds"),
	"Queue.MaxReceiveCount":              path.Root("queue").AtName("max_receive_count"),
	"Queue.KMSMasterKeyID":               path.Root("queue").AtName("kms_master_key_id"),
	"DeadLetter.MessageRetentionSeconds": path.Root("dead_letter").AtName("message_retention_seconds"),
	"Inbox.KMSKeyARN":                    path.Root("inbox").AtName("kms_key_arn"),
	"Inbox.Name":                         path.Root("inbox").AtName("name"),
	"Tags":                               path.Root("tags"),
}
