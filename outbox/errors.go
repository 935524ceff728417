package outbox

import (
	"errors"
	"fmt"
	"strings"
)

// Problems with an event, found before anything is written. Each EventError
// wraps one of them, so callers can branch with errors.Is.
var (
	ErrEmptySource         = errors.New("source is empty")
	ErrInvalidSource       = errors.New("source is not valid")
	ErrEmptyDetailType     = errors.New("detail type is empty")
	ErrInvalidDetailType   = errors.New("detail type is not valid")
	ErrDetailNotObject     = errors.New("detail is not a JSON object")
	ErrEventTooLarge       = errors.New("event exceeds its target's size limit")
	ErrMissingPartitionKey = errors.New("partition key is empty")
	ErrInvalidEventID      = errors.New("event id is not a ULID")
	ErrTooManyActions      = errors.New("transaction has more than 100 actions")
	ErrInvalidOrderingKey  = errors.New("ordering key is not 1 to 128 letters, digits and punctuation")
	ErrMissingOrderingKey  = errors.New("ordering key is empty")
	ErrSequenceUnknown     = errors.New("last sequence of the ordering key is unknown")
	ErrInvalidTraceParent  = errors.New("trace parent is not a W3C traceparent")
)

// ErrSequenceConflict is what a *SequenceConflictError wraps: another writer
// took the next sequence number of an ordering key first. Nothing was
// written; read the data again and retry the whole write.
var ErrSequenceConflict = errors.New("another writer advanced the sequence of the ordering key first")

// EventError reports why an event was rejected. Nothing was written.
type EventError struct {
	// Index of the event among those passed to the call.
	Index int
	// Field of Event that is at fault.
	Field string
	// Err is one of the Err* values of this package.
	Err error
	// Fix says what to change.
	Fix string
}

func (e *EventError) Error() string {
	return fmt.Sprintf("outbox event %d: %s: %v; %s", e.Index, e.Field, e.Err, e.Fix)
}

func (e *EventError) Unwrap() error { return e.Err }

// TransactionError reports a transaction that DynamoDB would refuse before
// sending it. Nothing was written.
type TransactionError struct {
	Actions int
	Err     error
}

func (e *TransactionError) Error() string {
	return fmt.Sprintf("outbox transaction: %v (it has %d actions; DynamoDB allows %d): split the write or send fewer events", e.Err, e.Actions, MaxTransactionActions)
}

func (e *TransactionError) Unwrap() error { return e.Err }

// SequenceConflictError reports a transaction cancelled because another
// writer advanced the sequence of one of its ordering keys first, or was
// advancing it at the same moment. Nothing was written. It wraps both
// ErrSequenceConflict and DynamoDB's TransactionCanceledException, for
// errors.Is and errors.As.
type SequenceConflictError struct {
	// OrderingKeys are the keys whose sequence item refused the write.
	OrderingKeys []string
	// Err is the cancellation DynamoDB returned.
	Err error
}

func (e *SequenceConflictError) Error() string {
	return fmt.Sprintf("outbox sequence of ordering key %q: %v; nothing was written: read the data again and retry the write (%v)",
		strings.Join(e.OrderingKeys, `", "`), ErrSequenceConflict, e.Err)
}

func (e *SequenceConflictError) Unwrap() []error { return []error{ErrSequenceConflict, e.Err} }

// ConfigError reports a Table that cannot work.
type ConfigError struct {
	Field   string
	Problem string
	Fix     string
}

func (e *ConfigError) Error() string {
	return fmt.Sprintf("outbox table %s %s: %s", e.Field, e.Problem, e.Fix)
}

// RecordError reports an item that does not follow the contract: a relay
// cannot publish it and must not retry it.
type RecordError struct {
	Attribute string
	Problem   string
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("malformed outbox item: attribute %s %s", e.Attribute, e.Problem)
}
