package provision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/component/componenttest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// writeEvents writes n outbox events to the pipeline's table and returns
// their records.
func writeEvents(t *testing.T, ctx context.Context, c *Provisioner, table outbox.Table, n int) []outbox.Record {
	t.Helper()
	w, err := outbox.NewWriter(c.DynamoDB, table)
	if err != nil {
		t.Fatal(err)
	}
	var records []outbox.Record
	for i := range n {
		r, err := w.Write(ctx, nil, outbox.Event{
			PartitionKey: fmt.Sprintf("order-%d", i), Source: "shop.orders", DetailType: "OrderPlaced",
			Detail: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)),
		})
		if err != nil {
			t.Fatalf("writing event %d: %v", i, err)
		}
		records = append(records, r...)
	}
	return records
}

func markFailed(t *testing.T, ctx context.Context, c *Provisioner, table outbox.Table, r outbox.Record) {
	t.Helper()
	if _, err := c.DynamoDB.UpdateItem(ctx, table.MarkFailed(r, "test", time.Now())); err != nil {
		t.Fatalf("marking %s failed: %v", r.EventID, err)
	}
}

func TestLocalDeleteKeepsUndeliveredEvents(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, coreServices...)
	before := componenttest.Inventory(t, ctx, stack)

	spec := Spec{Name: "guarded", Reconciler: ReconcilerSpec{Disabled: true}}
	st := must.Create(t, ctx, c, spec)
	desc, err := c.describeTable(ctx, st.TableName)
	if err != nil || !aws.ToBool(desc.DeletionProtectionEnabled) {
		t.Fatalf("the dedicated table has no deletion protection by default (err %v)", err)
	}
	if on, err := awsops.PointInTimeRecovery(ctx, c.DynamoDB, st.TableName); err != nil || !on {
		t.Fatalf("the dedicated table has no point-in-time recovery by default: %t, %v", on, err)
	}
	if _, err := c.DynamoDB.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(st.TableName)}); err == nil {
		t.Fatal("DeleteTable succeeded on a protected table")
	}

	table := spec.OutboxTable()
	records := writeEvents(t, ctx, c, table, 3)
	markFailed(t, ctx, c, table, records[0])
	withEvents := componenttest.Inventory(t, ctx, stack)

	_, err = c.Delete(ctx, st)
	var ue *UndeliveredError
	if !errors.As(err, &ue) || ue.Pending != 2 || ue.Failed != 1 {
		t.Fatalf("Delete with 2 pending and 1 failed events: %v, want an UndeliveredError with those counts", err)
	}
	for _, want := range []string{"2 PENDING and 1 FAILED", "outbox drain guarded", "outbox requeue guarded", "force_destroy = true"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
	if got := componenttest.Inventory(t, ctx, stack); !localawstest.SameInventory(got, withEvents) {
		t.Fatalf("the refused Delete removed components:\n got %v\nwant %v", got, withEvents)
	}
	if u, err := c.CountUndelivered(ctx, st.TableName, nil); err != nil || u.Total() != 3 {
		t.Fatalf("after the refused Delete the table holds %v (%v), want the 3 events", u, err)
	}

	// Deliver the pending ones (as the relay would): Delete still refuses
	// the failed one; force destroy deletes it.
	for _, r := range records[1:] {
		if _, err := c.DynamoDB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table.Name), Key: table.Key(r)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Delete(ctx, st); !errors.As(err, &ue) || ue.Pending != 0 || ue.Failed != 1 {
		t.Fatalf("Delete with 1 failed event: %v", err)
	}
	spec.ForceDestroy = true
	if st, err = c.Update(ctx, spec, st); err != nil || !st.ForceDestroy {
		t.Fatalf("Update to force destroy: %v (ForceDestroy %t)", err, st.ForceDestroy)
	}
	must.Delete(t, ctx, c, st, "Delete under force destroy")
	componenttest.CheckInventory(t, ctx, stack, before, "Delete")
}

func deleteItems(t *testing.T, ctx context.Context, c *Provisioner, table outbox.Table, records []outbox.Record) {
	t.Helper()
	for _, r := range records {
		if _, err := c.DynamoDB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table.Name), Key: table.Key(r)}); err != nil {
			t.Fatal(err)
		}
	}
}
