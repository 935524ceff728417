package provision

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/component/componenttest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// setViewType changes the view type of the table's stream as a person
// would: disabled, then enabled again with viewType.
func setViewType(t *testing.T, ctx context.Context, c *Provisioner, table string, viewType types.StreamViewType) {
	t.Helper()
	if err := c.disableStream(ctx, table); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DynamoDB.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName:           aws.String(table),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: viewType},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.waitTableActive(ctx, table); err != nil {
		t.Fatal(err)
	}
}

// A dedicated table's stream changed by hand to KEYS_ONLY is drift of the
// stream, the mapping left on the disabled stream reads with its own
// settings, and Update replaces the stream with a NEW_IMAGE one and moves
// the mapping to it.
func TestLocalStreamViewTypeRepairedOnDedicatedTable(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, coreServices...)
	spec := Spec{Name: "views", Reconciler: ReconcilerSpec{Disabled: true}}
	st := must.Create(t, ctx, c, spec)
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })
	if st.StreamViewType != StreamViewNewImage {
		t.Fatalf("created stream view type %q, want NEW_IMAGE", st.StreamViewType)
	}
	setViewType(t, ctx, c, st.TableName, types.StreamViewTypeKeysOnly)

	observed, drift := must.Read(t, ctx, c, spec, st)
	if observed.StreamViewType != "KEYS_ONLY" || observed.StreamARN == st.StreamARN || !slices.Contains(drift.Components(), ComponentStream) {
		t.Fatalf("Read: view type %q, stream %s (was %s), drift %s; want KEYS_ONLY, a new stream, stream drift", observed.StreamViewType, observed.StreamARN, st.StreamARN, drift)
	}
	found, foundState, err := c.Lookup(ctx, spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	if foundState.MappingUUID != st.MappingUUID || found.Mapping.BatchSize != DefaultBatchSize || found.Mapping.ParallelizationFactor != 1 {
		t.Errorf("Lookup found mapping %q with %+v; want %q with its settings", foundState.MappingUUID, found.Mapping, st.MappingUUID)
	}

	repaired, err := c.Update(ctx, spec, observed)
	if err != nil {
		t.Fatalf("Update (repair of the stream): %v", err)
	}
	st = repaired
	desc, err := c.describeTable(ctx, st.TableName)
	if err != nil {
		t.Fatal(err)
	}
	if desc.StreamSpecification.StreamViewType != types.StreamViewTypeNewImage || st.StreamARN != aws.ToString(desc.LatestStreamArn) || st.StreamARN == observed.StreamARN {
		t.Errorf("after Update: stream %+v %s, state %s; want a new NEW_IMAGE stream", desc.StreamSpecification, aws.ToString(desc.LatestStreamArn), st.StreamARN)
	}
	m, err := c.getMapping(ctx, st.MappingUUID)
	if err != nil || aws.ToString(m.EventSourceArn) != st.StreamARN {
		t.Errorf("after Update the mapping is %+v (%v); want it on %s", m, err, st.StreamARN)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Errorf("Read after the repair reports drift: %s", drift)
	}
}

// An adopted table's stream is its owner's: one changed to KEYS_ONLY is
// refused with the fix, and left as it is.
func TestLocalStreamViewTypeRefusedOnAdoptedTable(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, coreServices...)
	createAppTable(t, ctx, c, "shop", types.StreamViewTypeNewImage)
	spec := Spec{Name: "shop", Table: TableSpec{Existing: true, Name: "shop", PartitionKey: "pk", SortKey: "sk"}, Reconciler: ReconcilerSpec{Disabled: true}}
	st := must.Create(t, ctx, c, spec)
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })
	setViewType(t, ctx, c, "shop", types.StreamViewTypeKeysOnly)
	observed, _ := must.Read(t, ctx, c, spec, st)
	_, err := c.Update(ctx, spec, observed)
	if err == nil || !strings.Contains(err.Error(), "change it to NEW_IMAGE") {
		t.Fatalf("Update on an adopted KEYS_ONLY stream = %v, want the fix", err)
	}
	desc, err := c.describeTable(ctx, "shop")
	if err != nil || desc.StreamSpecification.StreamViewType != types.StreamViewTypeKeysOnly || aws.ToString(desc.LatestStreamArn) != observed.StreamARN {
		t.Errorf("the adopted table's stream changed: %+v (%v)", desc, err)
	}
}

