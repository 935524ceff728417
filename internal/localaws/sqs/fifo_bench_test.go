package sqs

import (
	"strconv"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// BenchmarkFifoReceiveDeepQueue receives (and deletes) ten messages at a
// time from a FIFO queue holding 50,000 messages of 500 groups: the cost
// of a receive must not grow with the messages waiting behind it.
func BenchmarkFifoReceiveDeepQueue(b *testing.B) {
	s := New(&awsapi.Env{Endpoint: "http://127.0.0.1:0", AccountID: "000000000000", Region: "us-east-1"})
	q := &queue{name: "deep.fifo", arn: "arn:aws:sqs:us-east-1:000000000000:deep.fifo", attrs: defaultAttrs(true),
		receipts: map[string]*message{}, notify: make(chan struct{})}
	s.queues[q.name] = q
	send := func(i int) {
		id := strconv.Itoa(i)
		if _, err := s.DeliverTo(q.arn, Delivery{Body: "m" + id, GroupID: "g" + strconv.Itoa(i%500), DeduplicationID: id}); err != nil {
			b.Fatal(err)
		}
	}
	sent := 0
	for ; sent < 50000; sent++ {
		send(sent)
	}
	args := receiveArgs{maxMessages: 10, visibility: DefaultVisibilityTimeout * time.Second}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.mu.Lock()
		got, _ := s.take(q, args)
		s.mu.Unlock()
		if len(got) == 0 {
			b.Fatal("nothing received")
		}
		for _, m := range got {
			if err := s.deleteOne(q, m.ReceiptHandle); err != nil {
				b.Fatal(err)
			}
			sent++
			send(sent) // keep the queue deep
		}
	}
}
