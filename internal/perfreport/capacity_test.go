package perfreport

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestCapacityCounter counts a plain write, a transaction and an update
// that takes an item out of the pending index on the local stack.
func TestCapacityCounter(t *testing.T) {
	stack := localawstest.Start(t)
	ctx := context.Background()
	counter := NewCapacityCounter()
	ddb := dynamodb.NewFromConfig(localawstest.Config(stack), counter.Option)
	table := provision.Spec{Name: "cc"}.OutboxTable()
	if err := createTable(ctx, ddb, appTableSchema()); err != nil {
		t.Fatal(err)
	}
	if err := createTable(ctx, ddb, table); err != nil {
		t.Fatal(err)
	}

	in := &dynamodb.PutItemInput{TableName: aws.String(appTable), Item: orderItem("ORDER#1").Put.Item}
	if _, err := ddb.PutItem(ctx, in); err != nil {
		t.Fatal(err)
	}
	if in.ReturnConsumedCapacity != ddbtypes.ReturnConsumedCapacityIndexes {
		t.Errorf("ReturnConsumedCapacity = %q", in.ReturnConsumedCapacity)
	}
	if got := counter.Units(appTable); got != (WriteUnits{Table: 1, Requests: 1}) {
		t.Errorf("PutItem: %+v, want 1 unit", got)
	}

	counter.Reset()
	w, err := outbox.NewWriter(ddb, table)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := w.Write(ctx, []ddbtypes.TransactWriteItem{orderItem("ORDER#2")}, outbox.Event{Source: "s", DetailType: "d", Detail: orderDetail("2")})
	if err != nil {
		t.Fatal(err)
	}
	if got := counter.Units(appTable); got.Table != 2 || got.Indexes != 0 {
		t.Errorf("transaction, application item: %+v, want 2 units", got)
	}
	if got := counter.Units(table.Name); got.Table != 2 || got.Indexes <= 0 {
		t.Errorf("transaction, outbox item: %+v, want 2 units and an index write", got)
	}

	counter.Reset()
	if _, err := ddb.UpdateItem(ctx, table.MarkPublished(recs[0], recs[0].OccurredAt, 0)); err != nil {
		t.Fatal(err)
	}
	if got := counter.Units(table.Name); got != (WriteUnits{Table: 1, Indexes: 1, Requests: 1}) {
		t.Errorf("mark published: %+v, want 1 unit and 1 index unit", got)
	}
	// Reads are not counted.
	counter.Reset()
	if _, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(appTable), Key: map[string]ddbtypes.AttributeValue{
		"PK": &ddbtypes.AttributeValueMemberS{Value: "ORDER#1"}, "SK": &ddbtypes.AttributeValueMemberS{Value: "ORDER"},
	}}); err != nil {
		t.Fatal(err)
	}
	if got := counter.Units(appTable); got != (WriteUnits{}) {
		t.Errorf("GetItem counted: %+v", got)
	}
}
