package subscription

import (
	"context"
	"fmt"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/component"
)

// State records what exists: the identifiers of the components. An empty
// field means the component does not exist (or was not created yet). The
// queue policy and the rule's target have no identifier of their own: they
// exist with the queue and the rule, and Update puts them back if missing.
type State struct {
	// Name is Spec.Name.
	Name string
	// EventBusName is the name of the bus the rule is on.
	EventBusName string
	// RuleARN is the rule's ARN.
	RuleARN string

	QueueURL string
	QueueARN string

	DeadLetterQueueURL string
	DeadLetterQueueARN string

	// TopicARN is the topic of a topic subscription, SubscriptionARN its
	// subscription of the queue.
	TopicARN        string
	SubscriptionARN string

	// Inbox is the inbox table; its TableName is empty when there is none.
	Inbox InboxState
}

// names are the component names of the subscription st records.
func (s State) names() Names { return NamesOf(s.Name, strings.HasSuffix(s.TopicARN, fifoSuffix)) }

// tags returns the tags of every tagged component: Spec.Tags and the
// subscription's name.
func (s Spec) tags() map[string]string {
	return awsops.WithTag(s.Tags, TagSubscription, s.Name)
}

// TagPattern is set on the rule to "event_pattern" when the Spec gives the
// pattern as a whole, so that an import reads it back the same way.
const TagPattern = "outbox:pattern"

// ruleTags returns the tags of the rule.
func (s Spec) ruleTags() map[string]string {
	tags := s.tags()
	if s.EventPattern != "" {
		tags[TagPattern] = "event_pattern"
	}
	return tags
}

// ownTags returns tags without those the subscription manages.
func ownTags(tags map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range tags {
		if !strings.HasPrefix(k, "outbox:") {
			out[k] = v
		}
	}
	return out
}

// Create builds every component of the subscription described by s. If a
// step fails, it removes what it built, as component.Create describes.
func (c *Provisioner) Create(ctx context.Context, s Spec) (State, error) {
	return component.Create(ctx, c.waitTimeout(), s, c.apply, c.Delete)
}

// Update brings the subscription recorded in st to s in place: the rule's
// pattern, the queues' settings, the tags. It also recreates components
// deleted out of band (see Read). A new Name or EventBus cannot be applied
// here: they replace the subscription. Update returns the new State even on
// error, so that the provider records partial progress.
func (c *Provisioner) Update(ctx context.Context, s Spec, st State) (State, error) {
	return component.Update(ctx, s, st, c.apply)
}

// apply creates or updates every component of s, valid and with its
// defaults (component.Apply), in dependency order, recording each in st as
// soon as it exists.
func (c *Provisioner) apply(ctx context.Context, s Spec, st *State) error {
	st.Name, st.EventBusName, st.TopicARN = s.Name, BusName(s.EventBus), s.TopicARN
	p := &pass{s: s, st: st, n: s.Names()}
	return component.Ensure(ctx, components, c, p)
}

// Delete removes the subscription in the reverse order of creation.
// Components already gone are skipped. It returns what remains (an empty
// State on success), so that a failed delete can be retried.
func (c *Provisioner) Delete(ctx context.Context, st State) (State, error) {
	if err := component.Remove(ctx, components, c, &st); err != nil {
		return st, err
	}
	return State{}, nil
}

// RuleARN returns the ARN of the rule called name on bus, in the account
// and region of another ARN of that account (the queue's).
func RuleARN(accountARN, bus, name string) (string, error) {
	p := strings.SplitN(accountARN, ":", 6)
	if len(p) != 6 || p[0] != "arn" || p[3] == "" || p[4] == "" {
		return "", fmt.Errorf("%q is not a regional ARN", accountARN)
	}
	res := "rule/" + name
	if bus != DefaultEventBus {
		res = "rule/" + bus + "/" + name
	}
	return strings.Join([]string{"arn", p[1], "events", p[3], p[4], res}, ":"), nil
}

// ParseRuleARN returns the bus and the name of a rule ARN.
func ParseRuleARN(arn string) (bus, name string, ok bool) {
	p := strings.SplitN(arn, ":", 6)
	if len(p) != 6 || p[2] != "events" || !strings.HasPrefix(p[5], "rule/") {
		return "", "", false
	}
	res := strings.TrimPrefix(p[5], "rule/")
	i := strings.LastIndex(res, "/")
	if i < 0 {
		return DefaultEventBus, res, res != ""
	}
	return res[:i], res[i+1:], res[i+1:] != ""
}
