package outbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/oklog/ulid/v2"
)

// TimeFormat is the layout of occurredAt and publishedAt: UTC, RFC 3339 with
// milliseconds, so that values sort as strings.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// Limits enforced before writing, taken from the services involved.
const (
	// MaxEntryBytes is the largest event every target kind accepts: SNS's
	// message limit (TargetLimits has each kind's).
	MaxEntryBytes = 256 * 1024
	// MaxTransactionActions is DynamoDB's TransactWriteItems limit.
	MaxTransactionActions = 100
	maxSourceLength       = 256
	maxDetailTypeLength   = 128
)

// Event is what an application publishes.
type Event struct {
	// ID is the event's ULID. Leave it empty to have one generated.
	ID string
	// PartitionKey is the partition key value of the outbox item. In a shared
	// table it is the aggregate's partition key and is required; in a
	// dedicated table it defaults to the sort key value.
	PartitionKey string
	// Source and DetailType become the published event's source and
	// detail-type.
	Source     string
	DetailType string
	// Detail is a JSON object.
	Detail json.RawMessage
	// OccurredAt defaults to the time of writing.
	OccurredAt time.Time
	// TraceHeader is an optional X-Ray trace header.
	TraceHeader string
	// TraceParent and TraceState are the W3C trace context of the code
	// that wrote the event; WithTraceContext (and Write) set them from the
	// caller's context.
	TraceParent, TraceState string
	// OrderingKey makes the event ordered: it names the aggregate whose
	// events are published in sequence (on FIFO targets, the message group
	// id), and the writer gives the event the key's next sequence number.
	// With WithOrdering it defaults to PartitionKey. 1 to 128 letters,
	// digits and punctuation.
	OrderingKey string
}

// Record is an outbox item as stored.
type Record struct {
	PartitionKey string
	SortKey      string
	EventID      string
	Source       string
	DetailType   string
	Detail       json.RawMessage
	OccurredAt   time.Time
	Status       Status
	PendingShard string
	PendingSince int64
	TraceHeader  string
	// TraceParent and TraceState are the W3C trace context the event was
	// written in; empty when none.
	TraceParent, TraceState string
	Attempts                int
	LastError               string
	PublishedAt             time.Time
	ExpiresAt               int64
	// NextAttemptAt (Unix milliseconds) is when a relay's hold on the item
	// ends; 0 when none was taken.
	NextAttemptAt int64
	// DataRef is where the data of a claim-checked event is; Detail is then
	// empty.
	DataRef *DataRef
	// OrderingKey and Sequence are set on an ordered event: its aggregate
	// and its number among the aggregate's events, from 1. Both are empty
	// on an unordered one.
	OrderingKey string
	Sequence    int64
	// Origin is the AWS Region the event was written in (AttrOrigin);
	// empty on items written without one.
	Origin string
}

