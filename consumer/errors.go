package consumer

import (
	"errors"
	"fmt"
)

// ErrPayloadMismatch is the error of an event id delivered with data whose
// hash differs from the one its inbox entry stores: the id was reused for
// another event, or the event was altered. It is never a duplicate.
var ErrPayloadMismatch = errors.New("consumer: the event id was delivered with another payload")

// ErrInProgress is the error of a delivery whose event another attempt holds
// the lease of: retry it later (the SQS adapter reports it failed).
var ErrInProgress = errors.New("consumer: another attempt holds the event's lease")

// ErrLeaseLost is the error of an attempt whose completion failed because
// its lease was taken over: nothing of its transaction was written.
var ErrLeaseLost = errors.New("consumer: the lease was lost before completion")

// ErrTooManyEffects is the error of a handler that added more effects than
// one TransactWriteItems holds beside the inbox entry (MaxEffects).
var ErrTooManyEffects = errors.New("consumer: too many effects for one transaction")

// ErrMalformedEvent is the error of a delivery that is not a published
// outbox event.
var ErrMalformedEvent = errors.New("consumer: not a published outbox event")

// PayloadMismatchError is the ErrPayloadMismatch of one event.
type PayloadMismatchError struct {
	EventID string
	// Stored is the hash the inbox entry holds; Delivered the delivery's.
	Stored, Delivered string
	// Status is the stored entry's status.
	Status string
}

func (e *PayloadMismatchError) Error() string {
	return fmt.Sprintf("consumer: event %s was delivered with payload hash %s, but its inbox entry (%s) stores %s: the id was reused for another payload",
		e.EventID, e.Delivered, e.Status, e.Stored)
}

// Is makes errors.Is(err, ErrPayloadMismatch) hold.
func (e *PayloadMismatchError) Is(target error) bool { return target == ErrPayloadMismatch }
