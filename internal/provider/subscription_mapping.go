package provider

import (
	"reflect"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
)

// partlyUnknown reports whether a set or list, or one of its elements, is not known
// yet: sources = [var.source] while Terraform validates a root module, or an
// attribute of a resource still to be created.
func partlyUnknown(v interface {
	IsUnknown() bool
	Elements() []attr.Value
}) bool {
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

// spec maps the model to a subscription.Spec. tags are the merged tags
// (default_tags and tags); null or unknown values mean the defaults.
func (m *SubscriptionResourceModel) spec(tags map[string]string) subscription.Spec {
	s := subscription.Spec{Tags: tags}
	modelToSpec(m, &s)
	s.Inbox = m.Inbox.inboxSpec()
	return s
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
	var m SubscriptionResourceModel
	s = s.WithDefaults()
	specToModel(s, &m)
	m.Inbox = inboxModelFromSpec(s, st)
	m.Tags, m.TagsAll = importedTags(s.Tags, defaultTags)
	m.Timeouts = nullTimeouts()
	return m
}

// subscriptionFieldPaths maps the fields of subscription.Spec to
// attributes, from the model's spec tags and the inbox's fields.
var subscriptionFieldPaths = sync.OnceValue(func() map[string]path.Path {
	paths := fieldPaths(reflect.TypeFor[SubscriptionResourceModel]())
	paths["Inbox.KMSKeyARN"] = path.Root("inbox").AtName("kms_key_arn")
	paths["Inbox.Name"] = path.Root("inbox").AtName("name")
	return paths
})
