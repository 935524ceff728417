package outbox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Ordered events. An event that names an ordering key (the aggregate it
// belongs to) carries a sequence number: its place among the events of that
// key, from 1, without gaps. The last number given out is kept in the key's
// sequence item, in the same table: partition key the ordering key, sort key
// SequenceSortKey, attribute AttrSequence. A write of ordered events reads
// that number (last), gives its events of the key last+1, last+2, ... in the
// order given, and advances the item in the same transaction, on the
// condition that it still holds last. Of two writers that read the same
// number, one commits and the other's transaction is cancelled: no number is
// used twice or skipped.

// SequenceSortKey is the sort key of every sequence item. It does not begin
// with the default sort key prefix, so the stream filter never passes a
// sequence item to the relay, and it has no status, so no query or scan of
// pending or failed events finds it.
const SequenceSortKey = "OUTBOX-SEQ"

// MaxOrderingKeyLength is the longest ordering key, in characters: the limit
// of a FIFO message group id, which the ordering key becomes on SNS and SQS
// FIFO targets.
const MaxOrderingKeyLength = 128

// ItemReader is the part of the DynamoDB client that ordered writes use to
// read the last sequence of an ordering key. *dynamodb.Client has it.
type ItemReader interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// validOrderingKey reports whether key can be a FIFO message group id: 1 to
// 128 letters, digits and punctuation, no spaces.
func validOrderingKey(key string) bool {
	if key == "" || len(key) > MaxOrderingKeyLength {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < '!' || key[i] > '~' {
			return false
		}
	}
	return true
}

// orderingProblem reports a table whose sequence or cursor items would look
// like outbox items: a current or former sort key prefix begins
// SequenceSortKey or CursorSortKey.
func (t Table) orderingProblem() error {
	for i, p := range t.SortKeyPrefixes() {
		for _, sk := range []string{SequenceSortKey, CursorSortKey} {
			if strings.HasPrefix(sk, p) {
				field := "SortKeyPrefix"
				if i > 0 {
					field = "FormerSortKeyPrefixes"
				}
				return &ConfigError{Field: field, Problem: fmt.Sprintf("%q begins the sort key %q of the ordering items", p, sk),
					Fix: `ordered events need a prefix that does not, such as the default "OUTBOX#"`}
			}
		}
	}
	return nil
}

// OrderingProblem reports a table whose sort key prefixes keep it from
// holding ordered events (see orderingProblem); nil when it can.
func (t Table) OrderingProblem() error { return t.orderingProblem() }

// SequenceKey returns the primary key of the sequence item of orderingKey.
func (t Table) SequenceKey(orderingKey string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		t.PartitionKey: stringValue(orderingKey),
		t.SortKey:      stringValue(SequenceSortKey),
	}
}

// LastSequenceInput returns the strongly consistent read of the sequence
// item of orderingKey; ParseLastSequence decodes its answer.
func (t Table) LastSequenceInput(orderingKey string) *dynamodb.GetItemInput {
	return &dynamodb.GetItemInput{
		TableName:                aws.String(t.Name),
		Key:                      t.SequenceKey(orderingKey),
		ConsistentRead:           aws.Bool(true),
		ProjectionExpression:     aws.String("#seq"),
		ExpressionAttributeNames: map[string]string{"#seq": AttrSequence},
	}
}

// ParseLastSequence returns the last sequence a sequence item holds: 0 for
// no item (no event of the key yet).
func ParseLastSequence(item map[string]types.AttributeValue) (int64, error) {
	if _, ok := item[AttrSequence]; !ok {
		return 0, nil
	}
	p := itemParser{item: item}
	n := p.num(AttrSequence)
	if p.err == nil && n < 0 {
		p.fail(AttrSequence, "is negative")
	}
	return n, p.err
}

// AdvanceSequence returns the transaction action that moves the sequence of
// orderingKey from last to next: it sets AttrSequence to next on the
// condition that it is last (that it does not exist, for last 0). Another
// writer that advanced it first makes the condition fail, and the whole
// transaction is cancelled.
func (t Table) AdvanceSequence(orderingKey string, last, next int64) types.TransactWriteItem {
	names := map[string]string{"#seq": AttrSequence, "#key": AttrOrderingKey}
	values := map[string]types.AttributeValue{
		":next": numberValue(next),
		":key":  stringValue(orderingKey),
	}
	condition := "attribute_not_exists(#seq)"
	if last > 0 {
		condition = "#seq = :last"
		values[":last"] = numberValue(last)
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(t.Name),
		Key:                       t.SequenceKey(orderingKey),
		UpdateExpression:          aws.String("SET #seq = :next, #key = :key"),
		ConditionExpression:       aws.String(condition),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}}
}

func numberValue(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// sequenceActionKey returns the ordering key whose sequence item action
// advances, if it is one of this table's.
func (t Table) sequenceActionKey(action types.TransactWriteItem) (string, bool) {
	u := action.Update
	if u == nil || aws.ToString(u.TableName) != t.Name {
		return "", false
	}
	sk, ok := u.Key[t.SortKey].(*types.AttributeValueMemberS)
	if !ok || sk.Value != SequenceSortKey {
		return "", false
	}
	pk, ok := u.Key[t.PartitionKey].(*types.AttributeValueMemberS)
	if !ok {
		return "", false
	}
	return pk.Value, true
}

// SequenceConflict returns a *SequenceConflictError when err cancelled the
// transaction of actions because another writer advanced the sequence of one
// of its ordering keys first (ConditionalCheckFailed on the sequence item's
// action) or was advancing it at that moment (TransactionConflict); nil
// otherwise. Write calls it; callers that send the actions themselves can.
func (t Table) SequenceConflict(actions []types.TransactWriteItem, err error) error {
	var canceled *types.TransactionCanceledException
	if !errors.As(err, &canceled) {
		return nil
	}
	var keys []string
	for i, reason := range canceled.CancellationReasons {
		if i >= len(actions) {
			break
		}
		key, ok := t.sequenceActionKey(actions[i])
		if code := aws.ToString(reason.Code); ok && (code == "ConditionalCheckFailed" || code == "TransactionConflict") {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	return &SequenceConflictError{OrderingKeys: keys, Err: err}
}

// LastSequences reads the last sequence of each ordering key (0 for a key
// without events), with strongly consistent reads, for ActionsAfter. Write
// calls it for the keys of its events.
func (w *Writer) LastSequences(ctx context.Context, orderingKeys ...string) (map[string]int64, error) {
	reader, ok := w.client.(ItemReader)
	if !ok {
		return nil, errors.New("outbox writer cannot read the sequences of ordered events: pass NewWriter a DynamoDB client with GetItem, such as *dynamodb.Client")
	}
	last := make(map[string]int64, len(orderingKeys))
	for _, key := range orderingKeys {
		if _, done := last[key]; done {
			continue
		}
		out, err := reader.GetItem(ctx, w.table.LastSequenceInput(key))
		if err != nil {
			return nil, fmt.Errorf("reading the sequence of ordering key %q from %s: %w", key, w.table.Name, err)
		}
		n, err := ParseLastSequence(out.Item)
		if err != nil {
			return nil, fmt.Errorf("the sequence item of ordering key %q in %s: %w", key, w.table.Name, err)
		}
		last[key] = n
	}
	return last, nil
}
