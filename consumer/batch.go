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
// order and the lanes concurrently: on a FIFO queue one lane per message
// group; on a standard queue one lane per event, so that a duplicate in the
// batch follows its first delivery, and one per undecodable message. A
// lane's indexes are in the batch's order.
func sqsLanes[T any](records []events.SQSMessage, decoded []Event[T], errs []error) [][]int {
	var lanes [][]int
	byKey := map[string]int{}
	for i, m := range records {
		key := ""
		switch {
		case strings.HasSuffix(m.EventSourceARN, ".fifo"):
			if g := m.Attributes["MessageGroupId"]; g != "" {
				key = "group " + g
			}
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

// earlierInLane names the failed message m, whose event is e, for the
// later messages of its lane.
func earlierInLane[T any](m events.SQSMessage, e Event[T]) string {
	if strings.HasSuffix(m.EventSourceARN, ".fifo") {
		return "an earlier message of group " + m.Attributes["MessageGroupId"]
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
