package subscription

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// ruleDescription is the description of every subscription's rule.
func ruleDescription(name string) string {
	return "Outbox subscription " + name + ": delivers matching events to the queue " + NamesFor(name).Queue
}

// getRule returns the rule called name on bus, or nil when it does not
// exist.
func (c *Provisioner) getRule(ctx context.Context, bus, name string) (*eventbridge.DescribeRuleOutput, error) {
	out, err := c.Events.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: aws.String(name), EventBusName: aws.String(bus)})
	if err != nil {
		return nil, awsops.NotFound("rule", name, err)
	}
	return out, nil
}

// ruleDiff returns the settings of the rule that differ from s.
func ruleDiff(s Spec, have *eventbridge.DescribeRuleOutput) []string {
	var fields []string
	if !SameJSON(aws.ToString(have.EventPattern), s.Pattern()) {
		fields = append(fields, "event_pattern")
	}
	if have.State != types.RuleStateEnabled {
		fields = append(fields, "state")
	}
	return fields
}

// ensureRule creates or updates the rule and returns its ARN. exists says
// whether the State records it: a rule of that name that the State does not
// record belongs to someone else.
func (c *Provisioner) ensureRule(ctx context.Context, s Spec, exists bool) (string, error) {
	n := NamesFor(s.Name)
	bus := BusName(s.EventBus)
	have, err := c.getRule(ctx, bus, n.Rule)
	found := !errors.Is(err, awsops.ErrNotFound)
	if err != nil && found {
		return "", fmt.Errorf("reading rule (%s): %w", n.Rule, err)
	}
	tags := s.ruleTags()
	if found && !exists {
		return "", fmt.Errorf("creating rule (%s): a rule of that name already exists on the bus %s (%s): delete it, import it, or choose another subscription name", n.Rule, bus, aws.ToString(have.Arn))
	}
	if found && len(ruleDiff(s, have)) == 0 {
		arn := aws.ToString(have.Arn)
		if err := c.syncRuleTags(ctx, arn, tags); err != nil {
			return arn, fmt.Errorf("tagging rule (%s): %w", n.Rule, err)
		}
		return arn, nil
	}
	in := &eventbridge.PutRuleInput{
		Name: aws.String(n.Rule), EventBusName: aws.String(bus), EventPattern: aws.String(s.Pattern()),
		State: types.RuleStateEnabled, Description: aws.String(ruleDescription(s.Name)),
	}
	if !found {
		in.Tags = awsops.TagList(tags, eventsTag)
	}
	out, err := c.Events.PutRule(ctx, in)
	verb := "updating"
	if !found {
		verb = "creating"
	}
	if err != nil {
		return "", fmt.Errorf("%s rule (%s): %w", verb, n.Rule, err)
	}
	arn := aws.ToString(out.RuleArn)
	if found {
		if err := c.syncRuleTags(ctx, arn, tags); err != nil {
			return arn, fmt.Errorf("tagging rule (%s): %w", n.Rule, err)
		}
	}
	return arn, nil
}

func (c *Provisioner) ruleTags(ctx context.Context, arn string) (map[string]string, error) {
	out, err := c.Events.ListTagsForResource(ctx, &eventbridge.ListTagsForResourceInput{ResourceARN: aws.String(arn)})
	if err != nil {
		return nil, err
	}
	return awsops.TagMap(out.Tags, func(t types.Tag) (*string, *string) { return t.Key, t.Value }), nil
}

func eventsTag(k, v *string) types.Tag { return types.Tag{Key: k, Value: v} }

func (c *Provisioner) syncRuleTags(ctx context.Context, arn string, want map[string]string) error {
	have, err := c.ruleTags(ctx, arn)
	if err != nil {
		return err
	}
	return awsops.SyncTags(ctx, have, want, func(ctx context.Context, keys []string) error {
		_, err := c.Events.UntagResource(ctx, &eventbridge.UntagResourceInput{ResourceARN: aws.String(arn), TagKeys: keys})
		return err
	}, func(ctx context.Context, set map[string]string) error {
		_, err := c.Events.TagResource(ctx, &eventbridge.TagResourceInput{ResourceARN: aws.String(arn), Tags: awsops.TagList(set, eventsTag)})
		return err
	})
}

// target returns the rule's target of id TargetID, or nil.
func (c *Provisioner) target(ctx context.Context, bus, rule string) (*types.Target, error) {
	out, err := c.Events.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: aws.String(rule), EventBusName: aws.String(bus)})
	if err != nil {
		return nil, err
	}
	for _, t := range out.Targets {
		if aws.ToString(t.Id) == TargetID {
			return &t, nil
		}
	}
	return nil, &awsops.NotFoundError{Kind: "target of rule", ID: rule}
}

