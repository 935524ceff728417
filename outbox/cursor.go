package outbox

import (
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Publishing ordered events. A relay in ordered mode publishes event n of an
// ordering key only once n-1 was accepted by the target. What it has
// published is kept in the key's cursor item, in the same table: partition
// key the ordering key, sort key CursorSortKey, AttrPublishedSequence the
// last sequence published. The relay advances the cursor after the target
// accepted the events (AdvanceCursor), and only then marks or deletes their
// items, so that a crash in between republishes an event (consumers and the
// FIFO deduplication drop the copy) but never skips one: an item whose
// sequence is not above the cursor is settled without being published again.

// CursorSortKey is the sort key of every cursor item. Like SequenceSortKey
// it does not begin with the default sort key prefix and carries no status,
// so neither the stream filter nor a query of pending or failed events sees
// it.
const CursorSortKey = "OUTBOX-CURSOR"

// Cursor is what a key's cursor item says.
type Cursor struct {
	// Exists is false when the key's cursor has no published sequence: no
	// event of it was published in ordered mode (its cursor item, if any,
	// only registers waiting events).
	Exists bool
	// Published is the last sequence published; 0 for none.
	Published int64
	// Blocked is the sequence of a FAILED event the later events wait
	// behind, or 0.
	Blocked int64
	// Started is the sequence at which the reconciler started the cursor
	// for a key whose earlier events were published outside ordered mode
	// (StartCursor), or 0: an event below it that is still pending (a
	// FAILED one requeued) never went through the cursor, and is published
	// late rather than taken for published.
	Started int64
	// Waiting are the events that a relay found after a gap and left to
	// whoever publishes the event before them (RegisterWaiting), by
	// sequence: the primary key of each, partition key then sort key.
	Waiting map[int64][2]string
}

// WaitingAttributePrefix starts the name of each attribute of a cursor item
// that registers a waiting event: the prefix, then the event's sequence.
// Its value is a list of the event's partition and sort key.
const WaitingAttributePrefix = "outboxWaiting#"

// MaxWaitingRegistered bounds the waiting events a cursor item registers,
// so that it stays small: a cursor item is read and written for every
// batch of its key.
const MaxWaitingRegistered = 64

// Next is the sequence of the key's next event to publish.
func (c Cursor) Next() int64 { return c.Published + 1 }

// IsBlocked reports whether the key's next event is FAILED.
func (c Cursor) IsBlocked() bool { return c.Blocked > 0 && c.Blocked == c.Next() }

// CursorKey returns the primary key of the cursor item of orderingKey.
func (t Table) CursorKey(orderingKey string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		t.PartitionKey: stringValue(orderingKey),
		t.SortKey:      stringValue(CursorSortKey),
	}
}

// CursorRecord is a Record that holds only the key of the cursor item of
// orderingKey, for the requests that take records (CurrentItems).
func (t Table) CursorRecord(orderingKey string) Record {
	return Record{PartitionKey: orderingKey, SortKey: CursorSortKey}
}

// ParseCursor decodes a cursor item; nil is a key without one.
func ParseCursor(item map[string]types.AttributeValue) (Cursor, error) {
	if item == nil {
		return Cursor{}, nil
	}
	p := itemParser{item: item}
	_, started := item[AttrPublishedSequence]
	c := Cursor{Exists: started, Published: p.num(AttrPublishedSequence), Blocked: p.num(AttrBlockedSequence), Started: p.num(AttrStartedSequence)}
	if p.err == nil && (c.Published < 0 || c.Blocked < 0) {
		p.fail(AttrPublishedSequence, "is negative")
	}
	for name, v := range item {
		seq, ok := strings.CutPrefix(name, WaitingAttributePrefix)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(seq, 10, 64)
		key, isList := v.(*types.AttributeValueMemberL)
		if err != nil || !isList || len(key.Value) != 2 {
			p.fail(name, "is not a sequence with the list of a partition and a sort key")
			continue
		}
		pk, _ := key.Value[0].(*types.AttributeValueMemberS)
		sk, _ := key.Value[1].(*types.AttributeValueMemberS)
		if pk == nil || sk == nil {
			p.fail(name, "is not a list of two strings")
			continue
		}
		if c.Waiting == nil {
			c.Waiting = map[int64][2]string{}
		}
		c.Waiting[n] = [2]string{pk.Value, sk.Value}
	}
	return c, p.err
}

