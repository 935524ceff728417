package outbox

import (
	"errors"
	"fmt"
)

// Problems with an event, found before anything is written. Each EventError
// wraps one of them, so callers can branch with errors.Is.
var (
	ErrEmptySource         = errors.New("source is empty")
	ErrInvalidSource       = errors.New("source is not valid")
	ErrEmptyDetailType     = errors.New("detail type is empty")
	ErrInvalidDetailType   = errors.New("detail type is not valid")
	ErrDetailNotObject     = errors.New("detail is not a JSON object")
	ErrEventTooLarge       = errors.New("event exceeds the 256 KB entry limit")
	ErrMissingPartitionKey = errors.New("partition key is empty")
	ErrInvalidEventID      = errors.New("event id is not a ULID")
	ErrTooManyActions      = errors.New("transaction has more than 100 actions")
)

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