// createAppTable creates an application table keyed by pk and sk.
func createAppTable(t *testing.T, ctx context.Context, c *Provisioner, name string, stream types.StreamViewType) {
	t.Helper()
	if _, err := c.DynamoDB.CreateTable(ctx, localawstest.TableInput(name, "pk", "sk", stream)); err != nil {
		t.Fatalf("creating the application table: %v", err)
	}
	if _, err := c.waitTableActive(ctx, name); err != nil {
		t.Fatal(err)
	}
}

func TestLocalAdoptRevertsOnlyWhatItAdded(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, coreServices...)
	createAppTable(t, ctx, c, "app", "")
	// The application already expires items on its own attribute.
	if _, err := c.DynamoDB.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String("app"),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("ttl"), Enabled: aws.Bool(true)},
	}); err != nil {
		t.Fatal(err)
	}
	before := componenttest.Inventory(t, ctx, stack)

	spec := Spec{Name: "app", Table: TableSpec{Existing: true, Name: "app", PartitionKey: "pk", SortKey: "sk"},
		Reconciler: ReconcilerSpec{Disabled: true}}
	st := must.Create(t, ctx, c, spec)
	if st.TableOwned || st.Added != (Added{Stream: true, PendingIndex: true}) || st.TTLAttribute != "ttl" {
		t.Fatalf("adoption recorded %+v, TTL %q; want stream and index added, TTL attribute ttl kept", st.Added, st.TTLAttribute)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Fatalf("Read after adoption reports drift: %s", drift)
	}
	fn, err := c.getFunction(ctx, st.RelayFunctionName)
	if err != nil {
		t.Fatal(err)
	}
	if got := fn.Configuration.Environment.Variables["OUTBOX_TTL_ATTRIBUTE"]; got != "ttl" {
		t.Errorf("OUTBOX_TTL_ATTRIBUTE = %q, want the table's own ttl", got)
	}

	must.Delete(t, ctx, c, st, "Delete")
	desc, err := c.describeTable(ctx, "app")
	if err != nil {
		t.Fatalf("the adopted table is gone: %v", err)
	}
	if desc.StreamSpecification != nil && aws.ToBool(desc.StreamSpecification.StreamEnabled) {
		t.Error("the stream that the pipeline enabled is still enabled")
	}
	if len(desc.GlobalSecondaryIndexes) != 0 {
		t.Errorf("the pending index is still there: %v", desc.GlobalSecondaryIndexes)
	}
	if attr, err := awsops.TTLAttribute(ctx, c.DynamoDB, "app"); err != nil || attr != "ttl" {
		t.Errorf("the table's own TTL = %q, %v; want it kept", attr, err)
	}
	componenttest.CheckInventory(t, ctx, stack, before, "Delete")
}

// A stream without the new image (KEYS_ONLY, OLD_IMAGE) is refused on an
// adopted table, with the remedy, and nothing is left behind.
func TestLocalAdoptRejectsStreamWithoutNewImage(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, coreServices...)
	for _, view := range []types.StreamViewType{types.StreamViewTypeKeysOnly, types.StreamViewTypeOldImage} {
		name := strings.ToLower(strings.ReplaceAll(string(view), "_", "-"))
		createAppTable(t, ctx, c, name, view)
		before := componenttest.Inventory(t, ctx, stack)
		_, err := c.Create(ctx, Spec{Name: name, Table: TableSpec{Existing: true, Name: name, PartitionKey: "pk", SortKey: "sk"},
			Reconciler: ReconcilerSpec{Disabled: true}})
		if err == nil || !strings.Contains(err.Error(), "view type "+string(view)) || !strings.Contains(err.Error(), "change it to NEW_IMAGE or NEW_AND_OLD_IMAGES") {
			t.Fatalf("Create on a %s stream = %v, want an error naming the view type and the remedy", view, err)
		}
		componenttest.CheckInventory(t, ctx, stack, before, "the failed Create on "+string(view))
	}
}

