package sqs

import (
	"context"
	"time"
)

// ---- in-process consumer contract (Lambda event source mappings) ----

// Received is a message an in-process consumer received: its id, receipt
// handle, body and MD5, every system attribute (as ReceiveMessage returns
// them for AttributeNames ["All"]) and every message attribute.
type Received struct {
	MessageID, ReceiptHandle, Body, MD5OfBody string
	Attributes                                map[string]string
	MD5OfMessageAttributes                    string
	MessageAttributes                         map[string]MessageAttribute
}

// QueueInfo is what a consumer needs to know of a queue: whether it is a
// FIFO queue and its visibility timeout in seconds.
func (s *Service) QueueInfo(queueArn string) (fifo bool, visibilityTimeout int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.byARN(queueArn)
	if q == nil {
		return false, 0, false
	}
	return q.isFIFO(), q.intAttr("VisibilityTimeout"), true
}

// Receive is ReceiveMessage for another service of the stack (a Lambda
// event source mapping's poller): up to maxMessages (1 to 10) messages with
// the queue's visibility timeout, waiting up to wait for the first. It
// follows the queue's rules (FIFO groups, the redrive policy) and does no
// authorisation: the caller checks its role.
func (s *Service) Receive(ctx context.Context, queueArn string, maxMessages int, wait time.Duration) ([]Received, error) {
	s.mu.Lock()
	q := s.byARN(queueArn)
	if q == nil {
		s.mu.Unlock()
		return nil, errNoQueue()
	}
	visibility := time.Duration(q.intAttr("VisibilityTimeout")) * time.Second
	s.mu.Unlock()
	maxMessages = min(max(maxMessages, 1), MaxBatchEntries)
	args := receiveArgs{maxMessages: maxMessages, visibility: visibility, sysNames: []string{"All"}, attrNames: []string{"All"}}
	msgs, err := s.poll(ctx, q, args, wait)
	if err != nil {
		return nil, err
	}
	out := make([]Received, len(msgs))
	for i, m := range msgs {
		out[i] = Received{MessageID: m.MessageId, ReceiptHandle: m.ReceiptHandle, Body: m.Body, MD5OfBody: m.MD5OfBody,
			Attributes: m.Attributes, MD5OfMessageAttributes: m.MD5OfMessageAttributes, MessageAttributes: m.MessageAttributes}
	}
	return out, nil
}

// DeleteReceived is DeleteMessage for another service of the stack.
func (s *Service) DeleteReceived(queueArn, receiptHandle string) error {
	q, err := s.queueByARN(queueArn)
	if err != nil {
		return err
	}
	return s.deleteOne(q, receiptHandle)
}

// ChangeReceivedVisibility is ChangeMessageVisibility for another service
// of the stack.
func (s *Service) ChangeReceivedVisibility(queueArn, receiptHandle string, timeout int) error {
	q, err := s.queueByARN(queueArn)
	if err != nil {
		return err
	}
	return s.changeVisibility(q, receiptHandle, timeout)
}

func (s *Service) queueByARN(queueArn string) (*queue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.byARN(queueArn); q != nil {
		return q, nil
	}
	return nil, errNoQueue()
}
