package sqs

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// FIFO queues, as the SQS Developer Guide and API Reference document them:
// a queue named <name>.fifo and created with FifoQueue=true keeps the order
// of each message group (MessageGroupId), delivers no later message of a
// group while one of it is in flight, and drops a message whose
// deduplication id (MessageDeduplicationId, or with
// ContentBasedDeduplication the SHA-256 of the body) was sent in the last
// five minutes: the send succeeds with the original's MessageId.

// DefaultDeduplicationWindow is the deduplication interval of FIFO queues
// and of ReceiveRequestAttemptId: five minutes.
const DefaultDeduplicationWindow = awsapi.DeduplicationWindow

// The attributes only FIFO queues have, and their defaults.
var fifoDefaults = map[string]string{
	"FifoQueue": "true", "ContentBasedDeduplication": "false",
	"DeduplicationScope": "queue", "FifoThroughputLimit": "perQueue",
}

var fifoEnums = map[string][]string{
	"DeduplicationScope":  {"messageGroup", "queue"},
	"FifoThroughputLimit": {"perQueue", "perMessageGroupId"},
}

var fifoNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,75}\.fifo$`)

func (q *queue) isFIFO() bool { return q.attrs["FifoQueue"] == "true" }

// checkQueueName checks a CreateQueue name against the queue type asked.
func checkQueueName(name string, fifo bool) error {
	if fifo && !fifoNameRE.MatchString(name) {
		return errInvalidParameter("The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.")
	}
	if !fifo && !queueNameRE.MatchString(name) {
		return errInvalidParameter("Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length")
	}
	return nil
}

// normaliseFifoAttr validates one of the FIFO attributes; fifo tells
// whether the queue is a FIFO queue (standard queues do not know them).
func normaliseFifoAttr(k, v string, fifo bool) (string, error) {
	if !fifo {
		if k == "FifoQueue" {
			if b, err := strconv.ParseBool(v); err == nil && !b {
				return "", nil // FifoQueue=false creates a standard queue
			}
		}
		return "", errInvalidAttributeName(k)
	}
	if enum, ok := fifoEnums[k]; ok {
		if slices.Contains(enum, v) {
			return v, nil
		}
		return "", errInvalidAttributeValue(k)
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return "", errInvalidAttributeValue(k)
	}
	return strconv.FormatBool(b), nil
}

// checkThroughput checks the combination of the high-throughput
// attributes: perMessageGroupId is allowed only with the messageGroup
// deduplication scope.
func checkThroughput(attrs map[string]string) error {
	if attrs["FifoThroughputLimit"] == "perMessageGroupId" && attrs["DeduplicationScope"] != "messageGroup" {
		return sqsError("InvalidAttributeValue", "InvalidAttributeValue",
			"Invalid value for the parameter FifoThroughputLimit. Reason: The perMessageGroupId value is allowed only when the value for DeduplicationScope is messageGroup.")
	}
	return nil
}

// merged returns the queue's attributes with attrs applied, to check
// combinations before changing the queue.
func (q *queue) merged(attrs map[string]string) map[string]string {
	out := make(map[string]string, len(q.attrs)+len(attrs))
	maps.Copy(out, q.attrs)
	maps.Copy(out, attrs)
	return out
}

// checkRedriveTarget refuses a dead-letter queue of the other type: a FIFO
// queue's must be FIFO, a standard queue's standard. s.mu must be held.
func (s *Service) checkRedriveTarget(fifo bool, policy string) error {
	rp, ok := parseRedrive(policy)
	if !ok {
		return nil
	}
	dlq := s.byARN(rp.DeadLetterTargetArn)
	if dlq == nil || dlq.isFIFO() == fifo {
		return nil
	}
	return errInvalidParameter("Value %s for parameter RedrivePolicy is invalid. Reason: Dead-letter target must be of the same type (FIFO or standard) as the source queue.", policy)
}

// fifoIDs are a message's FIFO identifiers.
type fifoIDs struct {
	groupID, dedupID string
}

// checkFifoIDs checks the group and deduplication ids of a send to q and
// returns them, with the deduplication id computed from the body under
// ContentBasedDeduplication. delay is a per-message DelaySeconds, nil
// when none was given.
func checkFifoIDs(q *queue, groupID, dedupID, body string, delay *int) (fifoIDs, error) {
	if !q.isFIFO() {
		if dedupID != "" {
			return fifoIDs{}, errInvalidParameter("Value %s for parameter MessageDeduplicationId is invalid. Reason: The request includes a parameter that is not valid for this queue type.", dedupID)
		}
		if groupID != "" && !awsapi.FIFOTokenRE.MatchString(groupID) {
			return fifoIDs{}, errInvalidParameter("Value %s for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.", groupID)
		}
		return fifoIDs{groupID: groupID}, nil
	}
	if delay != nil {
		return fifoIDs{}, errInvalidParameter("Value %d for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.", *delay)
	}
	if groupID == "" {
		return fifoIDs{}, errMissingParameter("MessageGroupId")
	}
	if !awsapi.FIFOTokenRE.MatchString(groupID) {
		return fifoIDs{}, errInvalidParameter("Value %s for parameter MessageGroupId is invalid. Reason: MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.", groupID)
	}
	if dedupID == "" {
		if q.attrs["ContentBasedDeduplication"] != "true" {
			return fifoIDs{}, errInvalidParameter("The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly")
		}
		dedupID = awsapi.ContentDeduplicationID(body)
	} else if !awsapi.FIFOTokenRE.MatchString(dedupID) {
		return fifoIDs{}, errInvalidParameter("Value %s for parameter MessageDeduplicationId is invalid. Reason: MessageDeduplicationId can only include alphanumeric and punctuation characters. 1 to 128 in length.", dedupID)
	}
	return fifoIDs{groupID: groupID, dedupID: dedupID}, nil
}

// dedupRecord is a deduplication id seen in the window: the message sent
// with it.
type dedupRecord struct {
	messageID, sequence string
}

func (q *queue) dedupKey(ids fifoIDs) string {
	if q.attrs["DeduplicationScope"] == "messageGroup" {
		return ids.groupID + "\x00" + ids.dedupID
	}
	return ids.dedupID
}

// duplicate returns the message an id of q's window was first sent with;
// s.mu must be held.
func (s *Service) duplicate(q *queue, ids fifoIDs, now time.Time) (dedupRecord, bool) {
	return q.dedup.Get(q.dedupKey(ids), now, s.DeduplicationWindow)
}

// stamp gives a FIFO message its ids and sequence number and records its
// deduplication id; s.mu must be held.
func (s *Service) stamp(q *queue, m *message, ids fifoIDs) {
	m.groupID, m.dedupID = ids.groupID, ids.dedupID
	if !q.isFIFO() {
		return
	}
	q.sequence++
	m.sequence = awsapi.SequenceNumber(q.sequence)
	q.dedup.Put(q.dedupKey(ids), dedupRecord{messageID: m.id, sequence: m.sequence}, m.sent)
}

// fifoCandidates orders the receivable messages of a FIFO queue: of each
// group without a message in flight, its messages in order up to the first
// one not yet visible; groups by their oldest message, a group's messages
// together, as SQS returns as many messages of one group as it can. It
// stops looking once it holds maxMessages that deadLettered does not move
// away. s.mu must be held.
func fifoCandidates(q *queue, now time.Time, maxMessages int, deadLettered func(*message) bool) (order []*message, next time.Time) {
	type group struct {
		blocked bool
		msgs    []*message
	}
	groups := map[string]*group{}
	var seen []*group
	scanLive(q, now, maxMessages, deadLettered, func(m *message) bool {
		g := groups[m.groupID]
		if g == nil {
			busy, until := q.groupInFlight(m.groupID, now)
			g = &group{blocked: busy}
			groups[m.groupID], seen = g, append(seen, g)
			next = earliest(next, until)
		}
		if g.blocked {
			return false
		}
		if now.Before(m.availableAt) {
			g.blocked = true
			next = earliest(next, m.availableAt)
			return false
		}
		g.msgs = append(g.msgs, m)
		return true
	})
	for _, g := range seen {
		order = append(order, g.msgs...)
	}
	return order, next
}

// earliest is the earlier of two times, zero meaning none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

// inFlight records a FIFO message just received; s.mu must be held.
func (q *queue) inFlight(m *message) {
	if q.received == nil {
		q.received = map[string][]*message{}
	}
	q.received[m.groupID] = append(q.received[m.groupID], m)
}

// groupInFlight reports whether a message of group is in flight, and until
// when the first of them is; it forgets the received messages that are
// deleted or visible again. s.mu must be held.
func (q *queue) groupInFlight(group string, now time.Time) (bool, time.Time) {
	kept := q.received[group][:0]
	var until time.Time
	for _, m := range q.received[group] {
		if !m.deleted && now.Before(m.availableAt) {
			kept = append(kept, m)
			until = earliest(until, m.availableAt)
		}
	}
	if len(kept) == 0 {
		delete(q.received, group)
		return false, time.Time{}
	}
	q.received[group] = kept
	return true, until
}

// receiveAttempt is a ReceiveMessage of a FIFO queue with a
// ReceiveRequestAttemptId: what it returned, for a retry.
type receiveAttempt struct {
	msgs     []*message
	handles  []string
	rendered []receivedMessage
}

// checkAttemptID validates a ReceiveRequestAttemptId.
func checkAttemptID(id string) error {
	if id != "" && !awsapi.FIFOTokenRE.MatchString(id) {
		return errInvalidParameter("Value %s for parameter ReceiveRequestAttemptId is invalid. Reason: ReceiveRequestAttemptId can only include alphanumeric and punctuation characters. 1 to 128 in length.", id)
	}
	return nil
}

// retryAttempt answers a retried ReceiveMessage of a FIFO queue: within the
// window, while none of the messages it returned was deleted or had its
// visibility changed, the same messages and receipt handles, with their
// visibility timeout reset. s.mu must be held.
func (s *Service) retryAttempt(q *queue, id string, visibility time.Duration, now time.Time) ([]receivedMessage, bool) {
	a, ok := q.attempts.Get(id, now, s.DeduplicationWindow)
	if !ok {
		return nil, false
	}
	for i, m := range a.msgs {
		if m.deleted || m.attempt != id || m.handle != a.handles[i] || !now.Before(m.availableAt) {
			q.attempts.Delete(id)
			return nil, false
		}
	}
	for _, m := range a.msgs {
		m.availableAt = now.Add(visibility)
	}
	return a.rendered, true
}

// recordAttempt remembers the messages a ReceiveMessage with attempt id
// returned; s.mu must be held.
func (s *Service) recordAttempt(q *queue, id string, taken []*message, rendered []receivedMessage, now time.Time) {
	if id == "" || !q.isFIFO() || len(taken) == 0 {
		return
	}
	a := receiveAttempt{msgs: taken, rendered: rendered}
	for _, m := range taken {
		m.attempt = id
		a.handles = append(a.handles, m.handle)
	}
	q.attempts.Put(id, a, now)
}

// fifoSystemAttributes are the system attributes of a FIFO message (and
// the group id of a standard queue's message sent with one).
func fifoSystemAttributes(m *message) map[string]string {
	out := map[string]string{}
	if m.groupID != "" {
		out["MessageGroupId"] = m.groupID
	}
	if m.dedupID != "" {
		out["MessageDeduplicationId"] = m.dedupID
	}
	if m.sequence != "" {
		out["SequenceNumber"] = m.sequence
	}
	return out
}
