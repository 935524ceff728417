package outbox_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/oklog/ulid/v2"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

func TestTableValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		table outbox.Table
		field string
	}{
		{"no name", outbox.Table{}, "Name"},
		{"bad layout", outbox.Table{Name: "t", Layout: "mixed"}, "Layout"},
		{"same keys", outbox.Table{Name: "t", PartitionKey: "id", SortKey: "id"}, "SortKey"},
		{"too many shards", outbox.Table{Name: "t", PendingShards: 257}, "PendingShards"},
		{"negative shards", outbox.Table{Name: "t", PendingShards: -1}, "PendingShards"},
		{"blank prefix", outbox.Table{Name: "t", SortKeyPrefix: " "}, "SortKeyPrefix"},
		{"reserved ttl", outbox.Table{Name: "t", TTLAttribute: "status"}, "TTLAttribute"},
		{"reserved key", outbox.Table{Name: "t", PartitionKey: "eventId"}, "PartitionKey"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.table.WithDefaults().Validate()
			var ce *outbox.ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field || ce.Fix == "" {
				t.Fatalf("err = %v, want a ConfigError on %s with a fix", err, tt.field)
			}
		})
	}
	if err := (outbox.Table{Name: "t"}).WithDefaults().Validate(); err != nil {
		t.Errorf("defaults must be valid: %v", err)
	}
}

func TestShardForIsStableAndInRange(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "t"}.WithDefaults()
	// FNV-1a of "01JDQ8Z7K5V6W3X2Y1Z0ABCDEF", computed independently, is 0xdb1e0f55.
	if got, want := table.ShardFor("01JDQ8Z7K5V6W3X2Y1Z0ABCDEF"), int(uint32(0xdb1e0f55)%16); got != want {
		t.Errorf("ShardFor = %d, want %d", got, want)
	}
	seen := map[int]bool{}
	for i := range 2000 {
		s := table.ShardFor(strings.Repeat("A", i%30) + string(rune('0'+i%10)) + string(rune('A'+i%26)))
		if s < 0 || s >= 16 {
			t.Fatalf("shard %d out of range", s)
		}
		seen[s] = true
	}
	if len(seen) != 16 {
		t.Errorf("2000 ids used only %d of 16 shards", len(seen))
	}
}

func TestParseItemRejectsContractViolations(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "t"}.WithDefaults()
	w := newWriter(t, nil, table)
	action, _, err := w.Put(orderPlaced())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		edit      func(map[string]types.AttributeValue)
		attribute string
	}{
		{"missing detail", func(m map[string]types.AttributeValue) { delete(m, "detail") }, "detail"},
		{"detail not a string", func(m map[string]types.AttributeValue) { m["detail"] = &types.AttributeValueMemberN{Value: "1"} }, "detail"},
		{"detail not an object", func(m map[string]types.AttributeValue) { m["detail"] = &types.AttributeValueMemberS{Value: "[]"} }, "detail"},
		{"empty source", func(m map[string]types.AttributeValue) { m["source"] = &types.AttributeValueMemberS{} }, "source"},
		{"bad time", func(m map[string]types.AttributeValue) {
			m["occurredAt"] = &types.AttributeValueMemberS{Value: "yesterday"}
		}, "occurredAt"},
		{"bad status", func(m map[string]types.AttributeValue) { m["status"] = &types.AttributeValueMemberS{Value: "SENT"} }, "status"},
		{"bad since", func(m map[string]types.AttributeValue) {
			m["outboxPendingSince"] = &types.AttributeValueMemberN{Value: "1.5"}
		}, "outboxPendingSince"},
		{"foreign sort key", func(m map[string]types.AttributeValue) { m["SK"] = &types.AttributeValueMemberS{Value: "ORDER"} }, "SK"},
		{"id mismatch", func(m map[string]types.AttributeValue) {
			m["eventId"] = &types.AttributeValueMemberS{Value: "01JDQ8Z7K5V6W3X2Y1Z0ABCDEF"}
		}, "eventId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			item := map[string]types.AttributeValue{}
			for k, v := range action.Put.Item {
				item[k] = v
			}
			tt.edit(item)
			_, err := table.ParseItem(item)
			var re *outbox.RecordError
			if !errors.As(err, &re) || re.Attribute != tt.attribute {
				t.Fatalf("err = %v, want a RecordError on %s", err, tt.attribute)
			}
		})
	}
}