// ensureTarget makes the queue the rule's target.
func (c *Provisioner) ensureTarget(ctx context.Context, bus, rule, queueARN string) error {
	have, err := c.target(ctx, bus, rule)
	if err != nil && !errors.Is(err, awsops.ErrNotFound) {
		return fmt.Errorf("reading the target of rule (%s): %w", rule, err)
	}
	if err == nil && aws.ToString(have.Arn) == queueARN {
		return nil
	}
	out, err := c.Events.PutTargets(ctx, &eventbridge.PutTargetsInput{
		Rule: aws.String(rule), EventBusName: aws.String(bus),
		Targets: []types.Target{{Id: aws.String(TargetID), Arn: aws.String(queueARN)}},
	})
	if err == nil && out.FailedEntryCount > 0 && len(out.FailedEntries) > 0 {
		f := out.FailedEntries[0]
		err = fmt.Errorf("%s: %s", aws.ToString(f.ErrorCode), aws.ToString(f.ErrorMessage))
	}
	if err != nil {
		return fmt.Errorf("adding the queue as target of rule (%s): %w", rule, err)
	}
	return nil
}

// deleteRule removes the rule's target and the rule; a rule already gone is
// not an error.
func (c *Provisioner) deleteRule(ctx context.Context, bus, rule string) error {
	_, err := c.Events.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String(rule), EventBusName: aws.String(bus), Ids: []string{TargetID}})
	if awsops.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("removing the target of rule (%s): %w", rule, err)
	}
	_, err = c.Events.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String(rule), EventBusName: aws.String(bus)})
	if err := awsops.IgnoreNotFound(err); err != nil {
		return fmt.Errorf("deleting rule (%s): %w", rule, err)
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

func (c *Provisioner) readRule(ctx context.Context, p *pass) error {
	st := p.st
	if st.RuleARN != "" {
		have, err := c.getRule(ctx, st.EventBusName, p.n.Rule)
		switch {
		case errors.Is(err, awsops.ErrNotFound):
			st.RuleARN = ""
		case err != nil:
			return fmt.Errorf("reading rule (%s): %w", p.n.Rule, err)
		default:
			st.RuleARN = aws.ToString(have.Arn)
			p.d.AddChanged(ComponentRule, ruleDiff(p.s, have)...)
			t, err := c.target(ctx, st.EventBusName, p.n.Rule)
			switch {
			case errors.Is(err, awsops.ErrNotFound):
				p.d.AddMissing(ComponentTarget)
			case err != nil:
				return fmt.Errorf("reading the target of rule (%s): %w", p.n.Rule, err)
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

// lookupRule records the rule, on the bus that the queue's policy names,
// and its pattern as the Spec gave it.
func (c *Provisioner) lookupRule(ctx context.Context, p *pass) error {
	s, st := &p.s, p.st
	rule, err := c.getRule(ctx, st.EventBusName, p.n.Rule)
	if errors.Is(err, awsops.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading rule (%s): %w", p.n.Rule, err)
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

// splitPattern returns the sources and detail types of a pattern that
// BuildPattern could have built, or else the pattern itself.
func splitPattern(p string) (sources, detailTypes []string, pattern string) {
	var m map[string][]string
	if err := json.Unmarshal([]byte(p), &m); err != nil || len(m) == 0 {
		return nil, nil, p
	}
	for k := range m {
		if k != "source" && k != "detail-type" {
			return nil, nil, p
		}
	}
	sources, detailTypes = m["source"], m["detail-type"]
	if BuildPattern(sources, detailTypes) != canonical(p) {
		return nil, nil, p
	}
	return sources, detailTypes, ""
}

// canonical is p with sorted keys and no spaces.
func canonical(p string) string {
	var v any
	if json.Unmarshal([]byte(p), &v) != nil {
		return p
	}
	return jsonOf(v)
}

var ruleComponent = componentDef{
	Name: ComponentRule, Recorded: func(st State) bool { return st.RuleARN != "" },
	Ensure: onBus((*Provisioner).ensureRuleAndTarget), Read: onBus((*Provisioner).readRule),
	Remove: func(c *Provisioner, ctx context.Context, st *State) error {
		if st.RuleARN == "" {
			return nil
		}
		if err := c.deleteRule(ctx, st.EventBusName, NamesFor(st.Name).Rule); err != nil {
			return err
		}
		st.RuleARN = ""
		return nil
	},
	Lookup: onBus((*Provisioner).lookupRule),
}
