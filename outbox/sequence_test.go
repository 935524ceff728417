package outbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// sequenceClient is a recordingClient that also answers GetItem with the
// last sequence of each ordering key in last.
type sequenceClient struct {
	recordingClient
	last  map[string]int64
	reads []string
}

func (c *sequenceClient) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	key := in.Key["PK"].(*types.AttributeValueMemberS).Value
	c.reads = append(c.reads, key)
	if !aws.ToBool(in.ConsistentRead) || in.Key["SK"].(*types.AttributeValueMemberS).Value != outbox.SequenceSortKey {
		return nil, errors.New("not a consistent read of a sequence item")
	}
	n, ok := c.last[key]
	if !ok {
		return &dynamodb.GetItemOutput{}, nil
	}
	return &dynamodb.GetItemOutput{Item: map[string]types.AttributeValue{
		outbox.AttrSequence: &types.AttributeValueMemberN{Value: itoa(n)},
	}}, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func newOrderedWriter(t *testing.T, client outbox.TransactWriter, table outbox.Table, opts ...outbox.WriterOption) *outbox.Writer {
	t.Helper()
	w, err := outbox.NewWriter(client, table, opts...)
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	return w
}

func str(av types.AttributeValue) string {
	if s, ok := av.(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return "<not S>"
}

func num(av types.AttributeValue) string {
	if n, ok := av.(*types.AttributeValueMemberN); ok {
		return n.Value
	}
	return "<not N>"
}

// TestOrderedEventsGetConsecutiveNumbers: with WithOrdering, three events of
// one aggregate get the three numbers after the last one, in order, under
// the partition key as ordering key, and one action advances the sequence
// item on the condition that it holds the number read.
func TestOrderedEventsGetConsecutiveNumbers(t *testing.T) {
	t.Parallel()
	client := &sequenceClient{last: map[string]int64{"ORDER#1234": 4}}
	w := newOrderedWriter(t, client, outbox.Table{Name: "orders", Layout: outbox.LayoutShared}, outbox.WithOrdering())
	records, err := w.Write(context.Background(), nil, orderPlaced(), orderPlaced(), orderPlaced())
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range records {
		if r.OrderingKey != "ORDER#1234" || r.Sequence != int64(5+i) {
			t.Errorf("record %d: ordering key %q sequence %d, want ORDER#1234 %d", i, r.OrderingKey, r.Sequence, 5+i)
		}
	}
	if len(client.reads) != 1 || client.reads[0] != "ORDER#1234" {
		t.Errorf("sequence reads %v, want one of ORDER#1234", client.reads)
	}
	actions := client.calls[0].TransactItems
	if len(actions) != 4 {
		t.Fatalf("%d actions, want 3 puts and 1 sequence update", len(actions))
	}
	for i := range 3 {
		item := actions[i].Put.Item
		if str(item[outbox.AttrOrderingKey]) != "ORDER#1234" || num(item[outbox.AttrSequence]) != itoa(int64(5+i)) {
			t.Errorf("put %d: %v %v", i, item[outbox.AttrOrderingKey], item[outbox.AttrSequence])
		}
	}
	u := actions[3].Update
	if u == nil || str(u.Key["PK"]) != "ORDER#1234" || str(u.Key["SK"]) != outbox.SequenceSortKey {
		t.Fatalf("last action %+v is not the update of the sequence item", actions[3])
	}
	if *u.ConditionExpression != "#seq = :last" || num(u.ExpressionAttributeValues[":last"]) != "4" ||
		num(u.ExpressionAttributeValues[":next"]) != "7" || u.ExpressionAttributeNames["#seq"] != outbox.AttrSequence {
		t.Errorf("sequence update %s / %s with %v", *u.UpdateExpression, *u.ConditionExpression, u.ExpressionAttributeValues)
	}
}

// TestNamedOrderingKey: an event that names its ordering key is ordered
// without WithOrdering; the key's first event gets 1, on the condition that
// the sequence item has no number yet; the item sits under the ordering key.
func TestNamedOrderingKey(t *testing.T) {
	t.Parallel()
	client := &sequenceClient{}
	w := newOrderedWriter(t, client, outbox.Table{Name: "orders-outbox"})
	e := orderPlaced()
	e.PartitionKey, e.OrderingKey = "", "CUSTOMER#42"
	records, err := w.Write(context.Background(), nil, e)
	if err != nil {
		t.Fatal(err)
	}
	if records[0].Sequence != 1 || records[0].OrderingKey != "CUSTOMER#42" || records[0].PartitionKey != records[0].SortKey {
		t.Errorf("record %+v", records[0])
	}
	u := client.calls[0].TransactItems[1].Update
	if str(u.Key["PK"]) != "CUSTOMER#42" || *u.ConditionExpression != "attribute_not_exists(#seq)" || u.ExpressionAttributeValues[":last"] != nil {
		t.Errorf("first sequence update %v: %s %v", u.Key, *u.ConditionExpression, u.ExpressionAttributeValues)
	}
	if str(u.ExpressionAttributeValues[":key"]) != "CUSTOMER#42" || num(u.ExpressionAttributeValues[":next"]) != "1" {
		t.Errorf("sequence update values %v", u.ExpressionAttributeValues)
	}
}

// TestMixedOrderedAndUnorderedEvents: each key counts its own events, an
// unordered event carries no sequence, and each key's sequence item is
// updated once, however many events it has.
func TestMixedOrderedAndUnorderedEvents(t *testing.T) {
	t.Parallel()
	client := &sequenceClient{last: map[string]int64{"B": 9}}
	w := newOrderedWriter(t, client, outbox.Table{Name: "orders", Layout: outbox.LayoutShared})
	a, b, plain := orderPlaced(), orderPlaced(), orderPlaced()
	a.OrderingKey, b.OrderingKey = "A", "B"
	caller := types.TransactWriteItem{Put: &types.Put{TableName: aws.String("orders")}}
	records, err := w.Write(context.Background(), []types.TransactWriteItem{caller}, a, plain, b, a)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		key string
		seq int64
	}{{"A", 1}, {"", 0}, {"B", 10}, {"A", 2}}
	for i, r := range records {
		if r.OrderingKey != want[i].key || r.Sequence != want[i].seq {
			t.Errorf("record %d: %q %d, want %q %d", i, r.OrderingKey, r.Sequence, want[i].key, want[i].seq)
		}
	}
	actions := client.calls[0].TransactItems
	if len(actions) != 7 || actions[0].Put != caller.Put {
		t.Fatalf("want the caller's item, 4 puts and 2 sequence updates, got %d actions", len(actions))
	}
	for _, name := range []string{outbox.AttrOrderingKey, outbox.AttrSequence} {
		if _, ok := actions[2].Put.Item[name]; ok {
			t.Errorf("the unordered event has %s", name)
		}
	}
	if k := str(actions[5].Update.Key["PK"]); k != "A" || num(actions[5].Update.ExpressionAttributeValues[":next"]) != "2" {
		t.Errorf("first sequence update: %s to %v", k, actions[5].Update.ExpressionAttributeValues[":next"])
	}
	if k := str(actions[6].Update.Key["PK"]); k != "B" || num(actions[6].Update.ExpressionAttributeValues[":next"]) != "10" {
		t.Errorf("second sequence update: %s to %v", k, actions[6].Update.ExpressionAttributeValues[":next"])
	}
	if len(client.reads) != 2 {
		t.Errorf("reads %v, want one per key", client.reads)
	}
}

