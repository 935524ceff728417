package consumer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Defaults of an Inbox.
const (
	// DefaultLease is how long an attempt holds its event. It keeps the
	// rule of the package documentation (the function's timeout < the lease
	// < (maxReceiveCount - 1) x the visibility timeout) with a
	// subscription's default queue, 30 s of visibility and 5 receives
	// (120 s), for any function that queue can serve (Lambda requires its
	// timeout to be at most the visibility timeout).
	DefaultLease = 90 * time.Second
	// DefaultRetention is how long a completed entry is kept (its TTL): the
	// window in which a redelivery is recognised. It must exceed the longest
	// time an event can be delivered again: the relay republishes pending
	// events for as long as they are pending, and a queue keeps a message 4
	// days by default.
	DefaultRetention = 7 * 24 * time.Hour
	// MaxEffects is the number of effects one completion commits beside the
	// inbox entry: TransactWriteItems takes 100 actions.
	MaxEffects = 99
)

// Client is the part of the DynamoDB client an Inbox uses.
type Client interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Inbox records which events a consumer applied, in a DynamoDB table whose
// only key is the string partition key AttrEventID. It is safe for
// concurrent use.
type Inbox struct {
	client    Client
	table     string
	lease     time.Duration
	retention time.Duration
	now       func() time.Time
	newToken  func() string
	metrics   *Metrics
	log       *slog.Logger
}

// Option configures an Inbox.
type Option func(*Inbox)

// WithLease sets how long an attempt holds its event (DefaultLease).
func WithLease(d time.Duration) Option { return func(in *Inbox) { in.lease = d } }

// WithRetention sets how long a completed entry is kept (DefaultRetention).
func WithRetention(d time.Duration) Option { return func(in *Inbox) { in.retention = d } }

// WithClock sets the clock that leases and TTLs are computed from.
func WithClock(now func() time.Time) Option { return func(in *Inbox) { in.now = now } }

// WithMetrics sets the recorder of the inbox's counts (default: a new one,
// see Inbox.Metrics).
func WithMetrics(m *Metrics) Option { return func(in *Inbox) { in.metrics = m } }

// WithLogger sets the logger (default: NewLogger on stderr).
func WithLogger(l *slog.Logger) Option { return func(in *Inbox) { in.log = l } }

// NewInbox returns the inbox in table.
func NewInbox(client Client, table string, opts ...Option) (*Inbox, error) {
	in := &Inbox{client: client, table: table, lease: DefaultLease, retention: DefaultRetention,
		now: time.Now, newToken: newLeaseToken}
	for _, o := range opts {
		o(in)
	}
	switch {
	case client == nil:
		return nil, errors.New("consumer: NewInbox needs a DynamoDB client")
	case table == "":
		return nil, errors.New("consumer: NewInbox needs the inbox table's name")
	case in.lease <= 0:
		return nil, fmt.Errorf("consumer: the lease must be positive, not %s", in.lease)
	case in.retention <= 0:
		return nil, fmt.Errorf("consumer: the retention must be positive, not %s", in.retention)
	}
	if in.metrics == nil {
		in.metrics = NewMetrics()
	}
	if in.log == nil {
		in.log = NewLogger(nil, slog.LevelInfo)
	}
	return in, nil
}

// Metrics returns the inbox's recorder.
func (in *Inbox) Metrics() *Metrics { return in.metrics }

// Outcome is what Process did with a delivery.
type Outcome int

// Outcomes of Process.
const (
	// Applied: the handler ran and its completion (with its effects) was
	// committed.
	Applied Outcome = iota + 1
	// Duplicate: the event had completed before; the handler did not run.
	Duplicate
)

func (o Outcome) String() string {
	switch o {
	case Applied:
		return "applied"
	case Duplicate:
		return "duplicate"
	}
	return "none"
}

// Tx collects the DynamoDB writes of a handler, committed in the
// transaction that completes the inbox entry.
type Tx struct{ items []types.TransactWriteItem }

// Add adds effects to the completing transaction.
func (tx *Tx) Add(items ...types.TransactWriteItem) { tx.items = append(tx.items, items...) }

// Len is the number of effects added.
func (tx *Tx) Len() int { return len(tx.items) }

