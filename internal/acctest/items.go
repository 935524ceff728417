package acctest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/relaypackage"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// CreateAppTable creates the application's table, with pk/sk keys (and,
// when stream is set, a stream of that view type).
func (e *Env) CreateAppTable(name string, stream ddbtypes.StreamViewType) {
	e.T.Helper()
	c := dynamodb.NewFromConfig(e.Cfg)
	if _, err := c.CreateTable(e.Ctx, localawstest.TableInput(name, "pk", "sk", stream)); err != nil {
		e.T.Fatalf("creating table %s: %v", name, err)
	}
	e.T.Cleanup(func() {
		_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	if err := dynamodb.NewTableExistsWaiter(c).Wait(e.Ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 5*time.Minute); err != nil {
		e.T.Fatal(err)
	}
}

// OrderItem is the application's order n, to write beside its event.
func OrderItem(table, pk, sk string, n int) ddbtypes.TransactWriteItem {
	return ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{
		TableName: aws.String(table),
		Item: map[string]ddbtypes.AttributeValue{
			"pk": &ddbtypes.AttributeValueMemberS{Value: pk}, "sk": &ddbtypes.AttributeValueMemberS{Value: sk},
			"total": &ddbtypes.AttributeValueMemberN{Value: fmt.Sprint(10 * n)},
		},
	}}
}

// WriteOrders writes n orders, each in a transaction with its OrderPlaced
// event, and returns the records written.
func (e *Env) WriteOrders(w *outbox.Writer, ordersTable, source string, from, n int, sharedPK bool) ([]outbox.Record, error) {
	var records []outbox.Record
	for i := from; i < from+n; i++ {
		pk := fmt.Sprintf("ORDER#%d", i)
		ev := outbox.Event{Source: source, DetailType: "OrderPlaced", Detail: json.RawMessage(fmt.Sprintf(`{"orderId":"%d","total":%d}`, i, 10*i))}
		if sharedPK {
			ev.PartitionKey = pk
		}
		rs, err := w.Write(e.Ctx, []ddbtypes.TransactWriteItem{OrderItem(ordersTable, pk, "ORDER", i)}, ev)
		if err != nil {
			return nil, err
		}
		records = append(records, rs...)
	}
	return records, nil
}

// WriteAggregates writes n events of each aggregate, the aggregate's
// partition key being the outbox item's, round by round (one event of each
// aggregate, then the next), and returns the records in the order written.
func (e *Env) WriteAggregates(w *outbox.Writer, ordersTable string, aggregates []string, n int) ([]outbox.Record, error) {
	var records []outbox.Record
	for i := range n {
		for k, pk := range aggregates {
			order := 1000*k + i
			ev := outbox.Event{PartitionKey: pk, Source: "com.example.orders", DetailType: "OrderChanged",
				Detail: json.RawMessage(fmt.Sprintf(`{"order":%q,"seq":%d}`, pk, i))}
			rs, err := w.Write(e.Ctx, []ddbtypes.TransactWriteItem{OrderItem(ordersTable, pk, fmt.Sprintf("ORDER#%d", order), order)}, ev)
			if err != nil {
				return nil, err
			}
			records = append(records, rs...)
		}
	}
	return records, nil
}

// Writer is an outbox writer on table.
func (e *Env) Writer(table outbox.Table) *outbox.Writer {
	e.T.Helper()
	w, err := outbox.NewWriter(dynamodb.NewFromConfig(e.Cfg), table)
	if err != nil {
		e.T.Fatal(err)
	}
	return w
}

// WaitItems waits until every record's item satisfies ok (nil item: gone).
func (e *Env) WaitItems(table outbox.Table, records []outbox.Record, what string, ok func(item map[string]ddbtypes.AttributeValue) error) error {
	return Wait(e.Ctx, what, func() error { return e.CheckItems(table, records, ok) })
}

// CheckItems reads every record's item once and checks it with ok (nil
// item: gone): the condition of WaitItems, for a wait that acts between
// its reads.
func (e *Env) CheckItems(table outbox.Table, records []outbox.Record, ok func(item map[string]ddbtypes.AttributeValue) error) error {
	c := dynamodb.NewFromConfig(e.Cfg)
	table = table.WithDefaults()
	for _, r := range records {
		out, err := c.GetItem(e.Ctx, &dynamodb.GetItemInput{TableName: aws.String(table.Name), Key: table.Key(r), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return err
		}
		var item map[string]ddbtypes.AttributeValue
		if len(out.Item) > 0 {
			item = out.Item
		}
		if err := ok(item); err != nil {
			return fmt.Errorf("item of Event %s: %w", r.EventID, err)
		}
	}
	return nil
}

// AttrS is the string attribute name of item, "" if absent.
func AttrS(item map[string]ddbtypes.AttributeValue, name string) string {
	if v, ok := item[name].(*ddbtypes.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// AttrN is the number attribute name of item, "" if absent.
func AttrN(item map[string]ddbtypes.AttributeValue, name string) string {
	if v, ok := item[name].(*ddbtypes.AttributeValueMemberN); ok {
		return v.Value
	}
	return ""
}

// PublishedWithTTL checks that an item is marked PUBLISHED, out of the
// pending index, and expires through ttlAttr no sooner than a day.
func PublishedWithTTL(ttlAttr string) func(map[string]ddbtypes.AttributeValue) error {
	return func(item map[string]ddbtypes.AttributeValue) error {
		switch {
		case item == nil:
			return fmt.Errorf("is gone; want it marked")
		case AttrS(item, "status") != string(outbox.StatusPublished):
			return fmt.Errorf("status %q, want PUBLISHED", AttrS(item, "status"))
		case AttrN(item, ttlAttr) == "":
			return fmt.Errorf("has no %s", ttlAttr)
		case AttrS(item, "outboxPendingShard") != "":
			return fmt.Errorf("is still in the pending index")
		}
		var exp int64
		if _, err := fmt.Sscan(AttrN(item, ttlAttr), &exp); err != nil {
			return fmt.Errorf("%s is not a number: %w", ttlAttr, err)
		}
		if exp < time.Now().Add(24*time.Hour).Unix() {
			return fmt.Errorf("%s = %d expires too soon", ttlAttr, exp)
		}
		return nil
	}
}

// Deleted checks that an item is gone.
func Deleted(item map[string]ddbtypes.AttributeValue) error {
	if item != nil {
		return fmt.Errorf("still exists with status %q; want it Deleted", AttrS(item, "status"))
	}
	return nil
}

// Deliver writes n orders and checks that their events arrive at s, and
// that their items end as check says.
func (e *Env) Deliver(s Sink, table outbox.Table, ordersTable string, from, n int, itemsWhat string, check func(map[string]ddbtypes.AttributeValue) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		records, err := e.WriteOrders(e.Writer(table), ordersTable, "com.example.orders", from, n, table.Layout == outbox.LayoutShared)
		if err != nil {
			return err
		}
		got, err := s.Receive(records)
		if err != nil {
			return err
		}
		if err := CheckEvents(records, got); err != nil {
			return err
		}
		return e.WaitItems(table, records, itemsWhat, check)
	}
}

// RelaySHA is the checksum of the embedded relay package for arch.
func RelaySHA(t *testing.T, arch string) string {
	t.Helper()
	sha, err := relaypackage.SHA256(arch)
	if err != nil {
		t.Fatalf("%v: run `make relay` first", err)
	}
	return sha
}