func TestOrderedEventValidation(t *testing.T) {
	t.Parallel()
	shared := outbox.Table{Name: "orders", Layout: outbox.LayoutShared}
	dedicated := outbox.Table{Name: "orders-outbox"}
	tests := []struct {
		name    string
		table   outbox.Table
		ordered bool
		edit    func(*outbox.Event)
		err     error
		fix     string
	}{
		{"key with a space", shared, false, func(e *outbox.Event) { e.OrderingKey = "ORDER 1" }, outbox.ErrInvalidOrderingKey, "without spaces"},
		{"key too long", shared, false, func(e *outbox.Event) { e.OrderingKey = strings.Repeat("k", 129) }, outbox.ErrInvalidOrderingKey, "128"},
		{"key not ASCII", shared, false, func(e *outbox.Event) { e.OrderingKey = "ORDER#é" }, outbox.ErrInvalidOrderingKey, "punctuation"},
		{"partition key unfit", shared, true, func(e *outbox.Event) { e.PartitionKey = "ORDER 1" }, outbox.ErrInvalidOrderingKey, "set OrderingKey"},
		{"dedicated without key", dedicated, true, func(e *outbox.Event) { e.PartitionKey = "" }, outbox.ErrMissingOrderingKey, "set OrderingKey (or PartitionKey)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			client := &sequenceClient{}
			var opts []outbox.WriterOption
			if tt.ordered {
				opts = append(opts, outbox.WithOrdering())
			}
			w := newOrderedWriter(t, client, tt.table, opts...)
			bad := orderPlaced()
			tt.edit(&bad)
			_, err := w.Write(context.Background(), nil, orderPlaced(), bad)
			var ee *outbox.EventError
			if !errors.Is(err, tt.err) || !errors.As(err, &ee) || ee.Field != "OrderingKey" || ee.Index != 1 || !strings.Contains(ee.Fix, tt.fix) {
				t.Fatalf("err = %v, want %v on OrderingKey of event 1 with a fix saying %q", err, tt.err, tt.fix)
			}
			if !strings.Contains(err.Error(), "OrderingKey") {
				t.Errorf("message %q does not name OrderingKey", err)
			}
			if len(client.calls)+len(client.reads) != 0 {
				t.Error("a rejected write reached DynamoDB")
			}
		})
	}
}

