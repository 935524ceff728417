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
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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
	if on, err := c.pointInTimeRecovery(ctx, st.TableName); err != nil || !on {
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

func TestLocalProtectionUpdatesInPlace(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, coreServices...)
	spec := Spec{Name: "unprotected", Reconciler: ReconcilerSpec{Disabled: true},
		Table: TableSpec{DeletionProtection: ptr(false), PointInTimeRecovery: ptr(false)}}
	st := must.Create(t, ctx, c, spec)
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })
	check := func(wantProtection, wantPITR bool) {
		t.Helper()
		desc, err := c.describeTable(ctx, st.TableName)
		if err != nil {
			t.Fatal(err)
		}
		pitr, err := c.pointInTimeRecovery(ctx, st.TableName)
		if err != nil {
			t.Fatal(err)
		}
		if aws.ToBool(desc.DeletionProtectionEnabled) != wantProtection || pitr != wantPITR {
			t.Fatalf("deletion protection %t, point-in-time recovery %t; want %t, %t", aws.ToBool(desc.DeletionProtectionEnabled), pitr, wantProtection, wantPITR)
		}
	}
	check(false, false)
	spec.Table.DeletionProtection, spec.Table.PointInTimeRecovery = nil, nil
	if _, drift := must.Read(t, ctx, c, spec, st); !strings.Contains(drift.String(), "deletion_protection") || !strings.Contains(drift.String(), "point_in_time_recovery") {
		t.Fatalf("Read does not report the protection settings as changed: %s", drift)
	}
	st = must.Update(t, ctx, c, spec, st, "Update")
	check(true, true)
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Fatalf("drift after Update: %s", drift)
	}
	// Out of band, then repaired.
	if _, err := c.DynamoDB.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(st.TableName), DeletionProtectionEnabled: aws.Bool(false)}); err != nil {
		t.Fatal(err)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !strings.Contains(drift.String(), "deletion_protection") {
		t.Fatalf("Read misses deletion protection turned off out of band: %s", drift)
	}
}

func TestLocalPendingIndexRenameKeepsPendingItems(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, coreServices...)
	spec := Spec{Name: "renamed", Reconciler: ReconcilerSpec{Disabled: true}, ForceDestroy: true}
	st := must.Create(t, ctx, c, spec)
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })
	writeEvents(t, ctx, c, spec.OutboxTable(), 5)
	tableARN := st.TableARN

	if f := ReplacementFields(spec, Spec{Name: "renamed", Table: TableSpec{PendingIndexName: "pending-v2"}}); len(f) != 0 {
		t.Fatalf("a new pending index name of a dedicated table replaces the pipeline: %v", f)
	}
	spec.Table.PendingIndexName = "pending-v2"
	st = must.Update(t, ctx, c, spec, st, "Update")
	if st.TableARN != tableARN || indexName(st.PendingIndexARN) != "pending-v2" || st.FormerPendingIndex != "" {
		t.Fatalf("after the rename: table %s (was %s), index %s, former %q", st.TableARN, tableARN, st.PendingIndexARN, st.FormerPendingIndex)
	}
	desc, err := c.describeTable(ctx, st.TableName)
	if err != nil {
		t.Fatal(err)
	}
	if hasIndex(desc, outbox.DefaultPendingIndexName) || !hasIndex(desc, "pending-v2") {
		t.Fatalf("indexes after the rename: %v", desc.GlobalSecondaryIndexes)
	}
	if n := countIndex(t, ctx, c, spec.OutboxTable()); n != 5 {
		t.Fatalf("the new pending index holds %d items, want the 5 pending events", n)
	}
	fn, err := c.getFunction(ctx, st.RelayFunctionName)
	if err != nil || fn.Configuration.Environment.Variables["OUTBOX_PENDING_INDEX_NAME"] != "pending-v2" {
		t.Fatalf("the relay's environment does not name the new index (err %v)", err)
	}
}

