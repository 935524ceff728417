package subscription

import (
	"context"

	"github.com/outboxkit/terraform-provider-outbox/internal/component"
)

// componentDef is one part of a subscription (see package component):
// Apply ensures the components in the order of the components table,
// Delete removes them in the reverse order, and Read and Lookup go through
// them in the same order.
type componentDef = component.Component[*Provisioner, *pass, State]

// pass is what the steps of one Apply, Read or Lookup share.
type pass struct {
	s  Spec
	st *State
	n  Names
	// d is the drift that Read records.
	d *Drift
	// ruleARN is the rule's ARN that the queue policy lets send, for Apply.
	ruleARN string
	// tags are the subscription's tags as Lookup found them: the queue's,
	// else the rule's.
	tags map[string]string
}

// components are the subscription's components in the order in which they
// are created: the queue's redrive policy names the dead-letter queue, and
// the rule's target is the queue, whose policy lets the rule send.
var components = []componentDef{
	deadLetterQueueComponent,
	queueComponent,
	ruleComponent,
	topicSubscriptionComponent,
	// Last, so that Delete refuses to delete a protected inbox before it
	// deleted anything else.
	inboxComponent,
}

// onBus is step for a subscription on a bus, nothing for one to a topic;
// onTopic the other way round.
func onBus(step func(*Provisioner, context.Context, *pass) error) func(*Provisioner, context.Context, *pass) error {
	return func(c *Provisioner, ctx context.Context, p *pass) error {
		if p.st.TopicARN != "" {
			return nil
		}
		return step(c, ctx, p)
	}
}

func onTopic(step func(*Provisioner, context.Context, *pass) error) func(*Provisioner, context.Context, *pass) error {
	return func(c *Provisioner, ctx context.Context, p *pass) error {
		if p.st.TopicARN == "" {
			return nil
		}
		return step(c, ctx, p)
	}
}

// Exists reports whether anything of the subscription is recorded.
func (s State) Exists() bool { return component.Recorded(components, s) }

func (p *pass) State() *State            { return p.st }
func (p *pass) Missing(component string) { p.d.AddMissing(component) }

// Components of a subscription, as named in a Drift.
const (
	ComponentDeadLetterQueue = "dead_letter_queue"
	ComponentQueue           = "queue"
	ComponentQueuePolicy     = "queue_policy"
	ComponentRule            = "rule"
	ComponentTarget          = "target"
	// ComponentTopicSubscription is the queue's subscription to the topic
	// of a topic subscription.
	ComponentTopicSubscription = "topic_subscription"
)