// TestOrderedEventsNeedTheLastSequence: Put and Actions cannot number an
// ordered event; ActionsAfter needs the last sequence of every key.
func TestOrderedEventsNeedTheLastSequence(t *testing.T) {
	t.Parallel()
	w := newOrderedWriter(t, nil, outbox.Table{Name: "orders", Layout: outbox.LayoutShared}, outbox.WithOrdering())
	var ee *outbox.EventError
	if _, _, err := w.Put(orderPlaced()); !errors.Is(err, outbox.ErrSequenceUnknown) || !errors.As(err, &ee) || !strings.Contains(ee.Fix, "Write") {
		t.Errorf("Put of an ordered event: %v", err)
	}
	if _, _, err := w.Actions(nil, orderPlaced()); !errors.Is(err, outbox.ErrSequenceUnknown) {
		t.Errorf("Actions of an ordered event: %v", err)
	}
	other := orderPlaced()
	other.OrderingKey = "CUSTOMER#42"
	_, _, err := w.ActionsAfter(map[string]int64{"ORDER#1234": 0}, nil, orderPlaced(), other)
	if !errors.Is(err, outbox.ErrSequenceUnknown) || !errors.As(err, &ee) || ee.Index != 1 || !strings.Contains(ee.Fix, "CUSTOMER#42") {
		t.Errorf("ActionsAfter without the last sequence of event 1's key: %v", err)
	}
	actions, records, err := w.ActionsAfter(map[string]int64{"ORDER#1234": 0, "CUSTOMER#42": 7}, nil, orderPlaced(), other)
	if err != nil || len(actions) != 4 || records[0].Sequence != 1 || records[1].Sequence != 8 {
		t.Errorf("ActionsAfter: %v, %d actions, %+v", err, len(actions), records)
	}
	if _, err := outbox.NewWriter(nil, outbox.Table{Name: "orders"}); err != nil {
		t.Errorf("an unordered writer without client: %v", err)
	}
	if _, err := w.Write(context.Background(), nil, orderPlaced()); err == nil {
		t.Error("Write without a client succeeded")
	}
	if _, err := newOrderedWriter(t, &recordingClient{}, outbox.Table{Name: "orders", Layout: outbox.LayoutShared}, outbox.WithOrdering()).
		Write(context.Background(), nil, orderPlaced()); err == nil || !strings.Contains(err.Error(), "GetItem") {
		t.Errorf("Write of an ordered event with a client that cannot read: %v", err)
	}
}