// waitingName is the attribute of a cursor item that registers the waiting
// event of sequence n.
func waitingName(n int64) string { return WaitingAttributePrefix + strconv.FormatInt(n, 10) }

// RegisterWaiting returns the update that registers, on the cursor of
// orderingKey, events that wait after a gap (all of that key, lowest first),
// so that the relay that publishes the event before them publishes them
// next (Cursor.Waiting). It applies only while the gap is still there: the
// cursor is below the lowest event's predecessor. A failed condition means
// that the gap closed meanwhile: the events may be published at once.
func (t Table) RegisterWaiting(orderingKey string, waiting []Record) *dynamodb.UpdateItemInput {
	names := map[string]string{"#pub": AttrPublishedSequence, "#key": AttrOrderingKey}
	values := map[string]types.AttributeValue{":key": stringValue(orderingKey), ":below": numberValue(waiting[0].Sequence - 1)}
	set := "SET #key = :key"
	for i, r := range waiting {
		n, v := "#w"+strconv.Itoa(i), ":w"+strconv.Itoa(i)
		names[n] = waitingName(r.Sequence)
		values[v] = &types.AttributeValueMemberL{Value: []types.AttributeValue{stringValue(r.PartitionKey), stringValue(r.SortKey)}}
		set += ", " + n + " = " + v
	}
	return &dynamodb.UpdateItemInput{
		TableName:                           aws.String(t.Name),
		Key:                                 t.CursorKey(orderingKey),
		UpdateExpression:                    aws.String(set),
		ConditionExpression:                 aws.String("attribute_not_exists(#pub) OR #pub < :below"),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// AdvanceCursor returns the update that records that the events of
// orderingKey up to to were published, by a relay that found the cursor at
// from and had the events from+1 to to accepted by the target, in order.
// It applies while the cursor is from or between from and to (another relay
// published some of them meanwhile), so the cursor never moves back; a
// failed condition means it is already at to or beyond. The update clears
// the blocked mark: the event that held the key is behind it. It returns
// the cursor as it was on a failed condition.
//
// The waiting events registered on the cursor that the move covers (done,
// as the relay read them) are removed, and the update returns the cursor as
// updated, with the events registered after the new position, for the relay
// to publish next; on a failed condition, the cursor as it was.
func (t Table) AdvanceCursor(orderingKey string, from, to int64, done []int64) *dynamodb.UpdateItemInput {
	values := map[string]types.AttributeValue{":to": numberValue(to), ":key": stringValue(orderingKey)}
	names := map[string]string{"#pub": AttrPublishedSequence, "#key": AttrOrderingKey, "#blocked": AttrBlockedSequence}
	condition := "attribute_not_exists(#pub) OR #pub < :to"
	if from > 0 {
		condition = "#pub >= :from AND #pub < :to"
		values[":from"] = numberValue(from)
	}
	remove := "#blocked"
	for i, n := range done {
		name := "#d" + strconv.Itoa(i)
		names[name] = waitingName(n)
		remove += ", " + name
	}
	return &dynamodb.UpdateItemInput{
		TableName:                           aws.String(t.Name),
		Key:                                 t.CursorKey(orderingKey),
		UpdateExpression:                    aws.String("SET #pub = :to, #key = :key REMOVE " + remove),
		ConditionExpression:                 aws.String(condition),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// BlockCursor returns the update that marks orderingKey as held by its
// FAILED event of the given sequence, so that relays tell a key waiting
// behind a poison event from one waiting for an event still in flight.
// It applies only while that event is the key's next (the cursor is below
// it), so a late mark never holds a key that moved on.
func (t Table) BlockCursor(orderingKey string, sequence int64) *dynamodb.UpdateItemInput {
	values := map[string]types.AttributeValue{":seq": numberValue(sequence), ":key": stringValue(orderingKey), ":last": numberValue(sequence - 1)}
	return &dynamodb.UpdateItemInput{
		TableName:                 aws.String(t.Name),
		Key:                       t.CursorKey(orderingKey),
		UpdateExpression:          aws.String("SET #blocked = :seq, #key = :key"),
		ConditionExpression:       aws.String(cursorAt(sequence - 1)),
		ExpressionAttributeNames:  map[string]string{"#pub": AttrPublishedSequence, "#key": AttrOrderingKey, "#blocked": AttrBlockedSequence},
		ExpressionAttributeValues: values,
	}
}

// cursorAt is the condition that the cursor (#pub) is at :last, the value
// last: for 0, also a key without a cursor item.
func cursorAt(last int64) string {
	if last == 0 {
		return "attribute_not_exists(#pub) OR #pub = :last"
	}
	return "#pub = :last"
}

// StartCursor returns the update that moves the cursor of orderingKey,
// found as found, to published, for a key whose lowest pending event is
// published+1 while the cursor is below it and no FAILED event holds the
// key: its events were written before ordered mode was on (no cursor), or
// published while it was off (the cursor stayed behind). It applies only
// while the cursor is as found and not blocked at its next event.
func (t Table) StartCursor(orderingKey string, found Cursor, published int64) *dynamodb.UpdateItemInput {
	names := map[string]string{"#pub": AttrPublishedSequence, "#key": AttrOrderingKey, "#started": AttrStartedSequence}
	values := map[string]types.AttributeValue{":pub": numberValue(published), ":key": stringValue(orderingKey), ":started": numberValue(published + 1)}
	condition := "attribute_not_exists(#pub)"
	if found.Exists {
		condition = "#pub = :found AND (attribute_not_exists(#blocked) OR #blocked <> :next)"
		names["#blocked"] = AttrBlockedSequence
		values[":found"], values[":next"] = numberValue(found.Published), numberValue(found.Next())
	}
	return &dynamodb.UpdateItemInput{
		TableName:                 aws.String(t.Name),
		Key:                       t.CursorKey(orderingKey),
		UpdateExpression:          aws.String("SET #pub = :pub, #key = :key, #started = :started"),
		ConditionExpression:       aws.String(condition),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}
}

// SkipActions returns the transaction by which an operator skips the
// FAILED ordered event r, so that the later events of its key are
// published: the item becomes SKIPPED (kept, without expiry, with when it
// was skipped), and the key's cursor moves past it. It applies only while r
// is FAILED and is the key's next event (the cursor is r.Sequence-1), so
// that no other event is skipped with it.
func (t Table) SkipActions(r Record, now time.Time) []types.TransactWriteItem {
	cursorValues := map[string]types.AttributeValue{
		":seq": numberValue(r.Sequence), ":key": stringValue(r.OrderingKey), ":last": numberValue(r.Sequence - 1),
	}
	return []types.TransactWriteItem{
		{Update: &types.Update{
			TableName:                aws.String(t.Name),
			Key:                      t.Key(r),
			UpdateExpression:         aws.String("SET #status = :skipped, #skippedAt = :now"),
			ConditionExpression:      aws.String("#status = :failed AND #key = :key AND #seq = :seq"),
			ExpressionAttributeNames: map[string]string{"#status": AttrStatus, "#skippedAt": AttrSkippedAt, "#key": AttrOrderingKey, "#seq": AttrSequence},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":skipped": stringValue(string(StatusSkipped)), ":failed": stringValue(string(StatusFailed)),
				":now": stringValue(now.UTC().Format(TimeFormat)), ":key": stringValue(r.OrderingKey), ":seq": numberValue(r.Sequence),
			},
		}},
		{Update: &types.Update{
			TableName:                 aws.String(t.Name),
			Key:                       t.CursorKey(r.OrderingKey),
			UpdateExpression:          aws.String("SET #pub = :seq, #key = :key REMOVE #blocked"),
			ConditionExpression:       aws.String(cursorAt(r.Sequence - 1)),
			ExpressionAttributeNames:  map[string]string{"#pub": AttrPublishedSequence, "#key": AttrOrderingKey, "#blocked": AttrBlockedSequence},
			ExpressionAttributeValues: cursorValues,
		}},
	}
}
