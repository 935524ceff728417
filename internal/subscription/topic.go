package subscription

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// Attributes of the queue's subscription to the topic.
const (
	attrRawDelivery  = "RawMessageDelivery"
	attrFilterPolicy = "FilterPolicy"
	attrFilterScope  = "FilterPolicyScope"
	// scopeAttributes matches the filter policy on the message attributes,
	// SNS's default scope.
	scopeAttributes = "MessageAttributes"
)

// topicSubscriptionAttributes are the settings of the queue's subscription:
// raw delivery, so that the queue receives the relay's message itself, and
// the filter policy on its source and detail-type attributes.
func topicSubscriptionAttributes(s Spec) map[string]string {
	return map[string]string{attrRawDelivery: "true", attrFilterPolicy: s.FilterPolicy(), attrFilterScope: scopeAttributes}
}

// topicSubscriptionDiff returns the settings of want that have differs
// from, sorted.
func topicSubscriptionDiff(have, want map[string]string) []string {
	var out []string
	for k, v := range want {
		h := have[k]
		switch {
		case k == attrFilterPolicy && SameJSON(h, v):
		case k == attrFilterScope && h == "" && v == scopeAttributes:
		case h != v:
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// topicSubscription returns the attributes of the subscription arn, or a
// NotFoundError when it does not exist.
func (c *Provisioner) topicSubscription(ctx context.Context, arn string) (map[string]string, error) {
	out, err := c.SNS.GetSubscriptionAttributes(ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(arn)})
	if err != nil {
		return nil, awsops.NotFound("topic subscription", arn, err)
	}
	return out.Attributes, nil
}

// ensureTopicSubscription subscribes the queue to the topic, or brings the
// recorded subscription's settings to the Spec.
func (c *Provisioner) ensureTopicSubscription(ctx context.Context, p *pass) error {
	st := p.st
	want := topicSubscriptionAttributes(p.s)
	if st.SubscriptionARN != "" {
		have, err := c.topicSubscription(ctx, st.SubscriptionARN)
		if err != nil && !errors.Is(err, awsops.ErrNotFound) {
			return fmt.Errorf("reading the subscription of queue (%s) to topic (%s): %w", p.n.Queue, st.TopicARN, err)
		}
		if err == nil && have["Endpoint"] == st.QueueARN {
			for _, k := range topicSubscriptionDiff(have, want) {
				if _, err := c.SNS.SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{
					SubscriptionArn: aws.String(st.SubscriptionARN), AttributeName: aws.String(k), AttributeValue: aws.String(want[k]),
				}); err != nil {
					return fmt.Errorf("updating %s of the subscription of queue (%s) to topic (%s): %w", k, p.n.Queue, st.TopicARN, err)
				}
			}
			return nil
		}
		st.SubscriptionARN = ""
	}
	out, err := c.SNS.Subscribe(ctx, &sns.SubscribeInput{
		TopicArn: aws.String(st.TopicARN), Protocol: aws.String("sqs"), Endpoint: aws.String(st.QueueARN),
		Attributes: want, ReturnSubscriptionArn: true,
	})
	if err != nil {
		return fmt.Errorf("subscribing queue (%s) to topic (%s): %w", p.n.Queue, st.TopicARN, err)
	}
	st.SubscriptionARN = aws.ToString(out.SubscriptionArn)
	return nil
}

// readTopicSubscription records the drift of the queue's subscription.
func (c *Provisioner) readTopicSubscription(ctx context.Context, p *pass) error {
	st := p.st
	if st.SubscriptionARN != "" {
		have, err := c.topicSubscription(ctx, st.SubscriptionARN)
		switch {
		case errors.Is(err, awsops.ErrNotFound):
			st.SubscriptionARN = ""
		case err != nil:
			return fmt.Errorf("reading the subscription of queue (%s) to topic (%s): %w", p.n.Queue, st.TopicARN, err)
		case have["Endpoint"] != st.QueueARN:
			p.d.AddChanged(ComponentTopicSubscription, "endpoint")
		default:
			p.d.AddChanged(ComponentTopicSubscription, topicSubscriptionDiff(have, topicSubscriptionAttributes(p.s))...)
		}
	}
	if st.SubscriptionARN == "" {
		p.d.AddMissing(ComponentTopicSubscription)
	}
	return nil
}

// removeTopicSubscription unsubscribes the queue; a subscription already
// gone is not an error.
func (c *Provisioner) removeTopicSubscription(ctx context.Context, st *State) error {
	err := awsops.Delete(ctx, "topic subscription", st.SubscriptionARN, func(ctx context.Context, arn string) error {
		_, err := c.SNS.Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: aws.String(arn)})
		return err
	})
	if err != nil {
		return err
	}
	st.SubscriptionARN = ""
	return nil
}

// lookupTopicSubscription finds the queue's subscription to the topic that
// its policy names, and the filter policy as the Spec gave it.
func (c *Provisioner) lookupTopicSubscription(ctx context.Context, p *pass) error {
	s, st := &p.s, p.st
	pages := sns.NewListSubscriptionsByTopicPaginator(c.SNS, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(st.TopicARN)})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("listing the subscriptions of topic (%s): %w", st.TopicARN, err)
		}
		for _, sub := range out.Subscriptions {
			if aws.ToString(sub.Protocol) != "sqs" || aws.ToString(sub.Endpoint) != st.QueueARN {
				continue
			}
			st.SubscriptionARN = aws.ToString(sub.SubscriptionArn)
			attrs, err := c.topicSubscription(ctx, st.SubscriptionARN)
			if err != nil && !errors.Is(err, awsops.ErrNotFound) {
				return fmt.Errorf("reading the subscription of queue (%s) to topic (%s): %w", p.n.Queue, st.TopicARN, err)
			}
			s.Sources, s.DetailTypes, _ = splitPattern(attrs[attrFilterPolicy])
			return nil
		}
	}
	return nil
}

var topicSubscriptionComponent = componentDef{
	Name: ComponentTopicSubscription, Recorded: func(st State) bool { return st.SubscriptionARN != "" },
	Ensure: onTopic((*Provisioner).ensureTopicSubscription), Read: onTopic((*Provisioner).readTopicSubscription),
	Remove: (*Provisioner).removeTopicSubscription, Lookup: onTopic((*Provisioner).lookupTopicSubscription),
}