// countIndex counts the items of the pending index, shard by shard.
func countIndex(t *testing.T, ctx context.Context, c *Provisioner, table outbox.Table) int32 {
	t.Helper()
	var n int32
	for shard := range table.PendingShards {
		p := dynamodb.NewQueryPaginator(c.DynamoDB, &dynamodb.QueryInput{
			TableName: aws.String(table.Name), IndexName: aws.String(table.PendingIndexName),
			KeyConditionExpression:    aws.String("#s = :s"),
			ExpressionAttributeNames:  map[string]string{"#s": outbox.AttrPendingShard},
			ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: outbox.PendingShardKey(shard)}},
			Select:                    types.SelectCount,
		})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				t.Fatalf("querying %s: %v", table.PendingIndexName, err)
			}
			n += page.Count
		}
	}
	return n
}

// relayEnv returns the relay function's environment and its mapping's
// filter.
func relayEnv(t *testing.T, ctx context.Context, c *Provisioner, st State) (map[string]string, string) {
	t.Helper()
	fn, err := c.getFunction(ctx, st.RelayFunctionName)
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.getMapping(ctx, st.MappingUUID)
	if err != nil || m.FilterCriteria == nil || len(m.FilterCriteria.Filters) != 1 {
		t.Fatalf("reading the mapping's filter: %v", err)
	}
	return fn.Configuration.Environment.Variables, aws.ToString(m.FilterCriteria.Filters[0].Pattern)
}

func deleteItems(t *testing.T, ctx context.Context, c *Provisioner, table outbox.Table, records []outbox.Record) {
	t.Helper()
	for _, r := range records {
		if _, err := c.DynamoDB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table.Name), Key: table.Key(r)}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLocalSortKeyPrefixChangeKeepsFormerPrefix(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, coreServices...)
	spec := Spec{Name: "prefixed", Reconciler: ReconcilerSpec{Disabled: true}, ForceDestroy: true}
	st := must.Create(t, ctx, c, spec)
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })
	old := spec.OutboxTable()
	records := writeEvents(t, ctx, c, old, 3)

	spec.Table.SortKeyPrefix = "EVT#"
	for i := range 2 {
		st = must.Update(t, ctx, c, spec, st, fmt.Sprintf("Update %d", i))
		env, filter := relayEnv(t, ctx, c, st)
		if env["OUTBOX_SORT_KEY_PREFIX"] != "EVT#" || env["OUTBOX_FORMER_SORT_KEY_PREFIXES"] != "OUTBOX#" {
			t.Fatalf("Update %d with 3 events pending under OUTBOX#: environment %v", i, env)
		}
		if !strings.Contains(filter, `"prefix":"OUTBOX#"`) || !strings.Contains(filter, `"prefix":"EVT#"`) {
			t.Fatalf("Update %d: the mapping's filter drops the former prefix: %s", i, filter)
		}
		if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
			t.Fatalf("drift after Update %d: %s", i, drift)
		}
	}
	deleteItems(t, ctx, c, old, records) // delivered
	st = must.Update(t, ctx, c, spec, st, "Update after delivery")
	env, filter := relayEnv(t, ctx, c, st)
	if _, ok := env["OUTBOX_FORMER_SORT_KEY_PREFIXES"]; ok || strings.Contains(filter, "OUTBOX#") || len(st.Layout.FormerSortKeyPrefixes) != 0 {
		t.Fatalf("the former prefix outlives its events: environment %v, filter %s", env, filter)
	}
}