func TestPublishedDetailAndEnvelope(t *testing.T) {
	t.Parallel()
	w := newWriter(t, nil, outbox.Table{Name: "t"})
	_, rec, err := w.Put(orderPlaced())
	if err != nil {
		t.Fatal(err)
	}
	var detail outbox.PublishedDetail
	if err := json.Unmarshal(rec.DetailJSON(), &detail); err != nil {
		t.Fatal(err)
	}
	if detail.Metadata.EventID != rec.EventID || detail.Metadata.OccurredAt != "2026-11-30T10:15:00.123Z" || string(detail.Data) != `{"orderId":"1234","total":42.5}` {
		t.Errorf("detail = %s", rec.DetailJSON())
	}
	var env map[string]any
	if err := json.Unmarshal(rec.EnvelopeJSON(), &env); err != nil {
		t.Fatal(err)
	}
	if env["id"] != rec.EventID || env["detail-type"] != "OrderPlaced" || env["source"] != "com.example.orders" || env["time"] != "2026-11-30T10:15:00Z" {
		t.Errorf("envelope = %s", rec.EnvelopeJSON())
	}
	want := 14 + len("com.example.orders") + len("OrderPlaced") + len(rec.DetailJSON())
	if got := rec.EventBridgeEntrySize(); got != want {
		t.Errorf("EventBridgeEntrySize = %d, want %d", got, want)
	}
}

func TestEventJustUnderTheLimitIsAccepted(t *testing.T) {
	t.Parallel()
	w := newWriter(t, nil, outbox.Table{Name: "t"})
	e := orderPlaced()
	e.Detail = json.RawMessage(`{"blob":""}`)
	_, rec, err := w.Put(e)
	if err != nil {
		t.Fatal(err)
	}
	room := outbox.MaxEntryBytes - rec.PublishedSize()
	e.Detail = json.RawMessage(`{"blob":"` + strings.Repeat("x", room) + `"}`)
	if _, _, err := w.Put(e); err != nil {
		t.Errorf("an event of exactly %d bytes must pass: %v", outbox.MaxEntryBytes, err)
	}
	e.Detail = json.RawMessage(`{"blob":"` + strings.Repeat("x", room+1) + `"}`)
	if _, _, err := w.Put(e); !errors.Is(err, outbox.ErrEventTooLarge) {
		t.Errorf("one byte more: err = %v", err)
	}
}

func TestOperations(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "orders", TTLAttribute: "ttl"}.WithDefaults()
	rec := outbox.Record{PartitionKey: "P", SortKey: "OUTBOX#X"}

	mark := table.MarkPublished(rec, fixedNow, 30*24*time.Hour)
	if got := *mark.UpdateExpression; got != "SET #status = :published, #publishedAt = :now, #ttl = :expires REMOVE #shard, #since" {
		t.Errorf("mark update = %q", got)
	}
	if *mark.ConditionExpression != "#status = :pending" || mark.ExpressionAttributeNames["#ttl"] != "ttl" {
		t.Errorf("mark = %+v", mark)
	}
	if n := mark.ExpressionAttributeValues[":expires"].(*types.AttributeValueMemberN).Value; n != "1798625700" {
		t.Errorf("expiry = %s, want 30 days after %v", n, fixedNow)
	}
	if noTTL := table.MarkPublished(rec, fixedNow, 0); strings.Contains(*noTTL.UpdateExpression, "#ttl") {
		t.Errorf("ttl 0 must not set a TTL: %q", *noTTL.UpdateExpression)
	}

	failed := table.MarkFailed(rec, "too large", fixedNow)
	if !strings.Contains(*failed.UpdateExpression, "REMOVE #shard, #since") || failed.ExpressionAttributeValues[":reason"].(*types.AttributeValueMemberS).Value != "too large" {
		t.Errorf("mark failed = %q", *failed.UpdateExpression)
	}
	// Any item but a published, failed or skipped one, malformed ones included.
	if got := *failed.ConditionExpression; got != "attribute_exists(#pk) AND NOT (#status IN (:published, :failed, :skipped))" || failed.ExpressionAttributeNames["#pk"] != "PK" {
		t.Errorf("mark failed condition = %q %v", got, failed.ExpressionAttributeNames)
	}

	q := table.PendingQuery(3, fixedNow)
	if *q.IndexName != "outbox-pending" || q.ExpressionAttributeValues[":shard"].(*types.AttributeValueMemberS).Value != "PENDING#3" ||
		q.ExpressionAttributeValues[":cutoff"].(*types.AttributeValueMemberN).Value != "1796033700123" {
		t.Errorf("query = %+v", q)
	}

	if got, want := table.StreamFilterPattern(), `{"dynamodb":{"Keys":{"SK":{"S":[{"prefix":"OUTBOX#"}]}}},"eventName":["INSERT"]}`; got != want {
		t.Errorf("filter = %s\nwant     %s", got, want)
	}
	index, attrs := table.PendingIndex()
	if *index.IndexName != "outbox-pending" || *index.KeySchema[0].AttributeName != outbox.AttrPendingShard || len(attrs) != 2 {
		t.Errorf("index = %+v", index)
	}
}