// TestSequenceItemsAreNotOutboxItems: the sequence items' sort key passes
// neither the stream filter nor IsOutboxSortKey, and a sort key prefix that
// would let it through is refused for ordered events.
func TestSequenceItemsAreNotOutboxItems(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "orders", FormerSortKeyPrefixes: []string{"EVT#"}}.WithDefaults()
	if table.IsOutboxSortKey(outbox.SequenceSortKey) {
		t.Error("a sequence item looks like an outbox item")
	}
	if strings.Contains(table.StreamFilterPattern(), `"prefix":"OUTBOX-`) {
		t.Errorf("filter %s", table.StreamFilterPattern())
	}
	var ce *outbox.ConfigError
	for field, tbl := range map[string]outbox.Table{
		"SortKeyPrefix":         {Name: "orders", SortKeyPrefix: "OUTBOX"},
		"FormerSortKeyPrefixes": {Name: "orders", FormerSortKeyPrefixes: []string{"OUT"}},
	} {
		if _, err := outbox.NewWriter(nil, tbl, outbox.WithOrdering()); !errors.As(err, &ce) || ce.Field != field {
			t.Errorf("ordered writer of %+v: %v, want a ConfigError on %s", tbl, err, field)
		}
		w := newOrderedWriter(t, nil, tbl)
		e := orderPlaced()
		e.OrderingKey = "ORDER#1"
		if _, _, err := w.ActionsAfter(map[string]int64{"ORDER#1": 0}, nil, e); !errors.As(err, &ce) || ce.Field != field {
			t.Errorf("ordered event in %+v: %v, want a ConfigError on %s", tbl, err, field)
		}
		if _, _, err := w.Put(orderPlaced()); err != nil {
			t.Errorf("unordered event in %+v: %v", tbl, err)
		}
	}
}

// TestSequenceConflict: a cancellation whose reason on a sequence update is
// ConditionalCheckFailed (or TransactionConflict) is a sequence conflict;
// one on the event's own put is not.
func TestSequenceConflict(t *testing.T) {
	t.Parallel()
	cancelled := func(codes ...string) error {
		reasons := make([]types.CancellationReason, len(codes))
		for i, c := range codes {
			reasons[i] = types.CancellationReason{Code: aws.String(c)}
		}
		return &types.TransactionCanceledException{Message: aws.String("cancelled"), CancellationReasons: reasons}
	}
	for _, tt := range []struct {
		codes    []string
		conflict bool
	}{
		{[]string{"None", "None", "ConditionalCheckFailed"}, true},
		{[]string{"None", "None", "TransactionConflict"}, true},
		{[]string{"None", "ConditionalCheckFailed", "None"}, false},
		{[]string{"ConditionalCheckFailed", "None", "None"}, false},
	} {
		client := &sequenceClient{last: map[string]int64{"ORDER#1234": 2}}
		client.err = cancelled(tt.codes...)
		w := newOrderedWriter(t, client, outbox.Table{Name: "orders", Layout: outbox.LayoutShared}, outbox.WithOrdering())
		_, err := w.Write(context.Background(), []types.TransactWriteItem{{Put: &types.Put{TableName: aws.String("orders")}}}, orderPlaced())
		var sc *outbox.SequenceConflictError
		var tce *types.TransactionCanceledException
		if got := errors.Is(err, outbox.ErrSequenceConflict); got != tt.conflict || !errors.As(err, &tce) {
			t.Errorf("%v: err = %v, conflict %v, want %v", tt.codes, err, got, tt.conflict)
		}
		if tt.conflict && (!errors.As(err, &sc) || len(sc.OrderingKeys) != 1 || sc.OrderingKeys[0] != "ORDER#1234" || !strings.Contains(err.Error(), "retry")) {
			t.Errorf("%v: %v does not name the key and the retry", tt.codes, err)
		}
	}
	if (outbox.Table{Name: "orders"}).WithDefaults().SequenceConflict(nil, errors.New("other")) != nil {
		t.Error("an error that is no cancellation is a conflict")
	}
}