// Process applies the event eventID, whose data hashes to hash
// (PayloadHash), once: it takes the event's lease, runs fn, and completes
// the entry together with the effects fn added to tx. A completed event is
// a Duplicate and fn does not run. The errors: ErrPayloadMismatch (a
// *PayloadMismatchError), ErrInProgress, ErrLeaseLost, ErrTooManyEffects,
// fn's own error, or a DynamoDB error. After fn's error, ErrTooManyEffects
// or a failed completion the lease is released, so that the next delivery
// may try at once. A completion refused by a condition wrote nothing; one
// whose outcome is unknown (a network error) is settled by the next
// delivery, a Duplicate if it was written.
func (in *Inbox) Process(ctx context.Context, eventID, hash string, fn func(ctx context.Context, tx *Tx) error) (Outcome, error) {
	if eventID == "" || hash == "" {
		return 0, fmt.Errorf("%w: empty event id or payload hash", ErrMalformedEvent)
	}
	a := attempt{eventID: eventID, hash: hash, token: in.newToken(), leaseExpires: in.now().Add(in.lease)}
	duplicate, err := in.acquire(ctx, a)
	if err != nil {
		return 0, err
	}
	if duplicate {
		return Duplicate, nil
	}
	tx := &Tx{}
	err = fn(ctx, tx)
	if err == nil && tx.Len() > MaxEffects {
		err = fmt.Errorf("%w: %d effects, at most %d", ErrTooManyEffects, tx.Len(), MaxEffects)
	}
	if err == nil {
		err = in.complete(ctx, a, tx.items)
	}
	if err != nil {
		if !errors.Is(err, ErrLeaseLost) {
			in.release(ctx, a)
		}
		return 0, err
	}
	in.metrics.add(EventsApplied, 1)
	return Applied, nil
}

// acquire puts the attempt's IN_PROGRESS entry. It reports a duplicate, or
// the reason it may not run.
func (in *Inbox) acquire(ctx context.Context, a attempt) (duplicate bool, err error) {
	out, err := in.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(in.table),
		Item:                a.item(in.retention),
		ConditionExpression: aws.String(AcquireCondition),
		ExpressionAttributeNames: map[string]string{
			"#id": AttrEventID, "#status": AttrStatus, "#lease": AttrLeaseExpiresAt, "#hash": AttrPayloadHash,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":inProgress": str(StatusInProgress), ":now": num(in.now().UnixMilli()), ":hash": str(a.hash),
		},
		ReturnValues:                        types.ReturnValueAllOld,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var failed *types.ConditionalCheckFailedException
	if errors.As(err, &failed) {
		return in.refused(ctx, a, readEntry(failed.Item))
	}
	if err != nil {
		return false, fmt.Errorf("consumer: taking the lease of event %s in %s: %w", a.eventID, in.table, err)
	}
	if len(out.Attributes) > 0 {
		if old := readEntry(out.Attributes); old.token != "" {
			in.metrics.add(LeasesTakenOver, 1)
			in.log.WarnContext(ctx, "lease taken over", "eventId", a.eventID,
				"expiredAt", time.UnixMilli(old.leaseExpiresAt).UTC().Format(time.RFC3339Nano))
		}
	}
	return false, nil
}

// refused decides, from the entry that failed the put's condition, why: the
// payload hash first, on every path, then completed or in progress.
func (in *Inbox) refused(ctx context.Context, a attempt, old entry) (duplicate bool, err error) {
	if old.hash != a.hash {
		in.metrics.add(PayloadMismatches, 1)
		mismatch := &PayloadMismatchError{EventID: a.eventID, Stored: old.hash, Delivered: a.hash, Status: old.status}
		in.log.ErrorContext(ctx, "payload mismatch", "eventId", a.eventID, "status", old.status,
			"storedHash", old.hash, "deliveredHash", a.hash)
		return false, mismatch
	}
	if old.status == StatusCompleted {
		in.metrics.add(DuplicatesSkipped, 1)
		in.log.InfoContext(ctx, "duplicate skipped", "eventId", a.eventID)
		return true, nil
	}
	in.metrics.add(EventsInProgress, 1)
	in.log.InfoContext(ctx, "event in progress elsewhere", "eventId", a.eventID,
		"leaseExpiresAt", time.UnixMilli(old.leaseExpiresAt).UTC().Format(time.RFC3339Nano))
	return false, fmt.Errorf("%w: event %s, until %s", ErrInProgress, a.eventID,
		time.UnixMilli(old.leaseExpiresAt).UTC().Format(time.RFC3339Nano))
}

func newLeaseToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:])
}