// newRecord validates e and returns the pending record it becomes, with its
// ordering key (ordered says every event is ordered) but without its
// sequence; the caller checks its size once the sequence is set. index
// identifies the event in errors.
func (t Table) newRecord(e Event, index int, now time.Time, ordered bool) (Record, error) {
	fail := func(field string, err error, fix string) (Record, error) {
		return Record{}, &EventError{Index: index, Field: field, Err: err, Fix: fix}
	}
	occurred := e.OccurredAt
	if occurred.IsZero() {
		occurred = now
	}
	occurred = occurred.UTC().Truncate(time.Millisecond)
	id := e.ID
	if id == "" {
		id = ulid.MustNew(ulid.Timestamp(occurred), ulid.DefaultEntropy()).String()
	} else if _, err := ulid.ParseStrict(id); err != nil {
		return fail("ID", ErrInvalidEventID, "leave ID empty to generate one, or pass a 26-character ULID")
	}
	switch {
	case e.Source == "":
		return fail("Source", ErrEmptySource, `set the event source, for example "com.example.orders"`)
	case utf8.RuneCountInString(e.Source) > maxSourceLength || strings.HasPrefix(e.Source, "aws."):
		return fail("Source", ErrInvalidSource, `use at most 256 characters that do not start with "aws."`)
	case e.DetailType == "":
		return fail("DetailType", ErrEmptyDetailType, `set the event's detail type, for example "OrderPlaced"`)
	case utf8.RuneCountInString(e.DetailType) > maxDetailTypeLength:
		return fail("DetailType", ErrInvalidDetailType, "use at most 128 characters")
	}
	detail, ok := compactObject(e.Detail)
	if !ok {
		return fail("Detail", ErrDetailNotObject, "pass a JSON object such as {\"orderId\":\"1234\"}; use {} for none")
	}
	pk := e.PartitionKey
	if pk == "" {
		if t.Layout == LayoutShared {
			return fail("PartitionKey", ErrMissingPartitionKey, "set it to the partition key of the aggregate the event belongs to")
		}
		pk = t.SortKeyFor(id)
	}
	r := Record{
		PartitionKey: pk,
		SortKey:      t.SortKeyFor(id),
		EventID:      id,
		Source:       e.Source,
		DetailType:   e.DetailType,
		Detail:       detail,
		OccurredAt:   occurred,
		Status:       StatusPending,
		TraceHeader:  e.TraceHeader,
		TraceParent:  e.TraceParent,
		TraceState:   e.TraceState,
	}
	if r.TraceParent != "" && !validTraceParent(r.TraceParent) {
		return fail("TraceParent", ErrInvalidTraceParent, "pass a W3C traceparent such as \"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\", or leave it empty")
	}
	if !t.NoPendingIndex {
		r.PendingShard = PendingShardKey(t.ShardFor(id))
		r.PendingSince = occurred.UnixMilli()
	}
	key, err := orderingKeyOf(e, ordered, index)
	r.OrderingKey = key
	return r, err
}

// orderingKeyOf returns e's ordering key: OrderingKey, or with ordered its
// partition key; "" for an unordered event.
func orderingKeyOf(e Event, ordered bool, index int) (string, error) {
	fail := func(err error, fix string) (string, error) {
		return "", &EventError{Index: index, Field: "OrderingKey", Err: err, Fix: fix}
	}
	switch {
	case e.OrderingKey != "":
		if !validOrderingKey(e.OrderingKey) {
			return fail(ErrInvalidOrderingKey, "use at most 128 letters, digits and punctuation, without spaces: the key becomes the FIFO message group id")
		}
		return e.OrderingKey, nil
	case !ordered:
		return "", nil
	case e.PartitionKey == "":
		return fail(ErrMissingOrderingKey, "set OrderingKey (or PartitionKey) to the key of the aggregate the event belongs to: in a dedicated table the partition key defaults to the event's own sort key, which orders nothing")
	case !validOrderingKey(e.PartitionKey):
		return fail(ErrInvalidOrderingKey, fmt.Sprintf("the partition key %q cannot be the ordering key: set OrderingKey to at most 128 letters, digits and punctuation, without spaces", e.PartitionKey))
	}
	return e.PartitionKey, nil
}

// compactObject returns raw without insignificant space, if it is a JSON object.
func compactObject(raw json.RawMessage) (json.RawMessage, bool) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return nil, false
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, trimmed); err != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// Key returns the primary key of the item that holds r.
func (t Table) Key(r Record) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		t.PartitionKey: &types.AttributeValueMemberS{Value: r.PartitionKey},
		t.SortKey:      &types.AttributeValueMemberS{Value: r.SortKey},
	}
}

