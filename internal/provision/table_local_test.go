package provision

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/component/componenttest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
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
	if attr, err := c.ttlStatus(ctx, "app"); err != nil || attr != "ttl" {
		t.Errorf("the table's own TTL = %q, %v; want it kept", attr, err)
	}
	componenttest.CheckInventory(t, ctx, stack, before, "Delete")
}

func TestLocalAdoptRejectsKeysOnlyStream(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, coreServices...)
	createAppTable(t, ctx, c, "keys", types.StreamViewTypeKeysOnly)
	before := componenttest.Inventory(t, ctx, stack)
	_, err := c.Create(ctx, Spec{Name: "keys", Table: TableSpec{Existing: true, Name: "keys", PartitionKey: "pk", SortKey: "sk"},
		Reconciler: ReconcilerSpec{Disabled: true}})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("NEW_IMAGE")) {
		t.Fatalf("Create on a KEYS_ONLY stream = %v, want an error naming the remedy", err)
	}
	componenttest.CheckInventory(t, ctx, stack, before, "the failed Create")
}
