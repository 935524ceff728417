package consumer

import (
	"strings"
	"sync"

	"github.com/aws/aws-lambda-go/events"
)

// DefaultConcurrency is how many messages (on a FIFO queue, message groups)
// of a batch HandleSQS applies at once by default: a subscription's event
// source mapping delivers batches of 10 by default.
const DefaultConcurrency = 10

// WithConcurrency sets how many messages of a standard queue's batch, or
// message groups of a FIFO queue's, HandleSQS applies at once
// (DefaultConcurrency); 1 applies a batch in order, one message at a time.
func WithConcurrency(n int) ConsumerOption { return func(s *consumerSettings) { s.concurrency = n } }

// sqsLanes splits a batch into lanes of record indexes, each applied in
// order and the lanes concurrently: one lane per message group that orders
// its messages (groupOf); otherwise one lane per event, so that a duplicate
// in the batch follows its first delivery, and one per undecodable message.
// A lane's indexes are in the batch's order.
func sqsLanes[T any](records []events.SQSMessage, decoded []Event[T], errs []error) [][]int {
	var lanes [][]int
	byKey := map[string]int{}
	for i, m := range records {
		key := ""
		switch g := groupOf(m); {
		case g != "":
			key = "group " + g
		case errs[i] == nil:
			key = "event " + decoded[i].ID
		}
		if l, ok := byKey[key]; ok && key != "" {
			lanes[l] = append(lanes[l], i)
			continue
		}
		if key != "" {
			byKey[key] = len(lanes)
		}
		lanes = append(lanes, []int{i})
	}
	return lanes
}

// groupOf returns the message group whose messages m must be applied in
// order with: its MessageGroupId on a FIFO queue (eventSourceARN ending in
// ".fifo"), "" on a standard queue, where a MessageGroupId (a fair queue's
// tenant) orders nothing. A message with a MessageGroupId and no
// eventSourceARN, as a poller other than Lambda's event source mapping may
// deliver it, comes from a queue the kit cannot tell: it is taken as a FIFO
// queue's (unknownSource), since applying a standard queue's group in order
// only delays its later messages after a failure, while applying a FIFO
// group's concurrently would apply them out of order.
func groupOf(m events.SQSMessage) string {
	if g := m.Attributes["MessageGroupId"]; g != "" && (m.EventSourceARN == "" || strings.HasSuffix(m.EventSourceARN, fifoSuffix)) {
		return g
	}
	return ""
}

// fifoSuffix ends the name, and so the ARN, of every FIFO queue.
const fifoSuffix = ".fifo"

// unknownSource counts the messages of records that have a MessageGroupId
// and no eventSourceARN (groupOf).
func unknownSource(records []events.SQSMessage) int {
	n := 0
	for _, m := range records {
		if m.EventSourceARN == "" && m.Attributes["MessageGroupId"] != "" {
			n++
		}
	}
	return n
}

// earlierInLane names the failed message m, whose event is e, for the
// later messages of its lane.
func earlierInLane[T any](m events.SQSMessage, e Event[T]) string {
	if g := groupOf(m); g != "" {
		return "an earlier message of group " + g
	}
	return "an earlier delivery of event " + e.ID + " in the batch"
}

// runLanes runs apply on each lane, at most limit at once, and returns when
// all are done.
func runLanes(limit int, lanes [][]int, apply func(lane []int)) {
	if limit == 1 || len(lanes) == 1 {
		for _, lane := range lanes {
			apply(lane)
		}
		return
	}
	slots := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for _, lane := range lanes {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			apply(lane)
		})
	}
	wg.Wait()
}
