package subscription

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// SQS attribute names.
const (
	attrVisibilityTimeout = string(types.QueueAttributeNameVisibilityTimeout)
	attrRetention         = string(types.QueueAttributeNameMessageRetentionPeriod)
	attrReceiveWait       = string(types.QueueAttributeNameReceiveMessageWaitTimeSeconds)
	attrRedrivePolicy     = string(types.QueueAttributeNameRedrivePolicy)
	attrKMSKey            = string(types.QueueAttributeNameKmsMasterKeyId)
	attrSSE               = string(types.QueueAttributeNameSqsManagedSseEnabled)
	attrPolicy            = string(types.QueueAttributeNamePolicy)
	attrQueueARN          = string(types.QueueAttributeNameQueueArn)
	attrFIFO              = string(types.QueueAttributeNameFifoQueue)
	attrMaxMessageSize    = string(types.QueueAttributeNameMaximumMessageSize)
)

type queueSpec struct {
	what  string
	name  string
	attrs map[string]string
	tags  map[string]string
}

// encryption sets the attributes of SSE-KMS with key, or SSE-SQS.
func encryption(attrs map[string]string, key string) map[string]string {
	if key != "" {
		attrs[attrKMSKey] = key
		attrs[attrSSE] = "false"
	} else {
		attrs[attrSSE] = "true"
	}
	return attrs
}

// fifo makes both queues of a subscription to a FIFO topic FIFO queues
// (a FIFO queue's dead-letter queue is a FIFO queue too).
func fifo(s Spec, attrs map[string]string) map[string]string {
	if s.FIFO() {
		attrs[attrFIFO] = "true"
	}
	return attrs
}

// maxMessageSize is the queue's MaximumMessageSize: the largest message
// SQS takes (1 MiB), which holds the largest event any source delivers
// (an EventBridge event of a 1 MB entry, in its envelope, the writer
// counts up to that; an SNS notification of a 256 KiB message). A queue
// made with SQS's former default, 256 KiB, is raised to it.
var maxMessageSize = strconv.Itoa(outbox.TargetLimits[outbox.TargetSQS].MessageBytes)

// queueAttributes are the attributes of the queue, redriving to the
// dead-letter queue dlqARN; s has its defaults.
func queueAttributes(s Spec, dlqARN string) map[string]string {
	return fifo(s, encryption(map[string]string{
		attrMaxMessageSize:    maxMessageSize,
		attrVisibilityTimeout: strconv.Itoa(int(*s.Queue.VisibilityTimeoutSeconds)),
		attrRetention:         strconv.Itoa(int(s.Queue.MessageRetentionSeconds)),
		attrReceiveWait:       strconv.Itoa(int(s.Queue.ReceiveWaitTimeSeconds)),
		attrRedrivePolicy:     RedrivePolicy(dlqARN, s.Queue.MaxReceiveCount),
	}, s.Queue.KMSMasterKeyID))
}

// RedrivePolicy is the queue's redrive policy: after maxReceiveCount
// receives, a message moves to the dead-letter queue.
func RedrivePolicy(dlqARN string, maxReceiveCount int32) string {
	b, _ := json.Marshal(map[string]any{"deadLetterTargetArn": dlqARN, "maxReceiveCount": maxReceiveCount})
	return string(b)
}

type redrive struct {
	DeadLetterTargetARN string `json:"deadLetterTargetArn"`
	MaxReceiveCount     int    `json:"maxReceiveCount"`
}

// parseRedrive reads a redrive policy, whose maxReceiveCount SQS may
// report as a number or a string.
func parseRedrive(s string) (redrive, bool) {
	var raw struct {
		DeadLetterTargetARN string          `json:"deadLetterTargetArn"`
		MaxReceiveCount     json.RawMessage `json:"maxReceiveCount"`
	}
	if json.Unmarshal([]byte(s), &raw) != nil {
		return redrive{}, false
	}
	n := string(raw.MaxReceiveCount)
	if uq, err := strconv.Unquote(n); err == nil {
		n = uq
	}
	count, err := strconv.Atoi(n)
	if err != nil {
		return redrive{}, false
	}
	return redrive{DeadLetterTargetARN: raw.DeadLetterTargetARN, MaxReceiveCount: count}, true
}

