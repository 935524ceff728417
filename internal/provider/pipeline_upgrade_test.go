package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// A version 0 state (no writer) upgrades with the writer filled in from its
// settings and computed attributes.
func TestPipelineStateUpgradeV0(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := &PipelineResource{}
	sch := r.schema(ctx)
	if sch.Version != 2 {
		t.Fatalf("schema version %d, want 2", sch.Version)
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
	resp := resource.UpgradeStateResponse{State: tfsdk.State{Schema: sch}}
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
	// state has, absent blocks become the objects of their defaults, and
	// the alarms stay off.
	if !m.ForceDestroy.Equal(types.BoolValue(false)) || !m.Table.DeletionProtection.Equal(types.BoolValue(true)) ||
		!m.Table.PointInTimeRecovery.Equal(types.BoolValue(true)) || !m.PendingIndex.Enabled.Equal(types.BoolValue(true)) ||
		!m.Table.KMSKeyARN.IsNull() || m.Reconciler == nil || !m.Reconciler.Enabled.ValueBool() || m.IAM == nil || m.IAM.Path.ValueString() != "/" ||
		m.Alarms != nil || m.Table.SortKeyPrefix.ValueString() != "EVT#" {
		t.Errorf("defaults after the upgrade: force_destroy %s, table %+v, pending_index %+v, reconciler %v, iam %v",
			m.ForceDestroy, m.Table, m.PendingIndex, m.Reconciler, m.IAM)
	}
	// A state with an attribute no version knows is refused with a message.
	resp = resource.UpgradeStateResponse{State: tfsdk.State{Schema: sch}}
	upgrader.StateUpgrader(ctx, resource.UpgradeStateRequest{RawState: &tfprotov6.RawState{JSON: []byte(`{"name":"orders","bogus":1}`)}}, &resp)
	if !resp.Diagnostics.HasError() || !strings.Contains(resp.Diagnostics[0].Detail(), "older state") {
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

// A version 1 state of a configuration with only name has null blocks; it
// upgrades to the objects of the defaults, and the framework's plan of the
// same configuration against the upgraded state changes nothing.
func TestPipelineStateUpgradeV1PlansNoChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := &PipelineResource{}
	sch := r.schema(ctx)
	typ := sch.Type().TerraformType(ctx)
	spec := provision.Spec{Name: "orders"}.WithDefaults()
	predicted := spec.Predicted(provision.Account{Partition: "aws", Region: "us-east-1", ID: "123456789012"})
	sha, err := r.relayCode().SHA256(string(spec.Architecture))
	if err != nil {
		t.Fatalf("the relay package is not built (go generate ./internal/relaypackage): %v", err)
	}
	predicted.RelayPackageSHA256 = sha
	v1 := map[string]any{"name": "orders", "force_destroy": false, "tags_all": map[string]string{}}
	for _, c := range computedStrings {
		if v := *c.state(&predicted); v != "" {
			v1[c.name] = v
		}
	}
	v1["id"] = "orders"
	// What Predicted leaves to apply.
	v1["reconciler_role_arn"] = "arn:aws:iam::123456789012:role/orders-reconciler"
	v1["scheduler_role_arn"] = "arn:aws:iam::123456789012:role/orders-scheduler"
	v1["schedule_arn"] = "arn:aws:scheduler:us-east-1:123456789012:schedule/default/orders-reconcile"
	v1["writer"] = map[string]any{"table_name": predicted.TableName, "partition_key": "PK", "sort_key": "SK", "sort_key_prefix": "OUTBOX#",
		"pending_index_name": "outbox-pending", "pending_index_shards": 16, "ttl_attribute": predicted.TTLAttribute}
	raw, err := json.Marshal(v1)
	if err != nil {
		t.Fatal(err)
	}
	resp := resource.UpgradeStateResponse{State: tfsdk.State{Schema: sch}}
	r.UpgradeState(ctx)[1].StateUpgrader(ctx, resource.UpgradeStateRequest{RawState: &tfprotov6.RawState{JSON: raw}}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("upgrade: %v", resp.Diagnostics)
	}
	var m PipelineResourceModel
	if diags := resp.State.Get(ctx, &m); diags.HasError() {
		t.Fatal(diags)
	}
	if m.Table == nil || m.Table.SortKeyPrefix.ValueString() != "OUTBOX#" || m.Relay == nil || m.Relay.Logging == nil ||
		m.Relay.BatchSize.ValueInt64() != provision.DefaultBatchSize || m.Reconciler == nil || m.Alarms != nil || m.Relay.VPCConfig != nil {
		t.Fatalf("upgraded objects: table %+v, relay %+v, reconciler %+v, alarms %+v", m.Table, m.Relay, m.Reconciler, m.Alarms)
	}
	config := map[string]tftypes.Value{}
	for name, at := range typ.(tftypes.Object).AttributeTypes {
		config[name] = tftypes.NewValue(at, nil)
	}
	config["name"] = tftypes.NewValue(tftypes.String, "orders")
	planned, requiresReplace := planPipeline(t, resp.State.Raw, resp.State.Raw, tftypes.NewValue(typ, config))
	if diffs, err := planned.Diff(resp.State.Raw); err != nil || len(diffs) > 0 || len(requiresReplace) > 0 {
		t.Errorf("the plan after the upgrade changes %v (%v), replaces %v", diffs, err, requiresReplace)
	}
}

// planPipeline plans outbox_pipeline with the provider's server as
// Terraform does. proposed is what Terraform proposes: the prior state
// where the configuration leaves an optional and computed value null, the
// configuration elsewhere.
func planPipeline(t *testing.T, prior, proposed, config tftypes.Value) (tftypes.Value, []*tftypes.AttributePath) {
	t.Helper()
	ctx := context.Background()
	srv, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	dv := func(v tftypes.Value) *tfprotov6.DynamicValue {
		d, err := tfprotov6.NewDynamicValue(v.Type(), v)
		if err != nil {
			t.Fatal(err)
		}
		return &d
	}
	resp, err := srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: "outbox_pipeline", PriorState: dv(prior), ProposedNewState: dv(proposed), Config: dv(config),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range resp.Diagnostics {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			t.Fatalf("plan: %s: %s", d.Summary, d.Detail)
		}
	}
	planned, err := resp.PlannedState.Unmarshal(prior.Type())
	if err != nil {
		t.Fatal(err)
	}
	return planned, resp.RequiresReplace
}

// An object unknown at plan (table = var.x) stays unknown in the plan, the
// values that follow from it are unknown, and the other objects plan their
// defaults.
func TestPipelinePlanUnknownObject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sch := (&PipelineResource{}).schema(ctx)
	typ := sch.Type().TerraformType(ctx).(tftypes.Object)
	config := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		config[name] = tftypes.NewValue(at, nil)
	}
	config["name"] = tftypes.NewValue(tftypes.String, "orders")
	config["table"] = tftypes.NewValue(typ.AttributeTypes["table"], tftypes.UnknownValue)
	planned, _ := planPipeline(t, tftypes.NewValue(typ, nil), tftypes.NewValue(typ, config), tftypes.NewValue(typ, config))
	at := func(steps ...string) tftypes.Value {
		p := tftypes.NewAttributePath()
		for _, s := range steps {
			p = p.WithAttributeName(s)
		}
		v, _, err := tftypes.WalkAttributePath(planned, p)
		if err != nil {
			t.Fatalf("%v: %v", steps, err)
		}
		return v.(tftypes.Value)
	}
	if at("table").IsKnown() || at("table_name").IsKnown() || at("writer", "sort_key_prefix").IsKnown() {
		t.Errorf("planned table %v, table_name %v, writer %v: want unknown", at("table"), at("table_name"), at("writer"))
	}
	var batch *big.Float
	if err := at("relay", "batch_size").As(&batch); err != nil || batch.String() != fmt.Sprint(provision.DefaultBatchSize) {
		t.Errorf("planned relay.batch_size %v (%v), want the default", at("relay", "batch_size"), err)
	}
	if !at("alarms").IsNull() || !at("relay", "vpc_config").IsNull() {
		t.Errorf("planned alarms %v, relay.vpc_config %v: want null", at("alarms"), at("relay", "vpc_config"))
	}
}
