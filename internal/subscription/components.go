package subscription

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
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

// removeQueue deletes the queue whose URL and ARN fields gives.
func removeQueue(what string, fields func(*State) (url, arn *string)) func(*Provisioner, context.Context, *State) error {
	return func(c *Provisioner, ctx context.Context, st *State) error {
		url, arn := fields(st)
		if err := c.deleteQueue(ctx, what, *url); err != nil {
			return err
		}
		*url, *arn = "", ""
		return nil
	}
}

// Exists reports whether anything of the subscription is recorded.
func (s State) Exists() bool {
	return slices.ContainsFunc(components, func(k component) bool { return k.recorded(s) })
}

// ensureQueueAndPolicy ensures the queue and its policy, which lets the
// rule send to it: the rule's ARN is derived from the queue's account when
// the rule does not exist yet.
func (c *Provisioner) ensureQueueAndPolicy(ctx context.Context, p *pass) error {
	st := p.st
	err := c.ensureQueue(ctx, queueSpec{
		what: "queue", name: p.n.Queue, attrs: queueAttributes(p.s, st.DeadLetterQueueARN), tags: p.s.tags(),
	}, &st.QueueURL, &st.QueueARN)
	if err != nil {
		return err
	}
	source := st.TopicARN
	if source == "" {
		p.ruleARN = st.RuleARN
		if p.ruleARN == "" {
			if p.ruleARN, err = RuleARN(st.QueueARN, st.EventBusName, p.n.Rule); err != nil {
				return fmt.Errorf("creating queue policy (%s): %w", p.n.Queue, err)
			}
		}
		source = p.ruleARN
	}
	if err := c.ensurePolicy(ctx, st.QueueURL, QueuePolicy(st.QueueARN, source)); err != nil {
		return fmt.Errorf("setting queue policy (%s): %w", p.n.Queue, err)
	}
	return nil
}

// ensureRuleAndTarget ensures the rule and its target, the queue.
func (c *Provisioner) ensureRuleAndTarget(ctx context.Context, p *pass) error {
	st := p.st
	arn, err := c.ensureRule(ctx, p.s, st.RuleARN != "")
	if arn != "" {
		st.RuleARN = arn
	}
	if err != nil {
		return err
	}
	if arn != p.ruleARN {
		// The rule's ARN is not the one derived from the queue's account:
		// let the actual rule send.
		if err := c.ensurePolicy(ctx, st.QueueURL, QueuePolicy(st.QueueARN, arn)); err != nil {
			return fmt.Errorf("setting queue policy (%s): %w", p.n.Queue, err)
		}
	}
	return c.ensureTarget(ctx, st.EventBusName, p.n.Rule, st.QueueARN)
}

func (c *Provisioner) readDeadLetterQueue(ctx context.Context, p *pass) error {
	st := p.st
	return c.readQueueOf(ctx, p, "dead-letter queue", p.n.DeadLetterQueue, &st.DeadLetterQueueURL, &st.DeadLetterQueueARN, func(attrs map[string]string) {
		p.d.AddChanged(ComponentDeadLetterQueue, attributeDiff(attrs, deadLetterAttributes(p.s))...)
	}, ComponentDeadLetterQueue)
}

func (c *Provisioner) readQueue(ctx context.Context, p *pass) error {
	st := p.st
	return c.readQueueOf(ctx, p, "queue", p.n.Queue, &st.QueueURL, &st.QueueARN, p.readQueueAttributes, ComponentQueue, ComponentQueuePolicy)
}

// readQueueOf reads the recorded queue of url and arn, clearing both when
// it no longer exists: seen records the drift of a queue that exists, and
// the missing components are reported when it does not.
func (c *Provisioner) readQueueOf(ctx context.Context, p *pass, what, name string, url, arn *string, seen func(map[string]string), missing ...string) error {
	if *url != "" {
		attrs, err := c.queue(ctx, *url)
		if err != nil {
			return fmt.Errorf("reading %s (%s): %w", what, name, err)
		}
		if attrs == nil {
			*url, *arn = "", ""
		} else {
			*arn = attrs[attrQueueARN]
			seen(attrs)
		}
	}
	if *url == "" {
		for _, m := range missing {
			p.d.AddMissing(m)
		}
	}
	return nil
}

// readQueueAttributes records the drift of the queue's settings and policy.
func (p *pass) readQueueAttributes(attrs map[string]string) {
	st := p.st
	dlq := st.DeadLetterQueueARN
	if dlq == "" {
		dlq = "(missing)"
	}
	p.d.AddChanged(ComponentQueue, attributeDiff(attrs, queueAttributes(p.s, dlq))...)
	source := cmp.Or(st.TopicARN, st.RuleARN)
	if source == "" {
		source, _ = RuleARN(st.QueueARN, st.EventBusName, p.n.Rule)
	}
	switch policy := attrs[attrPolicy]; {
	case policy == "":
		p.d.AddMissing(ComponentQueuePolicy)
	case !awsops.SamePolicy(policy, QueuePolicy(st.QueueARN, source).JSON()):
		p.d.AddChanged(ComponentQueuePolicy, "policy")
	}
}

