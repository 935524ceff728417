package subscription

import (
	"context"
	"slices"
)

// component is one part of a subscription. Apply ensures the components in
// the order of the components table, Delete removes them in the reverse
// order, and Read and Lookup go through them in the same order, so that a
// step finds in the State what the steps before it recorded.
type component struct {
	// recorded reports whether the State records the component.
	recorded func(State) bool

	// The steps take the Provisioner first, so that methods such as
	// (*Provisioner).readQueue serve as steps.
	ensure func(*Provisioner, context.Context, *pass) error
	read   func(*Provisioner, context.Context, *pass) error
	remove func(*Provisioner, context.Context, *State) error
	lookup func(*Provisioner, context.Context, *pass) error
}

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
var components = []component{
	{
		recorded: func(st State) bool { return st.DeadLetterQueueURL != "" },
		ensure: func(c *Provisioner, ctx context.Context, p *pass) error {
			return c.ensureQueue(ctx, queueSpec{
				what: "dead-letter queue", name: p.n.DeadLetterQueue, attrs: deadLetterAttributes(p.s), tags: p.s.tags(),
			}, &p.st.DeadLetterQueueURL, &p.st.DeadLetterQueueARN)
		},
		read:   (*Provisioner).readDeadLetterQueue,
		remove: removeQueue("dead-letter queue", func(st *State) (*string, *string) { return &st.DeadLetterQueueURL, &st.DeadLetterQueueARN }),
		lookup: (*Provisioner).lookupDeadLetterQueue,
	},
	{
		recorded: func(st State) bool { return st.QueueURL != "" },
		ensure:   (*Provisioner).ensureQueueAndPolicy,
		read:     (*Provisioner).readQueue,
		remove:   removeQueue("queue", func(st *State) (*string, *string) { return &st.QueueURL, &st.QueueARN }),
		lookup:   (*Provisioner).lookupQueue,
	},
	{
		recorded: func(st State) bool { return st.RuleARN != "" },
		ensure:   onBus((*Provisioner).ensureRuleAndTarget),
		read:     onBus((*Provisioner).readRule),
		remove: func(c *Provisioner, ctx context.Context, st *State) error {
			if st.RuleARN == "" {
				return nil
			}
			if err := c.deleteRule(ctx, st.EventBusName, NamesFor(st.Name).Rule); err != nil {
				return err
			}
			st.RuleARN = ""
			return nil
		},
		lookup: onBus((*Provisioner).lookupRule),
	},
	{
		recorded: func(st State) bool { return st.SubscriptionARN != "" },
		ensure:   onTopic((*Provisioner).ensureTopicSubscription),
		read:     onTopic((*Provisioner).readTopicSubscription),
		remove:   (*Provisioner).removeTopicSubscription,
		lookup:   onTopic((*Provisioner).lookupTopicSubscription),
	},
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
func (s State) Exists() bool {
	return slices.ContainsFunc(components, func(k component) bool { return k.recorded(s) })
}