// Item returns the DynamoDB item of a pending record.
func (t Table) Item(r Record) map[string]types.AttributeValue {
	item := t.Key(r)
	item[AttrEventID] = &types.AttributeValueMemberS{Value: r.EventID}
	item[AttrSource] = &types.AttributeValueMemberS{Value: r.Source}
	item[AttrDetailType] = &types.AttributeValueMemberS{Value: r.DetailType}
	if r.DataRef != nil {
		item[AttrDataRef] = dataRefValue(*r.DataRef)
	} else {
		item[AttrDetail] = &types.AttributeValueMemberS{Value: string(r.Detail)}
	}
	item[AttrOccurredAt] = &types.AttributeValueMemberS{Value: r.OccurredAt.UTC().Format(TimeFormat)}
	item[AttrStatus] = &types.AttributeValueMemberS{Value: string(r.Status)}
	item[AttrVersion] = &types.AttributeValueMemberN{Value: strconv.Itoa(ContractVersion)}
	if r.PendingShard != "" {
		item[AttrPendingShard] = &types.AttributeValueMemberS{Value: r.PendingShard}
		item[AttrPendingSince] = &types.AttributeValueMemberN{Value: strconv.FormatInt(r.PendingSince, 10)}
	}
	if r.TraceHeader != "" {
		item[AttrTraceHeader] = &types.AttributeValueMemberS{Value: r.TraceHeader}
	}
	if r.TraceParent != "" {
		item[AttrTraceParent] = &types.AttributeValueMemberS{Value: r.TraceParent}
		if r.TraceState != "" {
			item[AttrTraceState] = &types.AttributeValueMemberS{Value: r.TraceState}
		}
	}
	if r.Sequence > 0 {
		item[AttrOrderingKey] = &types.AttributeValueMemberS{Value: r.OrderingKey}
		item[AttrSequence] = numberValue(r.Sequence)
	}
	if r.Origin != "" {
		item[AttrOrigin] = &types.AttributeValueMemberS{Value: r.Origin}
	}
	return item
}

// ParseItem decodes an outbox item. It returns a *RecordError when the item
// breaks the contract; such an item can never be published.
func (t Table) ParseItem(item map[string]types.AttributeValue) (Record, error) {
	return t.parseItem(item, false)
}

// ParsePendingItem decodes an item found among pending items (in the
// pending index, or by a scan of a dedicated table). Such an item is an
// outbox item whatever its sort key prefix, current, former or forgotten:
// its sort key needs only to end with its event id.
func (t Table) ParsePendingItem(item map[string]types.AttributeValue) (Record, error) {
	return t.parseItem(item, true)
}

func (t Table) parseItem(item map[string]types.AttributeValue, anyPrefix bool) (Record, error) {
	p := itemParser{item: item}
	r := Record{
		PartitionKey:  p.str(t.PartitionKey, true),
		SortKey:       p.str(t.SortKey, true),
		EventID:       p.str(AttrEventID, true),
		Source:        p.str(AttrSource, true),
		DetailType:    p.str(AttrDetailType, true),
		Status:        Status(p.str(AttrStatus, true)),
		PendingShard:  p.str(AttrPendingShard, false),
		PendingSince:  p.num(AttrPendingSince),
		TraceHeader:   p.str(AttrTraceHeader, false),
		TraceParent:   p.str(AttrTraceParent, false),
		TraceState:    p.str(AttrTraceState, false),
		Attempts:      int(p.num(AttrAttempts)),
		LastError:     p.str(AttrLastError, false),
		ExpiresAt:     p.num(t.TTLAttribute),
		NextAttemptAt: p.num(AttrNextAttemptAt),
		OrderingKey:   p.str(AttrOrderingKey, false),
		Sequence:      p.num(AttrSequence),
		Origin:        p.str(AttrOrigin, false),
	}
	r.OccurredAt = p.time(AttrOccurredAt, true)
	r.PublishedAt = p.time(AttrPublishedAt, false)
	ref, err := parseDataRef(item)
	if err != nil {
		return Record{}, err
	}
	detail := p.str(AttrDetail, ref == nil)
	if p.err != nil {
		return Record{}, p.err
	}
	if !anyPrefix && !t.IsOutboxSortKey(r.SortKey) {
		return Record{}, &RecordError{Attribute: t.SortKey, Problem: fmt.Sprintf("does not start with %q", strings.Join(t.SortKeyPrefixes(), `" or "`))}
	}
	if !t.sortKeyMatches(r.SortKey, r.EventID, anyPrefix) {
		return Record{}, &RecordError{Attribute: AttrEventID, Problem: "does not match the sort key"}
	}
	switch r.Status {
	case StatusPending, StatusPublished, StatusFailed, StatusSkipped:
	default:
		return Record{}, &RecordError{Attribute: AttrStatus, Problem: fmt.Sprintf("is %q", r.Status)}
	}
	if r.DataRef = ref; ref == nil {
		compact, ok := compactObject(json.RawMessage(detail))
		if !ok {
			return Record{}, &RecordError{Attribute: AttrDetail, Problem: "is not a JSON object"}
		}
		r.Detail = compact
	}
	if err := checkOrdering(item, r); err != nil {
		return Record{}, err
	}
	return r, nil
}

