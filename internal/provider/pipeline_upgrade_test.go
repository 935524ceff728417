package provider

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// A version 0 state (no writer) upgrades to version 1 with the writer
// filled in from its settings and computed attributes.
func TestPipelineStateUpgradeV0(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := &PipelineResource{}
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	if sr.Schema.Version != 1 {
		t.Fatalf("schema version %d, want 1", sr.Schema.Version)
	}
	v0 := map[string]any{
		"id": "orders", "name": "orders", "table_name": "orders-outbox", "ttl_attribute_in_use": "expiresAt",
		"table_arn":     "arn:aws:dynamodb:us-east-1:123456789012:table/orders-outbox",
		"table":         map[string]any{"existing": false, "name": nil, "partition_key": "PK", "sort_key": "SK", "sort_key_prefix": "EVT#", "ttl_attribute": "expiresAt"},
		"pending_index": map[string]any{"name": "pending", "shards": 4},
	}
	raw, err := json.Marshal(v0)
	if err != nil {
		t.Fatal(err)
	}
	upgrader, ok := r.UpgradeState(ctx)[0]
	if !ok {
		t.Fatal("no upgrader from version 0")
	}
	resp := resource.UpgradeStateResponse{State: tfsdk.State{Schema: sr.Schema}}
	upgrader.StateUpgrader(ctx, resource.UpgradeStateRequest{RawState: &tfprotov6.RawState{JSON: raw}}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("upgrade: %v", resp.Diagnostics)
	}
	var m PipelineResourceModel
	if diags := resp.State.Get(ctx, &m); diags.HasError() {
		t.Fatal(diags)
	}
	w := m.Writer.Attributes()
	for k, want := range map[string]string{
		"table_name": `"orders-outbox"`, "sort_key_prefix": `"EVT#"`, "pending_index_name": `"pending"`,
		"pending_index_shards": "4", "ttl_attribute": `"expiresAt"`, "partition_key": `"PK"`,
	} {
		if got := w[k].String(); got != want {
			t.Errorf("writer.%s = %s, want %s", k, got, want)
		}
	}
	if m.TableARN.ValueString() != v0["table_arn"] || m.Name.ValueString() != "orders" {
		t.Errorf("the upgrade lost attributes: %+v", m)
	}
	// Settings that version 0 lacks take their defaults in the blocks the
	// state has, and absent blocks stay absent.
	if !m.ForceDestroy.Equal(types.BoolValue(false)) || !m.Table.DeletionProtection.Equal(types.BoolValue(true)) ||
		!m.Table.PointInTimeRecovery.Equal(types.BoolValue(true)) || !m.PendingIndex.Enabled.Equal(types.BoolValue(true)) ||
		!m.Table.KMSKeyARN.IsNull() || m.Reconciler != nil || m.IAM != nil {
		t.Errorf("defaults after the upgrade: force_destroy %s, table %+v, pending_index %+v, reconciler %v, iam %v",
			m.ForceDestroy, m.Table, m.PendingIndex, m.Reconciler, m.IAM)
	}
	// A state with an attribute no version knows is refused with a message.
	resp = resource.UpgradeStateResponse{State: tfsdk.State{Schema: sr.Schema}}
	upgrader.StateUpgrader(ctx, resource.UpgradeStateRequest{RawState: &tfprotov6.RawState{JSON: []byte(`{"name":"orders","bogus":1}`)}}, &resp)
	if !resp.Diagnostics.HasError() || !strings.Contains(resp.Diagnostics[0].Detail(), "version 0 state") {
		t.Errorf("an unknown attribute upgraded: %v", resp.Diagnostics)
	}
}

// fakePrivate is a private state in memory.
type fakePrivate map[string][]byte

func (p fakePrivate) GetKey(_ context.Context, k string) ([]byte, diag.Diagnostics) { return p[k], nil }

func (p fakePrivate) SetKey(_ context.Context, k string, v []byte) diag.Diagnostics {
	if len(v) == 0 {
		delete(p, k)
	} else {
		p[k] = v
	}
	return nil
}

// Drift survives the private state, and an unreadable record is reported.
func TestDriftPrivateState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := fakePrivate{}
	d := awsops.Drift{Missing: []string{"table"}, Changed: []awsops.Change{{Component: "event_source_mapping", Fields: []string{"BatchSize"}}}}
	if diags := saveDrift(ctx, p, &d); diags.HasError() {
		t.Fatal(diags)
	}
	got, diags := loadDrift(ctx, p)
	if diags.HasError() || got.String() != d.String() {
		t.Fatalf("loaded %s (%v), want %s", got, diags, d)
	}
	if diags := saveDrift(ctx, p, nil); diags.HasError() || len(p) != 0 {
		t.Fatalf("no drift left %v (%v)", p, diags)
	}
	p[privateDrift] = []byte("{not json")
	got, diags = loadDrift(ctx, p)
	if !got.None() || diags.WarningsCount() != 1 {
		t.Errorf("unreadable drift: %s, %v; want none and a warning", got, diags)
	}
	p[privateState] = []byte("{not json")
	m := PipelineResourceModel{}
	if _, diags := loadState(ctx, p, &m); diags.WarningsCount() != 1 {
		t.Errorf("unreadable state: %v; want a warning", diags)
	}
	p[privateState] = []byte(`{"version":99,"state":{}}`)
	if _, diags := loadState(ctx, p, &m); !diags.HasError() {
		t.Errorf("state of a newer provider: %v; want an error", diags)
	}
	want := provision.State{Name: "orders", TableName: "orders-outbox", TableOwned: true, MappingUUID: "uuid"}
	if diags := saveState(ctx, p, want, nil); diags.HasError() {
		t.Fatal(diags)
	}
	if got, diags := loadState(ctx, p, &m); diags.HasError() || diags.WarningsCount() != 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("saved and loaded %+v (%v), want %+v", got, diags, want)
	}
}