func TestLocalFewerShardsKeepReconcilingTheHigherOnes(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, coreServices...)
	spec := Spec{Name: "sharded", Reconciler: ReconcilerSpec{Disabled: true}, ForceDestroy: true}
	st := must.Create(t, ctx, c, spec)
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })
	table := spec.OutboxTable()
	records := writeEvents(t, ctx, c, table, 12)
	highest := -1
	for _, r := range records {
		highest = max(highest, table.ShardFor(r.EventID))
	}
	if highest < 4 {
		t.Fatalf("no event of 12 in shards 4 to 15 (highest %d)", highest)
	}

	spec.Table.PendingShards = 4
	st = must.Update(t, ctx, c, spec, st, "Update")
	if env, _ := relayEnv(t, ctx, c, st); env["OUTBOX_PENDING_SHARDS"] != "4" || env["OUTBOX_RECONCILE_SHARDS"] != "16" {
		t.Fatalf("after lowering the shards to 4: environment %v", env)
	}
	st = must.Update(t, ctx, c, spec, st, "second Update")
	if env, _ := relayEnv(t, ctx, c, st); env["OUTBOX_RECONCILE_SHARDS"] != fmt.Sprint(highest+1) {
		t.Fatalf("with events up to shard %d: OUTBOX_RECONCILE_SHARDS = %q", highest, env["OUTBOX_RECONCILE_SHARDS"])
	}
	deleteItems(t, ctx, c, table, records)
	st = must.Update(t, ctx, c, spec, st, "Update after delivery")
	if env, _ := relayEnv(t, ctx, c, st); env["OUTBOX_RECONCILE_SHARDS"] != "" || st.Layout.ReconcileShards != 0 {
		t.Fatalf("the higher shards are still reconciled once empty: environment %v", env)
	}
}

func TestPendingIndexDisabledOnlyForDedicatedDeleteMode(t *testing.T) {
	t.Parallel()
	for _, s := range []Spec{
		{Name: "p", Table: TableSpec{PendingIndexDisabled: true}},
		{Name: "p", PublishedAction: "delete", Table: TableSpec{PendingIndexDisabled: true, Existing: true, Name: "app"}},
	} {
		var ve *ValidationError
		if err := s.Validate(); !errors.As(err, &ve) || ve.Field != "Table.PendingIndexDisabled" {
			t.Errorf("Validate(%+v) = %v, want an error on Table.PendingIndexDisabled", s.Table, err)
		}
	}
	s := Spec{Name: "p", PublishedAction: "delete", Table: TableSpec{PendingIndexDisabled: true}}
	if err := s.Validate(); err != nil {
		t.Fatalf("a dedicated table in delete mode without pending index: %v", err)
	}
	doc := ReconcilerPolicy(s, s.resources(Account{Partition: "aws", Region: "us-east-1", ID: "123456789012"}, "arn:aws:dynamodb:us-east-1:123456789012:table/p-outbox", "q")).JSON()
	if !strings.Contains(doc, `"dynamodb:Scan"`) || !strings.Contains(doc, `"dynamodb:DescribeTable"`) || strings.Contains(doc, "/index/") {
		t.Errorf("the reconciler's policy without pending index does not describe and scan the table: %s", doc)
	}
}

func TestLocalPendingIndexSwitchesInPlace(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, coreServices...)
	spec := Spec{Name: "gsifree", PublishedAction: "delete", Reconciler: ReconcilerSpec{Disabled: true},
		Table: TableSpec{PendingIndexDisabled: true}, ForceDestroy: true}
	st := must.Create(t, ctx, c, spec)
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })
	check := func(when string, index bool) {
		t.Helper()
		desc, err := c.describeTable(ctx, st.TableName)
		if err != nil {
			t.Fatal(err)
		}
		env, _ := relayEnv(t, ctx, c, st)
		if hasIndex(desc, outbox.DefaultPendingIndexName) != index || (env["OUTBOX_PENDING_INDEX_ENABLED"] != "false") == !index || (st.PendingIndexARN != "") != index {
			t.Fatalf("%s: index %t, OUTBOX_PENDING_INDEX_ENABLED %q, PendingIndexARN %q; want the index %t",
				when, hasIndex(desc, outbox.DefaultPendingIndexName), env["OUTBOX_PENDING_INDEX_ENABLED"], st.PendingIndexARN, index)
		}
		if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
			t.Fatalf("%s: drift %s", when, drift)
		}
	}
	check("created without index", false)
	writeEvents(t, ctx, c, spec.OutboxTable(), 4)

	spec.Table.PendingIndexDisabled = false
	if f := ReplacementFields(Spec{Name: "gsifree", Table: TableSpec{PendingIndexDisabled: true}}, spec); len(f) != 0 {
		t.Fatalf("switching the pending index replaces the pipeline: %v", f)
	}
	st = must.Update(t, ctx, c, spec, st, "Update enabling the index")
	check("index enabled", true)
	if n := countIndex(t, ctx, c, spec.OutboxTable()); n != 4 {
		t.Fatalf("the new index holds %d of the 4 pending events", n)
	}
	spec.Table.PendingIndexDisabled = true
	st = must.Update(t, ctx, c, spec, st, "Update disabling the index")
	check("index disabled", false)
	if u, err := c.CountUndelivered(ctx, st.TableName, nil); err != nil || u.Pending != 4 {
		t.Fatalf("after the switches the table holds %v (%v), want the 4 pending events", u, err)
	}
}