// checkOrdering reports an item whose ordering attributes break the
// contract: both or neither, a valid key and a sequence from 1.
func checkOrdering(item map[string]types.AttributeValue, r Record) error {
	_, hasKey := item[AttrOrderingKey]
	_, hasSequence := item[AttrSequence]
	switch {
	case hasKey && !hasSequence:
		return &RecordError{Attribute: AttrSequence, Problem: "is missing while " + AttrOrderingKey + " is set"}
	case hasSequence && !hasKey:
		return &RecordError{Attribute: AttrOrderingKey, Problem: "is missing while " + AttrSequence + " is set"}
	case !hasKey:
		return nil
	case !validOrderingKey(r.OrderingKey):
		return &RecordError{Attribute: AttrOrderingKey, Problem: "is not 1 to 128 letters, digits and punctuation"}
	case r.Sequence < 1:
		return &RecordError{Attribute: AttrSequence, Problem: "is less than 1"}
	}
	return nil
}

// itemParser collects the first problem while reading attributes.
// ReadableRecord returns what can be read of an item, whether or not it
// keeps the record contract: its key, event id, source, detail type, time,
// attempts, last error and pending index keys, and its ordering key and
// sequence (both, or neither). An attribute that is missing or of another
// type is left empty; the status is not read. It is for an item that
// ParseItem refuses: such an item still holds its key in ordered mode, and
// the tools show it.
func (t Table) ReadableRecord(item map[string]types.AttributeValue) Record {
	p := itemParser{item: item}
	r := Record{
		PartitionKey: p.str(t.PartitionKey, false),
		SortKey:      p.str(t.SortKey, false),
		EventID:      p.str(AttrEventID, false),
		Source:       p.str(AttrSource, false),
		DetailType:   p.str(AttrDetailType, false),
		OccurredAt:   p.time(AttrOccurredAt, false),
		Attempts:     int(p.num(AttrAttempts)),
		LastError:    p.str(AttrLastError, false),
		PendingShard: p.str(AttrPendingShard, false),
		PendingSince: p.num(AttrPendingSince),
	}
	if key, seq := p.str(AttrOrderingKey, false), p.num(AttrSequence); key != "" && seq > 0 {
		r.OrderingKey, r.Sequence = key, seq
	}
	return r
}

type itemParser struct {
	item map[string]types.AttributeValue
	err  error
}

func (p *itemParser) fail(name, problem string) {
	if p.err == nil {
		p.err = &RecordError{Attribute: name, Problem: problem}
	}
}

func (p *itemParser) str(name string, required bool) string {
	v, ok := p.item[name]
	if !ok {
		if required {
			p.fail(name, "is missing")
		}
		return ""
	}
	s, ok := v.(*types.AttributeValueMemberS)
	if !ok {
		p.fail(name, "is not a string")
		return ""
	}
	if required && s.Value == "" {
		p.fail(name, "is empty")
	}
	return s.Value
}

func (p *itemParser) num(name string) int64 {
	v, ok := p.item[name]
	if !ok {
		return 0
	}
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		p.fail(name, "is not a number")
		return 0
	}
	i, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		p.fail(name, "is not a whole number")
	}
	return i
}

func (p *itemParser) time(name string, required bool) time.Time {
	s := p.str(name, required)
	if s == "" {
		return time.Time{}
	}
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		p.fail(name, "is not an RFC 3339 time")
	}
	return ts.UTC()
}

// sortKeyMatches reports whether sk is an accepted prefix followed by the
// event id, or with anyPrefix, whether it ends with the event id.
func (t Table) sortKeyMatches(sk, eventID string, anyPrefix bool) bool {
	if anyPrefix {
		return strings.HasSuffix(sk, eventID)
	}
	for _, p := range t.SortKeyPrefixes() {
		if sk == p+eventID {
			return true
		}
	}
	return false
}
