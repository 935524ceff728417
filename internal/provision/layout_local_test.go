package provision

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

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