func TestLocalCreateRefusesMissingTarget(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, append(coreServices, "events", "sns")...)
	before := componenttest.Inventory(t, ctx, stack)
	for _, tc := range []struct {
		target TargetSpec
		want   string
	}{
		{TargetSpec{EventBus: "no-such-bus"}, "event bus (no-such-bus): it does not exist in us-east-1"},
		{TargetSpec{EventBus: "arn:aws:events:eu-west-1:000000000000:event-bus/default"}, "it is in eu-west-1, but the pipeline is in us-east-1"},
		{TargetSpec{Type: "sns", TopicARN: "arn:aws:sns:us-east-1:000000000000:no-such-topic"}, "SNS topic (arn:aws:sns:us-east-1:000000000000:no-such-topic): it does not exist"},
	} {
		st, err := c.Create(ctx, Spec{Name: "untargeted", Target: tc.target, Reconciler: ReconcilerSpec{Disabled: true}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Create with target %+v: %v, want an error saying %q", tc.target, err, tc.want)
		}
		if st.Exists() {
			t.Errorf("Create with target %+v recorded %+v", tc.target, st)
		}
	}
	componenttest.CheckInventory(t, ctx, stack, before, "refused creations")
}

func TestLocalSecondAdoptionRefused(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, coreServices...)
	createAppTable(t, ctx, c, "shared", "")
	adopt := func(name string) Spec {
		return Spec{Name: name, Table: TableSpec{Existing: true, Name: "shared", PartitionKey: "pk", SortKey: "sk"}, Reconciler: ReconcilerSpec{Disabled: true}}
	}
	first := adopt("first")
	st, err := c.Create(ctx, first)
	if err != nil {
		t.Fatalf("Create first: %v", err)
	}
	if tags, err := c.tableTags(ctx, st.TableARN); err != nil || tags[TagAdoptedBy] != "first" {
		t.Fatalf("the adopted table's tags %v (%v), want %s=first", tags, err, TagAdoptedBy)
	}
	withFirst := componenttest.Inventory(t, ctx, stack)

	second, err := c.Create(ctx, adopt("second"))
	if err == nil || !strings.Contains(err.Error(), "belongs to the outbox pipeline first") {
		t.Fatalf("Create second on the same table: %v, want a refusal naming the first pipeline", err)
	}
	if second.Exists() {
		t.Errorf("the refused adoption left %+v", second)
	}
	componenttest.CheckInventory(t, ctx, stack, withFirst, "the refused adoption")
	if _, drift := must.Read(t, ctx, c, first, st); !drift.None() {
		t.Fatalf("the refused adoption reverted what the first pipeline needs: %s", drift)
	}
	// A dedicated table of another pipeline cannot be adopted either.
	own, err := c.Create(ctx, Spec{Name: "owner", Reconciler: ReconcilerSpec{Disabled: true}, ForceDestroy: true})
	if err != nil {
		t.Fatalf("Create owner: %v", err)
	}
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), own) })
	thief := adopt("thief")
	thief.Table.Name, thief.Table.PartitionKey, thief.Table.SortKey = own.TableName, "", ""
	if _, err := c.Create(ctx, thief); err == nil || !strings.Contains(err.Error(), "belongs to the outbox pipeline owner") {
		t.Fatalf("adopting another pipeline's dedicated table: %v", err)
	}

	must.Delete(t, ctx, c, st, "Delete first")
	if tags, err := c.tableTags(ctx, st.TableARN); err != nil || tags[TagAdoptedBy] != "" {
		t.Errorf("after Delete the table's tags are %v (%v), want no %s", tags, err, TagAdoptedBy)
	}
}
