package provision

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/component/componenttest"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
)

// A multi-Region pipeline on a NEW_AND_OLD_IMAGES table gets the mapping
// filters of its Region and the peers in its relay's environment, reads
// back with no drift, and is found again by Lookup; one created in a
// Region outside its peers is refused before anything is created.
func TestLocalMultiRegionPipeline(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t, coreServices...)
	region := c.DynamoDB.Options().Region
	createAppTable(t, ctx, c, "global", types.StreamViewTypeNewAndOldImages)

	before := componenttest.Inventory(t, ctx, stack)
	outside := Spec{Name: "global", Table: TableSpec{Existing: true, Name: "global", PartitionKey: "pk", SortKey: "sk"},
		Reconciler: ReconcilerSpec{Disabled: true}, MultiRegion: MultiRegionSpec{Regions: []string{"eu-west-1", "ap-south-1"}}}
	if _, err := c.Create(ctx, outside); err == nil || !strings.Contains(err.Error(), "MultiRegion.Regions") || !strings.Contains(err.Error(), region) {
		t.Fatalf("Create in %s with peers %q = %v, want an error naming the field and the Region", region, outside.MultiRegion.Regions, err)
	}
	componenttest.CheckInventory(t, ctx, stack, before, "the refused Create")

	spec := outside
	spec.MultiRegion.Regions = []string{region, "eu-west-1"}
	st := must.Create(t, ctx, c, spec)
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })
	m, err := c.getMapping(ctx, st.MappingUUID)
	if err != nil {
		t.Fatal(err)
	}
	want := spec.streamFilters(st)
	if len(want) != 2 || m.FilterCriteria == nil || len(m.FilterCriteria.Filters) != 2 || aws.ToString(m.FilterCriteria.Filters[1].Pattern) == "" ||
		!strings.Contains(aws.ToString(m.FilterCriteria.Filters[0].Pattern), `"outboxOrigin":{"S":["`+region+`"]}`) {
		t.Fatalf("the primary's mapping filters %+v, want %q", m.FilterCriteria, want)
	}
	fn, err := c.getFunction(ctx, st.RelayFunctionName)
	if err != nil {
		t.Fatal(err)
	}
	if env := fn.Configuration.Environment.Variables; env[config.EnvRegions] != region+",eu-west-1" {
		t.Errorf("the relay's %s = %q", config.EnvRegions, env[config.EnvRegions])
	}
	if _, drift := must.Read(t, ctx, c, spec, st); !drift.None() {
		t.Errorf("Read reports drift: %s", drift)
	}
	found, _, err := c.Lookup(ctx, spec.Name)
	if err != nil || strings.Join(found.MultiRegion.Regions, ",") != region+",eu-west-1" {
		t.Errorf("Lookup found peers %q (%v)", found.MultiRegion.Regions, err)
	}

	// Moved to second place, the pipeline is no longer the primary: the
	// filter of items without origin goes.
	spec.MultiRegion.Regions = []string{"eu-west-1", region}
	st = must.Update(t, ctx, c, spec, st, "peers reordered")
	if m, err := c.getMapping(ctx, st.MappingUUID); err != nil || m.FilterCriteria == nil || len(m.FilterCriteria.Filters) != 1 {
		t.Errorf("the secondary's mapping filters %+v (%v), want one", m, err)
	}
}
