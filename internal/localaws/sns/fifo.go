package sns

import (
	"regexp"
	"strings"
	"sync"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// FIFO topics, as the SNS Developer Guide and API Reference document them:
// a topic named <name>.fifo and created with FifoTopic=true requires a
// MessageGroupId on every publish and a MessageDeduplicationId unless it has
// ContentBasedDeduplication (the SHA-256 of the message); a duplicate of
// the last five minutes is accepted with the original's ids and not
// delivered. It delivers only to SQS queues (FIFO and standard), in order
// per message group, passing the group and deduplication ids on to FIFO
// queues.

// DefaultDeduplicationWindow is the deduplication interval of FIFO topics.
const DefaultDeduplicationWindow = awsapi.DeduplicationWindow

var fifoTopicNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,251}\.fifo$`)

// fifoTopicAttrs are the attributes only FIFO topics have, with their
// checks.
var fifoTopicAttrs = map[string]func(string) bool{
	"ContentBasedDeduplication": func(v string) bool { return v == "true" || v == "false" },
	"FifoThroughputScope":       func(v string) bool { return v == "Topic" || v == "MessageGroup" },
}

func (t *topic) isFIFO() bool { return t.fifoTopic }

// fifoState is what a FIFO topic keeps: its last sequence number, the
// deduplication ids of the window, and the deliveries in order.
type fifoState struct {
	sequence uint64
	dedup    awsapi.Window[published]
	ordered  serial
}

// published is a message a deduplication id was first published with.
type published struct {
	id, sequence string
}

// checkTopicName checks a CreateTopic name against the topic type asked.
func checkTopicName(name string, fifo bool) error {
	if fifo && !fifoTopicNameRE.MatchString(name) {
		return errInvalid("Invalid parameter: Fifo Topic names must end with .fifo and must be made up of only uppercase and lowercase ASCII letters, numbers, underscores, and hyphens, and must be between 1 and 256 characters long.")
	}
	if !fifo && !topicNameRE.MatchString(name) {
		return errInvalid("Invalid parameter: Topic Name")
	}
	return nil
}

// validateFifoTopicAttr checks an attribute only FIFO topics have; ok is
// false when k is not one of them.
func validateFifoTopicAttr(fifo bool, k, v string) (ok bool, err error) {
	check, known := fifoTopicAttrs[k]
	if !known {
		return false, nil
	}
	if !fifo {
		return true, errInvalid("Invalid parameter: Attributes Reason: %s is only valid for FIFO topics", k)
	}
	if !check(v) {
		return true, errInvalid("Invalid parameter: Attributes Reason: %s: Invalid value [%s]", k, v)
	}
	return true, nil
}

// fifoIDs checks the group and deduplication ids of a message published to
// t and fills them in, the deduplication id computed from the message
// under ContentBasedDeduplication; s.mu must be held.
func fifoIDs(t *topic, m *outgoing) error {
	if !t.isFIFO() {
		if m.dedupID != "" {
			return errInvalid("Invalid parameter: MessageDeduplicationId Reason: The request includes MessageDeduplicationId parameter that is not valid for this topic type")
		}
		return nil
	}
	if m.groupID == "" {
		return errInvalid("Invalid parameter: The MessageGroupId parameter is required for FIFO topics")
	}
	if !awsapi.FIFOTokenRE.MatchString(m.groupID) {
		return errInvalid("Invalid parameter: MessageGroupId Reason: MessageGroupId can only include alphanumeric and punctuation characters, 1 to 128 in length")
	}
	if m.dedupID == "" {
		if t.attrs["ContentBasedDeduplication"] != "true" {
			return errInvalid("Invalid parameter: The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
		}
		m.dedupID = awsapi.ContentDeduplicationID(m.message)
	} else if !awsapi.FIFOTokenRE.MatchString(m.dedupID) {
		return errInvalid("Invalid parameter: MessageDeduplicationId Reason: MessageDeduplicationId can only include alphanumeric and punctuation characters, 1 to 128 in length")
	}
	return nil
}

// admit checks the FIFO ids of a message published to t, numbers a FIFO
// topic's message and records its deduplication id; a duplicate of the
// window gets the original's id and sequence number and fresh false.
func (s *Service) admit(t *topic, m *outgoing) (fresh bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := fifoIDs(t, m); err != nil || !t.isFIFO() {
		return err == nil, err
	}
	now := s.env.Time()
	key := m.dedupID
	if t.attrs["FifoThroughputScope"] == "MessageGroup" {
		key = m.groupID + "\x00" + m.dedupID
	}
	if p, dup := t.fifo.dedup.Get(key, now, s.DeduplicationWindow); dup {
		m.id, m.sequence = p.id, p.sequence
		return false, nil
	}
	t.fifo.sequence++
	m.sequence = awsapi.SequenceNumber(t.fifo.sequence)
	t.fifo.dedup.Put(key, published{id: m.id, sequence: m.sequence}, now)
	return true, nil
}

// checkFifoEndpoint checks a subscription to t: a FIFO topic delivers only
// to SQS queues, and a FIFO queue subscribes only to a FIFO topic.
func checkFifoEndpoint(t *topic, protocol, endpoint string) error {
	if t.isFIFO() && protocol != "sqs" {
		return errInvalid("Invalid parameter: Invalid protocol type: %s. FIFO topics deliver only to Amazon SQS queues", protocol)
	}
	if !t.isFIFO() && protocol == "sqs" && isFIFOQueue(endpoint) {
		return errInvalid("Invalid parameter: Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics")
	}
	return nil
}

func isFIFOQueue(queueArn string) bool { return strings.HasSuffix(queueArn, ".fifo") }

// serial runs functions one at a time, in the order they were given, in
// the background: the deliveries of a FIFO topic, which keep the order of
// each message group.
type serial struct {
	mu      sync.Mutex
	queue   []func()
	running bool
}

func (q *serial) run(bg *awsapi.Background, fn func()) {
	q.mu.Lock()
	q.queue = append(q.queue, fn)
	if q.running {
		q.mu.Unlock()
		return
	}
	q.running = true
	q.mu.Unlock()
	bg.Go(func() {
		for {
			q.mu.Lock()
			if len(q.queue) == 0 {
				q.running = false
				q.mu.Unlock()
				return
			}
			next := q.queue[0]
			q.queue = q.queue[1:]
			q.mu.Unlock()
			next()
		}
	})
}