func TestCreateTableInput(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "orders-outbox"}.WithDefaults()
	in := table.CreateTableInput()
	if *in.TableName != "orders-outbox" || *in.KeySchema[0].AttributeName != "PK" || in.KeySchema[0].KeyType != types.KeyTypeHash ||
		*in.KeySchema[1].AttributeName != "SK" || in.KeySchema[1].KeyType != types.KeyTypeRange || in.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("keys and billing = %+v", in)
	}
	if len(in.GlobalSecondaryIndexes) != 1 || *in.GlobalSecondaryIndexes[0].IndexName != "outbox-pending" || len(in.AttributeDefinitions) != 4 {
		t.Errorf("pending index = %+v, attributes %+v", in.GlobalSecondaryIndexes, in.AttributeDefinitions)
	}
	table.NoPendingIndex = true
	if in := table.CreateTableInput(); len(in.GlobalSecondaryIndexes) != 0 || len(in.AttributeDefinitions) != 2 {
		t.Errorf("without pending index: %+v, attributes %+v", in.GlobalSecondaryIndexes, in.AttributeDefinitions)
	}
}

// The example item of the package documentation, README and the record
// contract guide must be one the Writer could have written.
func TestDocumentedExampleIsConsistent(t *testing.T) {
	t.Parallel()
	const id = "01M8NZ6R8V7V3B9Q2M4K8D1X6R"
	parsed, err := ulid.ParseStrict(id)
	if err != nil {
		t.Fatal(err)
	}
	occurred := time.Date(2026, 11, 30, 10, 15, 0, 123_000_000, time.UTC)
	if got := ulid.Time(parsed.Time()); !got.Equal(occurred) {
		t.Errorf("the example id's time is %v, want its occurredAt %v", got, occurred)
	}
	if occurred.UnixMilli() != 1796033700123 {
		t.Errorf("outboxPendingSince of the example is %d", occurred.UnixMilli())
	}
	if got := (outbox.Table{Name: "t"}).WithDefaults().ShardFor(id); got != 10 {
		t.Errorf("the example's shard is %d, documented as PENDING#10", got)
	}
}

// TestReadableRecordOfABrokenItem: what can be read of an item that breaks
// the contract is read, the rest left empty, and the ordering key and
// sequence only together.
func TestReadableRecordOfABrokenItem(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "orders"}.WithDefaults()
	item := map[string]types.AttributeValue{
		"PK":                    &types.AttributeValueMemberS{Value: "ORDER#1"},
		"SK":                    &types.AttributeValueMemberS{Value: "OUTBOX#01M8NZ6R8V7V3B9Q2M4K8D1X6R"},
		outbox.AttrEventID:      &types.AttributeValueMemberS{Value: "01M8NZ6R8V7V3B9Q2M4K8D1X6R"},
		outbox.AttrSource:       &types.AttributeValueMemberN{Value: "7"},
		outbox.AttrDetailType:   &types.AttributeValueMemberS{Value: "OrderPlaced"},
		outbox.AttrDetail:       &types.AttributeValueMemberS{Value: `["not","an","object"]`},
		outbox.AttrOccurredAt:   &types.AttributeValueMemberS{Value: "2026-11-30T10:15:00.123Z"},
		outbox.AttrAttempts:     &types.AttributeValueMemberN{Value: "2"},
		outbox.AttrOrderingKey:  &types.AttributeValueMemberS{Value: "acct-1"},
		outbox.AttrSequence:     &types.AttributeValueMemberN{Value: "4"},
		outbox.AttrPendingShard: &types.AttributeValueMemberS{Value: "PENDING#3"},
		outbox.AttrPendingSince: &types.AttributeValueMemberN{Value: "1796033700123"},
		outbox.AttrStatus:       &types.AttributeValueMemberS{Value: "SENT"},
	}
	if _, err := table.ParseItem(item); err == nil {
		t.Fatal("ParseItem accepted the broken item")
	}
	r := table.ReadableRecord(item)
	want := outbox.Record{PartitionKey: "ORDER#1", SortKey: "OUTBOX#01M8NZ6R8V7V3B9Q2M4K8D1X6R", EventID: "01M8NZ6R8V7V3B9Q2M4K8D1X6R",
		DetailType: "OrderPlaced", OccurredAt: time.Date(2026, 11, 30, 10, 15, 0, 123_000_000, time.UTC), Attempts: 2,
		OrderingKey: "acct-1", Sequence: 4, PendingShard: "PENDING#3", PendingSince: 1796033700123}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("ReadableRecord =\n%+v\nwant\n%+v", r, want)
	}
	delete(item, outbox.AttrSequence)
	if r := table.ReadableRecord(item); r.OrderingKey != "" || r.Sequence != 0 {
		t.Errorf("an ordering key without a sequence was read: %q %d", r.OrderingKey, r.Sequence)
	}
}