// An adopted table whose stream is NEW_AND_OLD_IMAGES, as a global table's
// must be, keeps that stream: the relay's mapping reads it, and Read
// reports no drift.
func TestLocalAdoptKeepsNewAndOldImagesStream(t *testing.T) {
	t.Parallel()
	_, c, ctx := startStack(t, coreServices...)
	createAppTable(t, ctx, c, "global", types.StreamViewTypeNewAndOldImages)
	desc, err := c.describeTable(ctx, "global")
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{Name: "global", Table: TableSpec{Existing: true, Name: "global", PartitionKey: "pk", SortKey: "sk"}, Reconciler: ReconcilerSpec{Disabled: true}}
	st := must.Create(t, ctx, c, spec)
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })
	if st.StreamViewType != string(types.StreamViewTypeNewAndOldImages) || st.StreamARN != aws.ToString(desc.LatestStreamArn) || st.Added.Stream {
		t.Fatalf("adoption recorded stream %s (%s), added %t; want the table's own %s, NEW_AND_OLD_IMAGES, not added",
			st.StreamARN, st.StreamViewType, st.Added.Stream, aws.ToString(desc.LatestStreamArn))
	}
	m, err := c.getMapping(ctx, st.MappingUUID)
	if err != nil || aws.ToString(m.EventSourceArn) != st.StreamARN {
		t.Fatalf("the mapping is %+v (%v); want it on %s", m, err, st.StreamARN)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Errorf("Read reports drift on a NEW_AND_OLD_IMAGES stream: %s", drift)
	}
}

// A global table with multi-Region strong consistency is refused before
// anything is changed, naming the field, the reason and what works
// instead.
func TestLocalAdoptRefusesStrongConsistency(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, coreServices...)
	createAppTable(t, ctx, c, "strong", types.StreamViewTypeNewAndOldImages)
	if _, err := c.DynamoDB.UpdateTable(ctx, localawstest.StrongGlobalTableInput("strong", "eu-west-1", "us-west-2")); err != nil {
		t.Fatal(err)
	}
	localawstest.Eventually(t, time.Minute, "the MRSC replica ACTIVE", func() bool {
		desc, err := c.describeTable(ctx, "strong")
		return err == nil && len(desc.Replicas) > 0 && !slices.ContainsFunc(desc.Replicas, func(r types.ReplicaDescription) bool {
			return r.ReplicaStatus != types.ReplicaStatusActive
		})
	})
	before := componenttest.Inventory(t, ctx, stack)
	_, err := c.Create(ctx, Spec{Name: "strong", Table: TableSpec{Existing: true, Name: "strong", PartitionKey: "pk", SortKey: "sk"}, Reconciler: ReconcilerSpec{Disabled: true}})
	for _, want := range []string{"Table.Existing", "multi-Region strong consistency (MRSC)", "transactions", "TTL", "(MREC)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Create on an MRSC table = %v, want an error with %q", err, want)
		}
	}
	componenttest.CheckInventory(t, ctx, stack, before, "the refused Create")
	desc, err := c.describeTable(ctx, "strong")
	if err != nil {
		t.Fatal(err)
	}
	if tags, err := awsops.TableTags(ctx, c.DynamoDB, aws.ToString(desc.TableArn)); err != nil || tags[TagAdoptedBy] != "" {
		t.Errorf("the refused table's tags: %v (%v); want no %s", tags, err, TagAdoptedBy)
	}
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
		pitr, err := awsops.PointInTimeRecovery(ctx, c.DynamoDB, st.TableName)
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
	if tags, err := awsops.TableTags(ctx, c.DynamoDB, st.TableARN); err != nil || tags[TagAdoptedBy] != "first" {
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
	if tags, err := awsops.TableTags(ctx, c.DynamoDB, st.TableARN); err != nil || tags[TagAdoptedBy] != "" {
		t.Errorf("after Delete the table's tags are %v (%v), want no %s", tags, err, TagAdoptedBy)
	}
}
