package subscription

import (
	"cmp"
	"context"
	"fmt"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/component"
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
	if err := component.Read(ctx, components, c, p); err != nil {
		return st, d, err
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
	if _, _, err := c.queueByName(ctx, NamesOf(name, true).Queue); err == nil {
		// A subscription to a FIFO topic.
		p.n = NamesOf(name, true)
	}
	if err := component.Lookup(ctx, components, c, p); err != nil {
		return p.s, *p.st, fmt.Errorf("importing outbox subscription (%s): %w", name, err)
	}
	if !p.st.Exists() {
		return p.s, *p.st, fmt.Errorf("importing outbox subscription (%s): neither the queue %s nor the rule %s exists: %w", name, p.n.Queue, p.n.Rule, ErrNotFound)
	}
	p.s.Tags = ownTags(p.tags)
	return p.s, *p.st, nil
}
