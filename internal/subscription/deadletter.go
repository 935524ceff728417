package subscription

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

func (c *Provisioner) readDeadLetterQueue(ctx context.Context, p *pass) error {
	st := p.st
	return c.readQueueOf(ctx, p, "dead-letter queue", p.n.DeadLetterQueue, &st.DeadLetterQueueURL, &st.DeadLetterQueueARN, func(attrs map[string]string) {
		p.d.AddChanged(ComponentDeadLetterQueue, attributeDiff(attrs, deadLetterAttributes(p.s))...)
	}, ComponentDeadLetterQueue)
}

func (c *Provisioner) lookupDeadLetterQueue(ctx context.Context, p *pass) error {
	url, attrs, err := c.queueByName(ctx, p.n.DeadLetterQueue)
	if errors.Is(err, awsops.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading dead-letter queue (%s): %w", p.n.DeadLetterQueue, err)
	}
	p.st.DeadLetterQueueURL, p.st.DeadLetterQueueARN = url, attrs[attrQueueARN]
	p.s.DeadLetter.MessageRetentionSeconds = int32(atoi(attrs[attrRetention]))
	return nil
}

// deadLetterAttributes are the attributes of the dead-letter queue; s has
// its defaults.
func deadLetterAttributes(s Spec) map[string]string {
	return fifo(s, encryption(map[string]string{
		attrRetention:      strconv.Itoa(int(s.DeadLetter.MessageRetentionSeconds)),
		attrMaxMessageSize: maxMessageSize, // what the queue redrives to it
	}, s.Queue.KMSMasterKeyID))
}

var deadLetterQueueComponent = componentDef{
	Name: ComponentDeadLetterQueue, Recorded: func(st State) bool { return st.DeadLetterQueueURL != "" },
	Ensure: func(c *Provisioner, ctx context.Context, p *pass) error {
		return c.ensureQueue(ctx, queueSpec{
			what: "dead-letter queue", name: p.n.DeadLetterQueue, attrs: deadLetterAttributes(p.s), tags: p.s.tags(),
		}, &p.st.DeadLetterQueueURL, &p.st.DeadLetterQueueARN)
	},
	Read:   (*Provisioner).readDeadLetterQueue,
	Remove: removeQueue("dead-letter queue", func(st *State) (*string, *string) { return &st.DeadLetterQueueURL, &st.DeadLetterQueueARN }),
	Lookup: (*Provisioner).lookupDeadLetterQueue,
}
