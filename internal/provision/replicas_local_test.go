package provision

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/component/componenttest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// A dedicated table with replica Regions is created a global table with
// a NEW_AND_OLD_IMAGES stream and its replicas ACTIVE; a replica removed
// by hand is drift that Update repairs; replicas are added and removed in
// place; Delete removes the replicas with the table. A single-Region
// table that becomes global gets a NEW_AND_OLD_IMAGES stream, and the
// mapping moves to it.
func TestLocalGlobalTable(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, coreServices...)
	region := c.DynamoDB.Options().Region
	before := componenttest.Inventory(t, ctx, stack)
	replica := func(r string) *dynamodb.Client { return dynamodb.NewFromConfig(localawstest.RegionConfig(stack, r)) }

	spec := Spec{Name: "orders", Reconciler: ReconcilerSpec{Disabled: true}, Table: TableSpec{DeletionProtection: ptr(false)}}
	st := must.Create(t, ctx, c, spec)
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })
	if st.StreamViewType != string(types.StreamViewTypeNewImage) {
		t.Fatalf("a single-Region table's stream is %s", st.StreamViewType)
	}
	firstStream := st.StreamARN

	spec.Table.ReplicaRegions = []string{"eu-west-1"}
	st = must.Update(t, ctx, c, spec, st, "the table made global")
	checkReplicas(t, ctx, c, st.TableName, region, "eu-west-1")
	if st.StreamViewType != string(types.StreamViewTypeNewAndOldImages) || st.StreamARN == firstStream {
		t.Fatalf("the global table's stream is %s (%s), want a new NEW_AND_OLD_IMAGES one", st.StreamViewType, st.StreamARN)
	}
	if m, err := c.getMapping(ctx, st.MappingUUID); err != nil || aws.ToString(m.EventSourceArn) != st.StreamARN {
		t.Fatalf("the mapping is on %v (%v), want the new stream %s", m, err, st.StreamARN)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Errorf("Read reports drift: %s", drift)
	}
	if found, _, err := c.Lookup(ctx, spec.Name); err != nil || !slices.Equal(found.Table.ReplicaRegions, []string{"eu-west-1"}) {
		t.Errorf("Lookup found replicas %q (%v)", found.Table.ReplicaRegions, err)
	}

	// A replica removed by hand is drift; Update adds it back.
	if err := c.updateReplica(ctx, st.TableName, "eu-west-1", false); err != nil {
		t.Fatal(err)
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !slices.ContainsFunc(drift.Changed, func(ch Change) bool {
		return ch.Component == ComponentTable && slices.Contains(ch.Fields, "replica_regions")
	}) {
		t.Errorf("Read after a replica was removed by hand: %s, want table.replica_regions changed", drift)
	}
	spec.Table.ReplicaRegions = []string{"ap-south-1", "eu-west-1"}
	st = must.Update(t, ctx, c, spec, st, "a replica repaired and one added")
	checkReplicas(t, ctx, c, st.TableName, region, "ap-south-1", "eu-west-1")
	spec.Table.ReplicaRegions = []string{"ap-south-1"}
	st = must.Update(t, ctx, c, spec, st, "a replica removed")
	checkReplicas(t, ctx, c, st.TableName, region, "ap-south-1")
	if _, err := replica("eu-west-1").DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(st.TableName)}); !errors.Is(awsops.NotFound("table", st.TableName, err), awsops.ErrNotFound) {
		t.Errorf("the removed replica in eu-west-1: %v, want it gone", err)
	}

	must.Delete(t, ctx, c, st, "the global table deleted")
	if _, err := replica("ap-south-1").DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(st.TableName)}); !errors.Is(awsops.NotFound("table", st.TableName, err), awsops.ErrNotFound) {
		t.Errorf("the replica in ap-south-1 after Delete: %v, want it gone", err)
	}
	componenttest.CheckInventory(t, ctx, stack, before, "Delete")
}

// checkReplicas fails the test unless the table has ACTIVE replicas in
// exactly the Regions want, each holding the table.
func checkReplicas(t *testing.T, ctx context.Context, c *Provisioner, table, own string, want ...string) {
	t.Helper()
	desc, err := c.describeTable(ctx, table)
	if err != nil {
		t.Fatal(err)
	}
	if got := replicaRegions(desc, own); !slices.Equal(got, want) {
		t.Fatalf("the table's replicas are %q, want %q", got, want)
	}
	for _, r := range desc.Replicas {
		if aws.ToString(r.RegionName) != own && r.ReplicaStatus != types.ReplicaStatusActive {
			t.Errorf("the replica in %s is %s, want ACTIVE", aws.ToString(r.RegionName), r.ReplicaStatus)
		}
	}
}

// Replicas are refused on an adopted table, in the table's own Region,
// and a peer Region without a replica, each before anything is created
// and naming the field.
func TestLocalGlobalTableRefused(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, coreServices...)
	region := c.DynamoDB.Options().Region
	createAppTable(t, ctx, c, "app", types.StreamViewTypeNewAndOldImages)
	before := componenttest.Inventory(t, ctx, stack)
	for name, spec := range map[string]Spec{
		"Table.ReplicaRegions is set on an adopted table": {Table: TableSpec{Existing: true, Name: "app", PartitionKey: "pk", SortKey: "sk", ReplicaRegions: []string{"eu-west-1"}}},
		"Table.ReplicaRegions has \"" + region + "\"":     {Table: TableSpec{ReplicaRegions: []string{"eu-west-1", region}}},
		"MultiRegion.Regions has \"ap-south-1\", where the table has no replica": {Table: TableSpec{ReplicaRegions: []string{"eu-west-1"}},
			MultiRegion: MultiRegionSpec{Regions: []string{region, "ap-south-1"}}},
	} {
		spec.Name, spec.Reconciler.Disabled = "refused", true
		if _, err := c.Create(ctx, spec); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Create = %v, want an error with %q", err, name)
		}
	}
	componenttest.CheckInventory(t, ctx, stack, before, "the refused Creates")
}