// attributeDiff returns the attributes of want that have differs from, by
// name, sorted.
func attributeDiff(have, want map[string]string) []string {
	var out []string
	for k, v := range want {
		h := have[k]
		switch {
		case h == v:
		case k == attrSSE && v == "false" && h == "":
		case k == attrRedrivePolicy:
			a, aok := parseRedrive(h)
			b, bok := parseRedrive(v)
			if !aok || !bok || a != b {
				out = append(out, k)
			}
		default:
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// queue returns the attributes of the queue at url, or nil when it does not
// exist.
func (c *Provisioner) queue(ctx context.Context, url string) (map[string]string, error) {
	return awsops.QueueAttributes(ctx, c.SQS, url)
}

// ensureQueue updates the queue recorded in url, or creates it when there
// is none (or it was deleted out of band).
func (c *Provisioner) ensureQueue(ctx context.Context, q queueSpec, url, arn *string) error {
	if *url != "" {
		have, err := c.queue(ctx, *url)
		if err != nil && !errors.Is(err, awsops.ErrNotFound) {
			return fmt.Errorf("reading %s (%s): %w", q.what, q.name, err)
		}
		if err == nil {
			changed := map[string]string{}
			for _, k := range attributeDiff(have, q.attrs) {
				changed[k] = q.attrs[k]
			}
			if q.attrs[attrSSE] == "true" && have[attrKMSKey] != "" {
				// Back from SSE-KMS to SSE-SQS.
				changed[attrKMSKey] = ""
				changed[attrSSE] = "true"
			}
			if len(changed) > 0 {
				if _, err := c.SQS.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(*url), Attributes: changed}); err != nil {
					return fmt.Errorf("updating %s (%s): %w", q.what, q.name, err)
				}
			}
			if err := awsops.SyncQueueTags(ctx, c.SQS, *url, q.tags); err != nil {
				return fmt.Errorf("tagging %s (%s): %w", q.what, q.name, err)
			}
			*arn = have[attrQueueARN]
			return nil
		}
		*url, *arn = "", ""
	}
	if out, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(q.name)}); err == nil {
		return fmt.Errorf("creating %s (%s): a queue of that name already exists (%s): delete it, import it, or choose another subscription name", q.what, q.name, aws.ToString(out.QueueUrl))
	} else if !awsops.IsNotFound(err) {
		return fmt.Errorf("creating %s (%s): %w", q.what, q.name, err)
	}
	out, err := awsops.CreateQueue(ctx, c.SQS, c.waiter(), &sqs.CreateQueueInput{QueueName: aws.String(q.name), Attributes: q.attrs, Tags: q.tags})
	if err != nil {
		return fmt.Errorf("creating %s (%s): %w", q.what, q.name, err)
	}
	*url = aws.ToString(out.QueueUrl)
	attrs, err := c.queue(ctx, *url)
	if err != nil {
		return fmt.Errorf("reading %s (%s) after creating it: %w", q.what, q.name, err)
	}
	*arn = attrs[attrQueueARN]
	return nil
}

func (c *Provisioner) deleteQueue(ctx context.Context, what, url string) error {
	return awsops.Delete(ctx, what, url, func(ctx context.Context, url string) error {
		_, err := c.SQS.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)})
		return err
	})
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
		switch {
		case errors.Is(err, awsops.ErrNotFound):
			*url, *arn = "", ""
		case err != nil:
			return fmt.Errorf("reading %s (%s): %w", what, name, err)
		default:
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

// lookupQueue records the queue, its settings, its tags and, from its
// policy, the bus that the rule is on.
func (c *Provisioner) lookupQueue(ctx context.Context, p *pass) error {
	s, st := &p.s, p.st
	url, attrs, err := c.queueByName(ctx, p.n.Queue)
	if errors.Is(err, awsops.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading queue (%s): %w", p.n.Queue, err)
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

// queueByName returns the URL and attributes of the queue called name, or a
// NotFoundError when it does not exist.
func (c *Provisioner) queueByName(ctx context.Context, name string) (string, map[string]string, error) {
	out, err := c.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	if err != nil {
		return "", nil, awsops.NotFound("queue", name, err)
	}
	url := aws.ToString(out.QueueUrl)
	attrs, err := c.queue(ctx, url)
	return url, attrs, err
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

var queueComponent = componentDef{
	Name: ComponentQueue, Recorded: func(st State) bool { return st.QueueURL != "" },
	Ensure: (*Provisioner).ensureQueueAndPolicy, Read: (*Provisioner).readQueue,
	Remove: removeQueue("queue", func(st *State) (*string, *string) { return &st.QueueURL, &st.QueueARN }),
	Lookup: (*Provisioner).lookupQueue,
}
