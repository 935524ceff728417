package subscription

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// Components of a subscription, as named in a Drift.
const (
	ComponentDeadLetterQueue = "dead_letter_queue"
	ComponentQueue           = "queue"
	ComponentQueuePolicy     = "queue_policy"
	ComponentRule            = "rule"
	ComponentTarget          = "target"
)

// Change and Drift report what Read found different from the Spec (see
// awsops.Drift); Update repairs all of it in place.
type (
	Change = awsops.Change
	Drift  = awsops.Drift
)

// Read observes every component recorded in st and compares it with s. It
// returns the observed State, in which missing components are cleared (so
// that Update recreates them), and the Drift. When nothing recorded exists
// any more, Read returns ErrNotFound.
func (c *Clients) Read(ctx context.Context, s Spec, st State) (State, Drift, error) {
	s = s.WithDefaults()
	var d Drift
	if !st.Exists() {
		return st, d, ErrNotFound
	}
	n := NamesFor(st.Name)
	if st.EventBusName == "" {
		st.EventBusName = BusName(s.EventBus)
	}
	if st.DeadLetterQueueURL != "" {
		attrs, err := c.queue(ctx, st.DeadLetterQueueURL)
		if err != nil {
			return st, d, fmt.Errorf("reading dead-letter queue (%s): %w", n.DeadLetterQueue, err)
		}
		if attrs == nil {
			st.DeadLetterQueueURL, st.DeadLetterQueueARN = "", ""
		} else {
			st.DeadLetterQueueARN = attrs[attrQueueARN]
			d.AddChanged(ComponentDeadLetterQueue, attributeDiff(attrs, deadLetterAttributes(s))...)
		}
	}
	if st.DeadLetterQueueURL == "" {
		d.AddMissing(ComponentDeadLetterQueue)
	}
	if st.QueueURL != "" {
		attrs, err := c.queue(ctx, st.QueueURL)
		if err != nil {
			return st, d, fmt.Errorf("reading queue (%s): %w", n.Queue, err)
		}
		if attrs == nil {
			st.QueueURL, st.QueueARN = "", ""
		} else {
			st.QueueARN = attrs[attrQueueARN]
			dlq := st.DeadLetterQueueARN
			if dlq == "" {
				dlq = "(missing)"
			}
			d.AddChanged(ComponentQueue, attributeDiff(attrs, queueAttributes(s, dlq))...)
			ruleARN := st.RuleARN
			if ruleARN == "" {
				ruleARN, _ = RuleARN(st.QueueARN, st.EventBusName, n.Rule)
			}
			switch policy := attrs[attrPolicy]; {
			case policy == "":
				d.AddMissing(ComponentQueuePolicy)
			case !awsops.SamePolicy(policy, QueuePolicy(st.QueueARN, ruleARN).JSON()):
				d.AddChanged(ComponentQueuePolicy, "policy")
			}
		}
	}
	if st.QueueURL == "" {
		d.AddMissing(ComponentQueue)
		d.AddMissing(ComponentQueuePolicy)
	}
	if st.RuleARN != "" {
		have, err := c.getRule(ctx, st.EventBusName, n.Rule)
		if err != nil {
			return st, d, fmt.Errorf("reading rule (%s): %w", n.Rule, err)
		}
		if have == nil {
			st.RuleARN = ""
		} else {
			st.RuleARN = aws.ToString(have.Arn)
			d.AddChanged(ComponentRule, ruleDiff(s, have)...)
			t, err := c.target(ctx, st.EventBusName, n.Rule)
			if err != nil {
				return st, d, fmt.Errorf("reading the target of rule (%s): %w", n.Rule, err)
			}
			switch {
			case t == nil:
				d.AddMissing(ComponentTarget)
			case aws.ToString(t.Arn) != st.QueueARN:
				d.AddChanged(ComponentTarget, "arn")
			}
		}
	}
	if st.RuleARN == "" {
		d.AddMissing(ComponentRule)
		d.AddMissing(ComponentTarget)
	}
	if !st.Exists() {
		return st, d, ErrNotFound
	}
	return st, d, nil
}

// Lookup finds the subscription called name, for import: it returns the
// Spec that describes it, as far as AWS tells, and its State. The queue's
// policy names the rule, and so the bus; a queue without policy is taken to
// be subscribed on the default bus. It returns ErrNotFound when neither the
// queue nor a rule on the default bus exists.
func (c *Clients) Lookup(ctx context.Context, name string) (Spec, State, error) {
	n := NamesFor(name)
	s := Spec{Name: name, EventBus: DefaultEventBus}
	st := State{Name: name, EventBusName: DefaultEventBus}
	url, attrs, err := c.queueByName(ctx, n.Queue)
	if err != nil {
		return s, st, fmt.Errorf("importing outbox subscription (%s): reading queue (%s): %w", name, n.Queue, err)
	}
	var tags map[string]string
	if attrs != nil {
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
		if bus, _, ok := ParseRuleARN(RuleARNOfPolicy(attrs[attrPolicy])); ok {
			s.EventBus, st.EventBusName = bus, bus
		}
		out, err := c.SQS.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(url)})
		if err != nil {
			return s, st, fmt.Errorf("importing outbox subscription (%s): reading the tags of queue (%s): %w", name, n.Queue, err)
		}
		tags = out.Tags
	}
	url, attrs, err = c.queueByName(ctx, n.DeadLetterQueue)
	if err != nil {
		return s, st, fmt.Errorf("importing outbox subscription (%s): reading dead-letter queue (%s): %w", name, n.DeadLetterQueue, err)
	}
	if attrs != nil {
		st.DeadLetterQueueURL, st.DeadLetterQueueARN = url, attrs[attrQueueARN]
		s.DeadLetter.MessageRetentionSeconds = int32(atoi(attrs[attrRetention]))
	}
	rule, err := c.getRule(ctx, st.EventBusName, n.Rule)
	if err != nil {
		return s, st, fmt.Errorf("importing outbox subscription (%s): reading rule (%s): %w", name, n.Rule, err)
	}
	if rule != nil {
		st.RuleARN = aws.ToString(rule.Arn)
		pattern := aws.ToString(rule.EventPattern)
		s.Sources, s.DetailTypes, s.EventPattern = splitPattern(pattern)
		rt, err := c.ruleTags(ctx, st.RuleARN)
		if err != nil {
			return s, st, fmt.Errorf("importing outbox subscription (%s): reading the tags of rule (%s): %w", name, n.Rule, err)
		}
		if rt[TagPattern] == "event_pattern" {
			s.Sources, s.DetailTypes, s.EventPattern = nil, nil, pattern
		}
		if tags == nil {
			tags = rt
		}
	}
	if !st.Exists() {
		return s, st, fmt.Errorf("importing outbox subscription (%s): neither the queue %s nor the rule %s exists: %w", name, n.Queue, n.Rule, ErrNotFound)
	}
	s.Tags = ownTags(tags)
	return s, st, nil
}

func (c *Clients) queueByName(ctx context.Context, name string) (string, map[string]string, error) {
	out, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if awsops.IsNotFound(err) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	url := aws.ToString(out.QueueUrl)
	attrs, err := c.queue(ctx, url)
	return url, attrs, err
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
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
