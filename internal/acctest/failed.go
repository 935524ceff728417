package acctest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/oklog/ulid/v2"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// FailedRecords returns n events of source as the relay leaves poison
// events: FAILED with reason. With an ordering key, they are its events 1
// to n.
func FailedRecords(table outbox.Table, source, reason, orderingKey string, n int) []outbox.Record {
	table = table.WithDefaults()
	now := time.Now().UTC().Truncate(time.Millisecond)
	recs := make([]outbox.Record, n)
	for i := range recs {
		occurred := now.Add(-time.Duration(n-i) * time.Millisecond)
		id := ulid.MustNew(ulid.Timestamp(occurred), ulid.DefaultEntropy()).String()
		recs[i] = outbox.Record{
			PartitionKey: table.SortKeyFor(id), SortKey: table.SortKeyFor(id), EventID: id,
			Source: source, DetailType: "OrderPlaced", Detail: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)),
			OccurredAt: occurred, Status: outbox.StatusFailed, LastError: reason,
		}
		if orderingKey != "" {
			recs[i].OrderingKey, recs[i].Sequence = orderingKey, int64(i+1)
		}
	}
	return recs
}

// PutFailed stores records as FAILED items, out of the pending index (and
// the sequence item of their ordering key, if any, at the last of them).
func (e *Env) PutFailed(table outbox.Table, records []outbox.Record) error {
	table = table.WithDefaults()
	c := dynamodb.NewFromConfig(e.Cfg)
	failedAt := time.Now().UTC().Format(outbox.TimeFormat)
	for _, r := range records {
		item := table.Item(r)
		item[outbox.AttrLastError] = &ddbtypes.AttributeValueMemberS{Value: r.LastError}
		item[outbox.AttrFailedAt] = &ddbtypes.AttributeValueMemberS{Value: failedAt}
		item[outbox.AttrAttempts] = &ddbtypes.AttributeValueMemberN{Value: "1"}
		if _, err := c.PutItem(e.Ctx, &dynamodb.PutItemInput{TableName: aws.String(table.Name), Item: item}); err != nil {
			return fmt.Errorf("storing FAILED event %s: %w", r.EventID, err)
		}
		if r.Sequence == 0 {
			continue
		}
		seq := table.SequenceKey(r.OrderingKey)
		seq[outbox.AttrSequence] = &ddbtypes.AttributeValueMemberN{Value: strconv.FormatInt(r.Sequence, 10)}
		if _, err := c.PutItem(e.Ctx, &dynamodb.PutItemInput{TableName: aws.String(table.Name), Item: seq}); err != nil {
			return fmt.Errorf("storing the sequence of %s: %w", r.OrderingKey, err)
		}
	}
	return nil
}

// HasStatus checks an item's status (the condition of CheckItems and
// WaitItems).
func HasStatus(status outbox.Status) func(map[string]ddbtypes.AttributeValue) error {
	return func(item map[string]ddbtypes.AttributeValue) error {
		if got := AttrS(item, outbox.AttrStatus); got != string(status) {
			return fmt.Errorf("status %q, want %s", got, status)
		}
		return nil
	}
}