func (c *Provisioner) readRule(ctx context.Context, p *pass) error {
	st := p.st
	if st.RuleARN != "" {
		have, err := c.getRule(ctx, st.EventBusName, p.n.Rule)
		if err != nil {
			return fmt.Errorf("reading rule (%s): %w", p.n.Rule, err)
		}
		if have == nil {
			st.RuleARN = ""
		} else {
			st.RuleARN = aws.ToString(have.Arn)
			p.d.AddChanged(ComponentRule, ruleDiff(p.s, have)...)
			t, err := c.target(ctx, st.EventBusName, p.n.Rule)
			if err != nil {
				return fmt.Errorf("reading the target of rule (%s): %w", p.n.Rule, err)
			}
			switch {
			case t == nil:
				p.d.AddMissing(ComponentTarget)
			case aws.ToString(t.Arn) != st.QueueARN:
				p.d.AddChanged(ComponentTarget, "arn")
			}
		}
	}
	if st.RuleARN == "" {
		p.d.AddMissing(ComponentRule)
		p.d.AddMissing(ComponentTarget)
	}
	return nil
}

// lookupQueue records the queue, its settings, its tags and, from its
// policy, the bus that the rule is on.
func (c *Provisioner) lookupQueue(ctx context.Context, p *pass) error {
	s, st := &p.s, p.st
	url, attrs, err := c.queueByName(ctx, p.n.Queue)
	if err != nil {
		return fmt.Errorf("reading queue (%s): %w", p.n.Queue, err)
	}
	if attrs == nil {
		return nil
	}
	st.QueueURL, st.QueueARN = url, attrs[attrQueueARN]
	vt := int32(atoi(attrs[attrVisibilityTimeout]))
	s.Queue = QueueSpec{
		VisibilityTimeoutSeconds: &vt,
		MessageRetentionSeconds:  int32(atoi(attrs[attrRetention])),
		ReceiveWaitTimeSeconds:   int32(atoi(attrs[attrReceiveWait])),
		KMSMasterKeyID:           attrs[attrKMSKey],
	}
	if rp, ok := parseRedrive(attrs[attrRedrivePolicy]); ok {
		s.Queue.MaxReceiveCount = int32(rp.MaxReceiveCount)
	}
	source := RuleARNOfPolicy(attrs[attrPolicy])
	if bus, _, ok := ParseRuleARN(source); ok {
		s.EventBus, st.EventBusName = bus, bus
	} else if strings.HasPrefix(source, "arn:") && strings.Split(source, ":")[2] == "sns" {
		s.TopicARN, st.TopicARN = source, source
	}
	out, err := c.SQS.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(url)})
	if err != nil {
		return fmt.Errorf("reading the tags of queue (%s): %w", p.n.Queue, err)
	}
	p.tags = out.Tags
	return nil
}

func (c *Provisioner) lookupDeadLetterQueue(ctx context.Context, p *pass) error {
	url, attrs, err := c.queueByName(ctx, p.n.DeadLetterQueue)
	if err != nil {
		return fmt.Errorf("reading dead-letter queue (%s): %w", p.n.DeadLetterQueue, err)
	}
	if attrs != nil {
		p.st.DeadLetterQueueURL, p.st.DeadLetterQueueARN = url, attrs[attrQueueARN]
		p.s.DeadLetter.MessageRetentionSeconds = int32(atoi(attrs[attrRetention]))
	}
	return nil
}

// lookupRule records the rule, on the bus that the queue's policy names,
// and its pattern as the Spec gave it.
func (c *Provisioner) lookupRule(ctx context.Context, p *pass) error {
	s, st := &p.s, p.st
	rule, err := c.getRule(ctx, st.EventBusName, p.n.Rule)
	if err != nil {
		return fmt.Errorf("reading rule (%s): %w", p.n.Rule, err)
	}
	if rule == nil {
		return nil
	}
	st.RuleARN = aws.ToString(rule.Arn)
	pattern := aws.ToString(rule.EventPattern)
	s.Sources, s.DetailTypes, s.EventPattern = splitPattern(pattern)
	rt, err := c.ruleTags(ctx, st.RuleARN)
	if err != nil {
		return fmt.Errorf("reading the tags of rule (%s): %w", p.n.Rule, err)
	}
	if rt[TagPattern] == "event_pattern" {
		s.Sources, s.DetailTypes, s.EventPattern = nil, nil, pattern
	}
	if p.tags == nil {
		p.tags = rt
	}
	return nil
}
