package subscription

import (
	"context"
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
	if awsops.IsNotFound(err) {
		return nil, nil
	}
	return out, err
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
	if err != nil {
		return "", fmt.Errorf("reading rule (%s): %w", n.Rule, err)
	}
	tags := s.ruleTags()
	if have != nil && !exists {
		return "", fmt.Errorf("creating rule (%s): a rule of that name already exists on the bus %s (%s): delete it, import it, or choose another subscription name", n.Rule, bus, aws.ToString(have.Arn))
	}
	if have != nil && len(ruleDiff(s, have)) == 0 {
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
	if have == nil {
		in.Tags = awsops.TagList(tags, eventsTag)
	}
	out, err := c.Events.PutRule(ctx, in)
	verb := "updating"
	if have == nil {
		verb = "creating"
	}
	if err != nil {
		return "", fmt.Errorf("%s rule (%s): %w", verb, n.Rule, err)
	}
	arn := aws.ToString(out.RuleArn)
	if have != nil {
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
	return nil, nil
}

// ensureTarget makes the queue the rule's target.
func (c *Provisioner) ensureTarget(ctx context.Context, bus, rule, queueARN string) error {
	have, err := c.target(ctx, bus, rule)
	if err != nil {
		return fmt.Errorf("reading the target of rule (%s): %w", rule, err)
	}
	if have != nil && aws.ToString(have.Arn) == queueARN {
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