// TestTooManyActionsCountsSequenceItems: 99 events of one key and their
// sequence item make 100 actions; one caller item more is refused.
func TestTooManyActionsCountsSequenceItems(t *testing.T) {
	t.Parallel()
	client := &sequenceClient{}
	w := newOrderedWriter(t, client, outbox.Table{Name: "orders", Layout: outbox.LayoutShared}, outbox.WithOrdering())
	events := make([]outbox.Event, 99)
	for i := range events {
		events[i] = orderPlaced()
	}
	var te *outbox.TransactionError
	if _, err := w.Write(context.Background(), []types.TransactWriteItem{{}}, events...); !errors.As(err, &te) || te.Actions != 101 {
		t.Errorf("101 actions: %v", err)
	}
	if len(client.reads) != 0 {
		t.Error("a refused write read the sequence")
	}
	records, err := w.Write(context.Background(), nil, events...)
	if err != nil || records[98].Sequence != 99 {
		t.Errorf("100 actions: %v", err)
	}
}

// TestOrderedItemRoundTrip: ParseItem reads the ordering key and sequence
// that Item writes, the published metadata carries them only when set, and
// an item with broken ordering attributes breaks the contract.
func TestOrderedItemRoundTrip(t *testing.T) {
	t.Parallel()
	w := newOrderedWriter(t, nil, outbox.Table{Name: "orders", Layout: outbox.LayoutShared}, outbox.WithOrdering())
	actions, records, err := w.ActionsAfter(map[string]int64{"ORDER#1234": 41}, nil, orderPlaced())
	if err != nil {
		t.Fatal(err)
	}
	item := actions[0].Put.Item
	got, err := w.Table().ParseItem(item)
	if err != nil || got.OrderingKey != "ORDER#1234" || got.Sequence != 42 || got.EventID != records[0].EventID {
		t.Fatalf("ParseItem: %+v, %v", got, err)
	}
	var detail outbox.PublishedDetail
	if err := json.Unmarshal(got.DetailJSON(), &detail); err != nil || detail.Metadata.Sequence != 42 || detail.Metadata.OrderingKey != "ORDER#1234" {
		t.Errorf("published detail %s", got.DetailJSON())
	}
	got.OrderingKey, got.Sequence = "", 0
	if s := string(got.DetailJSON()); strings.Contains(s, "sequence") || strings.Contains(s, "orderingKey") {
		t.Errorf("unordered detail %s carries ordering metadata", s)
	}
	for name, edit := range map[string]func(map[string]types.AttributeValue){
		outbox.AttrSequence:    func(m map[string]types.AttributeValue) { delete(m, outbox.AttrSequence) },
		outbox.AttrOrderingKey: func(m map[string]types.AttributeValue) { delete(m, outbox.AttrOrderingKey) },
		outbox.AttrSequence + " 0": func(m map[string]types.AttributeValue) {
			m[outbox.AttrSequence] = &types.AttributeValueMemberN{Value: "0"}
		},
		outbox.AttrOrderingKey + " blank": func(m map[string]types.AttributeValue) {
			m[outbox.AttrOrderingKey] = &types.AttributeValueMemberS{Value: "A B"}
		},
	} {
		broken := make(map[string]types.AttributeValue, len(item))
		for k, v := range item {
			broken[k] = v
		}
		edit(broken)
		var re *outbox.RecordError
		if _, err := w.Table().ParseItem(broken); !errors.As(err, &re) || re.Attribute != strings.Fields(name)[0] {
			t.Errorf("%s: %v", name, err)
		}
	}
}
