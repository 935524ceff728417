package subscription

import (
	"cmp"
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
	// ComponentTopicSubscription is the queue's subscription to the topic
	// of a topic subscription.
	ComponentTopicSubscription = "topic_subscription"
)

// DriftComponents are the components that a Drift may name.
var DriftComponents = []string{ComponentDeadLetterQueue, ComponentQueue, ComponentQueuePolicy, ComponentRule, ComponentTarget, ComponentTopicSubscription, ComponentInbox}

// UnusedComponents are the components that a subscription to a topic (or
// else to a bus) does not have.
func UnusedComponents(topic bool) []string {
	if topic {
		return []string{ComponentRule, ComponentTarget}
	}
	return []string{ComponentTopicSubscription}
}

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
func (c *Provisioner) Read(ctx context.Context, s Spec, st State) (State, Drift, error) {
	s = s.WithDefaults()
	var d Drift
	if !st.Exists() {
		return st, d, ErrNotFound
	}
	st.EventBusName = cmp.Or(st.EventBusName, BusName(s.EventBus))
	st.TopicARN = cmp.Or(st.TopicARN, s.TopicARN)
	p := &pass{s: s, st: &st, n: st.names(), d: &d}
	for _, k := range components {
		if err := k.read(c, ctx, p); err != nil {
			return st, d, err
		}
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
func (c *Provisioner) Lookup(ctx context.Context, name string) (Spec, State, error) {
	p := &pass{
		s:  Spec{Name: name, EventBus: DefaultEventBus},
		st: &State{Name: name, EventBusName: DefaultEventBus},
		n:  NamesFor(name),
	}
	if url, _, err := c.queueByName(ctx, NamesOf(name, true).Queue); err == nil && url != "" {
		// A subscription to a FIFO topic.
		p.n = NamesOf(name, true)
	}
	for _, k := range components {
		if err := k.lookup(c, ctx, p); err != nil {
			return p.s, *p.st, fmt.Errorf("importing outbox subscription (%s): %w", name, err)
		}
	}
	if !p.st.Exists() {
		return p.s, *p.st, fmt.Errorf("importing outbox subscription (%s): neither the queue %s nor the rule %s exists: %w", name, p.n.Queue, p.n.Rule, ErrNotFound)
	}
	p.s.Tags = ownTags(p.tags)
	return p.s, *p.st, nil
}

func (c *Provisioner) queueByName(ctx context.Context, name string) (string, map[string]string, error) {
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
