package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
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
	m := pipelineModel(t, upgradePipeline(t, 0, v0))
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
	// the alarms stay off; a state without force_destroy is older than the
	// table's protection settings, and its table has neither.
	if !m.ForceDestroy.Equal(types.BoolValue(false)) || !m.Table.DeletionProtection.Equal(types.BoolValue(false)) ||
		!m.Table.PointInTimeRecovery.Equal(types.BoolValue(false)) || !m.PendingIndex.Enabled.Equal(types.BoolValue(true)) ||
		!m.Table.KMSKeyARN.IsNull() || m.Reconciler == nil || !m.Reconciler.Enabled.ValueBool() || m.IAM == nil || m.IAM.Path.ValueString() != "/" ||
		m.Alarms != nil || m.Table.SortKeyPrefix.ValueString() != "EVT#" {
		t.Errorf("defaults after the upgrade: force_destroy %s, table %+v, pending_index %+v, reconciler %v, iam %v",
			m.ForceDestroy, m.Table, m.PendingIndex, m.Reconciler, m.IAM)
	}
	if !m.StreamViewType.IsNull() {
		t.Errorf("stream_view_type %s without a stream, want null", m.StreamViewType)
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
	typ := (&PipelineResource{}).schema(ctx).Type().TerraformType(ctx)
	upgraded := upgradedDefaults(t)
	m := pipelineModel(t, upgraded)
	if m.Table == nil || m.Table.SortKeyPrefix.ValueString() != "OUTBOX#" || m.Relay == nil || m.Relay.Logging == nil ||
		m.Relay.BatchSize.ValueInt64() != provision.DefaultBatchSize || m.Reconciler == nil || m.Alarms != nil || m.Relay.VPCConfig != nil {
		t.Fatalf("upgraded objects: table %+v, relay %+v, reconciler %+v, alarms %+v", m.Table, m.Relay, m.Reconciler, m.Alarms)
	}
	config := ordersConfig(typ.(tftypes.Object))
	planned, requiresReplace := planPipeline(t, upgraded, upgraded, tftypes.NewValue(typ, config))
	if diffs, err := planned.Diff(upgraded); err != nil || len(diffs) > 0 || len(requiresReplace) > 0 {
		t.Errorf("the plan after the upgrade changes %v (%v), replaces %v", diffs, err, requiresReplace)
	}
}

// A state written when the reconciler's memory defaulted to 256 MB plans
// the default of now, in place, for a configuration that does not set it:
// the first plan after the upgrade shows the change.
func TestPipelinePlansTheReconcilersDefaultMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	typ := (&PipelineResource{}).schema(ctx).Type().TerraformType(ctx).(tftypes.Object)
	memory := tftypes.NewAttributePath().WithAttributeName("reconciler").WithAttributeName("memory_size")
	prior, err := tftypes.Transform(upgradedDefaults(t), func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if p.Equal(memory) {
			return tftypes.NewValue(tftypes.Number, 256), nil
		}
		return v, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	planned, requiresReplace := planPipeline(t, prior, prior, tftypes.NewValue(typ, ordersConfig(typ)))
	if len(requiresReplace) > 0 {
		t.Errorf("the plan replaces %v", requiresReplace)
	}
	if got := upgradedAt(t, planned, "reconciler", "memory_size"); !got.Equal(tftypes.NewValue(tftypes.Number, provision.DefaultReconcilerMemory)) {
		t.Errorf("reconciler.memory_size planned %v from 256, want the default %d", got, provision.DefaultReconcilerMemory)
	}
}

// upgradedDefaults is a version 1 state of a configuration with only name
// (null blocks, the values Predicted and apply gave), upgraded.
func upgradedDefaults(t *testing.T) tftypes.Value {
	t.Helper()
	r := &PipelineResource{}
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
	v1["stream_arn"] = predicted.TableARN + "/stream/2026-01-01T00:00:00.000"
	v1["writer"] = map[string]any{"table_name": predicted.TableName, "partition_key": "PK", "sort_key": "SK", "sort_key_prefix": "OUTBOX#",
		"pending_index_name": "outbox-pending", "pending_index_shards": 16, "ttl_attribute": predicted.TTLAttribute}
	return upgradePipeline(t, 1, v1)
}

// upgradePipeline upgrades a state of an older schema version (its
// attributes, as JSON encodes them) with the provider's server as Terraform
// does: the framework decodes it with the version's prior schema and calls
// its upgrader.
func upgradePipeline(t *testing.T, version int64, state map[string]any) tftypes.Value {
	t.Helper()
	ctx := context.Background()
	raw, err := json.Marshal(state)
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := newTestServer(ctx, t)
	resp, err := srv.UpgradeResourceState(ctx, &tfprotov6.UpgradeResourceStateRequest{
		TypeName: "outbox_pipeline", Version: version, RawState: &tfprotov6.RawState{JSON: raw},
	})
	if err != nil {
		t.Fatal(err)
	}
	return answered(t, "upgrade", resp.Diagnostics, resp.UpgradedState, (&PipelineResource{}).schema(ctx).Type().TerraformType(ctx))
}

// pipelineModel reads a pipeline's state into the resource's model.
func pipelineModel(t *testing.T, state tftypes.Value) PipelineResourceModel {
	t.Helper()
	ctx := context.Background()
	var m PipelineResourceModel
	if diags := (tfsdk.State{Schema: (&PipelineResource{}).schema(ctx), Raw: state}).Get(ctx, &m); diags.HasError() {
		t.Fatal(diags)
	}
	return m
}

// planPipeline plans outbox_pipeline with the provider's server as
// Terraform does. proposed is what Terraform proposes: the prior state
// where the configuration leaves an optional and computed value null, the
// configuration elsewhere.
func planPipeline(t *testing.T, prior, proposed, config tftypes.Value) (tftypes.Value, []*tftypes.AttributePath) {
	t.Helper()
	return planPipelineWith(t, nil, prior, proposed, config)
}

// planPipelineWith is planPipeline with the prior private state that Read
// recorded (the drift it found).
func planPipelineWith(t *testing.T, private []byte, prior, proposed, config tftypes.Value) (tftypes.Value, []*tftypes.AttributePath) {
	t.Helper()
	ctx := context.Background()
	srv, _ := newTestServer(ctx, t)
	resp, err := srv.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: "outbox_pipeline", PriorState: dynamicValue(t, prior), ProposedNewState: dynamicValue(t, proposed), Config: dynamicValue(t, config), PriorPrivate: private,
	})
	if err != nil {
		t.Fatal(err)
	}
	return answered(t, "plan", resp.Diagnostics, resp.PlannedState, prior.Type()), resp.RequiresReplace
}

// dynamicValue is v as the protocol carries it.
func dynamicValue(t *testing.T, v tftypes.Value) *tfprotov6.DynamicValue {
	t.Helper()
	d, err := tfprotov6.NewDynamicValue(v.Type(), v)
	if err != nil {
		t.Fatal(err)
	}
	return &d
}

// answered is the value of type typ that a call of the server (what)
// answered in dv; the test ends at an error among the call's diagnostics.
func answered(t *testing.T, what string, diags []*tfprotov6.Diagnostic, dv *tfprotov6.DynamicValue, typ tftypes.Type) tftypes.Value {
	t.Helper()
	failOnErrors(t, what, diags)
	v, err := dv.Unmarshal(typ)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// An object unknown at plan (table = var.x) stays unknown in the plan, the
// values that follow from it are unknown, and the other objects plan their
// defaults.
func TestPipelinePlanUnknownObject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sch := (&PipelineResource{}).schema(ctx)
	typ := sch.Type().TerraformType(ctx).(tftypes.Object)
	config := ordersConfig(typ)
	config["table"] = tftypes.NewValue(typ.AttributeTypes["table"], tftypes.UnknownValue)
	planned, _ := planPipeline(t, tftypes.NewValue(typ, nil), tftypes.NewValue(typ, config), tftypes.NewValue(typ, config))
	at := func(steps ...string) tftypes.Value { return upgradedAt(t, planned, steps...) }
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

// A version 1 state written before the table's protection settings existed
// (no force_destroy, no table block: the blocks' syntax) upgrades to a table
// without deletion protection or point-in-time recovery, as that provider
// left it: the first plan of the same configuration names both changes,
// from false to true, and keeps known the values that do not change.
func TestPipelineStateUpgradeV1PlansProtection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	sch := (&PipelineResource{}).schema(ctx)
	typ := sch.Type().TerraformType(ctx).(tftypes.Object)
	const account = "arn:aws:dynamodb:us-east-1:123456789012:table/orders-outbox"
	v1 := map[string]any{
		"id": "orders", "name": "orders", "table": nil, "relay": nil, "reconciler": nil, "tags_all": map[string]string{},
		"table_name": "orders-outbox", "table_arn": account, "stream_arn": account + "/stream/2026-01-01T00:00:00.000",
		"pending_index_arn": account + "/index/outbox-pending", "ttl_attribute_in_use": "expiresAt",
		"target_arn":            "arn:aws:events:us-east-1:123456789012:event-bus/default",
		"dead_letter_queue_url": "https://sqs.us-east-1.amazonaws.com/123456789012/orders-relay-dlq",
		"dead_letter_queue_arn": "arn:aws:sqs:us-east-1:123456789012:orders-relay-dlq",
		"relay_function_name":   "orders-relay", "relay_function_arn": "arn:aws:lambda:us-east-1:123456789012:function:orders-relay",
		"relay_role_arn": "arn:aws:iam::123456789012:role/orders-relay", "relay_log_group": "/aws/lambda/orders-relay",
		"event_source_mapping_uuid": "8c5b1d64-0000-4000-8000-000000000001",
		"reconciler_function_arn":   "arn:aws:lambda:us-east-1:123456789012:function:orders-reconciler",
		"reconciler_role_arn":       "arn:aws:iam::123456789012:role/orders-reconciler", "reconciler_log_group": "/aws/lambda/orders-reconciler",
		"scheduler_role_arn":   "arn:aws:iam::123456789012:role/orders-scheduler",
		"schedule_arn":         "arn:aws:scheduler:us-east-1:123456789012:schedule/default/orders-reconcile",
		"relay_package_sha256": "the previous release's package",
		"writer": map[string]any{"table_name": "orders-outbox", "partition_key": "PK", "sort_key": "SK", "sort_key_prefix": "OUTBOX#",
			"pending_index_name": "outbox-pending", "pending_index_shards": 16, "ttl_attribute": "expiresAt"},
	}
	upgraded := upgradePipeline(t, 1, v1)
	config := ordersConfig(typ)
	planned, requiresReplace := planPipeline(t, upgraded, upgraded, tftypes.NewValue(typ, config))
	if len(requiresReplace) > 0 {
		t.Errorf("the plan after the upgrade replaces %v", requiresReplace)
	}
	at := func(v tftypes.Value, steps ...string) tftypes.Value { return upgradedAt(t, v, steps...) }
	for _, setting := range []string{"deletion_protection", "point_in_time_recovery"} {
		before, after := at(upgraded, "table", setting), at(planned, "table", setting)
		if !before.Equal(tftypes.NewValue(tftypes.Bool, false)) || !after.Equal(tftypes.NewValue(tftypes.Bool, true)) {
			t.Errorf("table.%s: planned %v -> %v, want false -> true", setting, before, after)
		}
	}
	for _, name := range []string{"table_arn", "stream_arn", "relay_role_arn", "pending_index_arn", "event_source_mapping_uuid", "relay_function_arn", "target_arn"} {
		if got := at(planned, name); !got.IsKnown() || !got.Equal(tftypes.NewValue(tftypes.String, v1[name])) {
			t.Errorf("%s planned %v, want the state's %v", name, got, v1[name])
		}
	}
	if got := at(planned, "stream_view_type"); !got.Equal(tftypes.NewValue(tftypes.String, "NEW_IMAGE")) || !got.Equal(at(upgraded, "stream_view_type")) {
		t.Errorf("stream_view_type planned %v, upgraded %v; want NEW_IMAGE, unchanged", got, at(upgraded, "stream_view_type"))
	}
}

// TestAccPipeline_upgradeFromV1: a pipeline made by a release of schema
// version 1 that predates the table's protection settings (its table has
// neither; its state has no force_destroy and no table block) is upgraded,
// refreshed and planned by this provider's server on the local stack, as
// Terraform's first plan does: the plan names deletion_protection and
// point_in_time_recovery going from false to true, and keeps every value
// that does not change known, the ARNs as the state has them.
func TestAccPipeline_upgradeFromV1(t *testing.T) {
	e := newAccEnv(t)
	name := e.Name("upgrade")
	ctx := e.Ctx
	c := provision.New(e.Cfg, (&PipelineResource{}).relayCode())
	off := false
	spec := provision.Spec{Name: name, Table: provision.TableSpec{DeletionProtection: &off, PointInTimeRecovery: &off}, Reconciler: provision.ReconcilerSpec{Disabled: true}}
	st, err := c.Create(ctx, spec)
	if err != nil {
		t.Fatalf("creating the pipeline as the earlier release did: %v", err)
	}
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })
	olderRelayPolicy(t, e, st.RelayRoleName)
	v1 := map[string]any{"id": name, "name": name, "tags_all": map[string]string{},
		"reconciler": map[string]any{"enabled": false}, "writer": map[string]any{"table_name": st.TableName}}
	for _, a := range computedStrings {
		if v := *a.state(&st); v != "" && a.name != "stream_view_type" {
			v1[a.name] = v
		}
	}
	srv := configuredServer(t, e)
	upgraded := upgradePipeline(t, 1, v1)
	refreshed, private := readPipeline(t, srv, upgraded)
	sch := (&PipelineResource{}).schema(ctx)
	typ := sch.Type().TerraformType(ctx).(tftypes.Object)
	config := nullAttributes(typ)
	config["name"] = tftypes.NewValue(tftypes.String, name)
	reconciler := typ.AttributeTypes["reconciler"].(tftypes.Object)
	settings := nullAttributes(reconciler)
	settings["enabled"] = tftypes.NewValue(tftypes.Bool, false)
	config["reconciler"] = tftypes.NewValue(reconciler, settings)
	planned, requiresReplace := planPipelineWith(t, private, refreshed, refreshed, tftypes.NewValue(typ, config))
	if len(requiresReplace) > 0 {
		t.Errorf("the first plan replaces %v", requiresReplace)
	}
	for _, setting := range []string{"deletion_protection", "point_in_time_recovery"} {
		before, after := upgradedAt(t, refreshed, "table", setting), upgradedAt(t, planned, "table", setting)
		if !before.Equal(tftypes.NewValue(tftypes.Bool, false)) || !after.Equal(tftypes.NewValue(tftypes.Bool, true)) {
			t.Errorf("table.%s: planned %v -> %v, want false -> true", setting, before, after)
		}
	}
	for _, a := range computedStrings {
		if v := *a.state(&st); v != "" {
			if got := upgradedAt(t, planned, a.name); !got.Equal(tftypes.NewValue(tftypes.String, v)) {
				t.Errorf("%s planned %v, want the pipeline's %s", a.name, got, v)
			}
		}
	}
}

// olderRelayPolicy gives the relay's role the policy of a release before
// the relay read its batch's items (no dynamodb:BatchGetItem), as a
// pipeline made by it has: drift of the role that no attribute shows.
func olderRelayPolicy(t *testing.T, e *accEnv, role string) {
	t.Helper()
	c := iam.NewFromConfig(e.Cfg)
	out, err := c.GetRolePolicy(e.Ctx, &iam.GetRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(provision.RelayPolicyName)})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := url.QueryUnescape(aws.ToString(out.PolicyDocument))
	if err != nil {
		t.Fatal(err)
	}
	older := strings.ReplaceAll(doc, `"dynamodb:BatchGetItem",`, "")
	if older == doc {
		t.Fatalf("the relay's policy has no dynamodb:BatchGetItem to remove: %s", doc)
	}
	if _, err := c.PutRolePolicy(e.Ctx, &iam.PutRolePolicyInput{RoleName: aws.String(role), PolicyName: aws.String(provision.RelayPolicyName), PolicyDocument: aws.String(older)}); err != nil {
		t.Fatal(err)
	}
}

// nullAttributes is every attribute of an object type, null.
func nullAttributes(typ tftypes.Object) map[string]tftypes.Value {
	values := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		values[name] = tftypes.NewValue(at, nil)
	}
	return values
}

// newTestServer is the provider's server, its schemas read as Terraform
// reads them before any other call.
func newTestServer(ctx context.Context, t *testing.T) (tfprotov6.ProviderServer, *tfprotov6.GetProviderSchemaResponse) {
	t.Helper()
	srv, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	schemas, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return srv, schemas
}

// ordersConfig is the configuration of a pipeline named orders, every
// other attribute null.
func ordersConfig(typ tftypes.Object) map[string]tftypes.Value {
	config := nullAttributes(typ)
	config["name"] = tftypes.NewValue(tftypes.String, "orders")
	return config
}

// upgradedAt is the value at an attribute path of a pipeline's state or
// plan.
func upgradedAt(t *testing.T, v tftypes.Value, steps ...string) tftypes.Value {
	t.Helper()
	p := tftypes.NewAttributePath()
	for _, s := range steps {
		p = p.WithAttributeName(s)
	}
	got, _, err := tftypes.WalkAttributePath(v, p)
	if err != nil {
		t.Fatalf("%v: %v", steps, err)
	}
	return got.(tftypes.Value)
}

// configuredServer is the provider's server, configured for the test's
// environment as its provider block (ProviderConfig) does.
func configuredServer(t *testing.T, e *accEnv) tfprotov6.ProviderServer {
	t.Helper()
	srv, schemas := newTestServer(e.Ctx, t)
	typ := schemas.Provider.ValueType().(tftypes.Object)
	config := nullAttributes(typ)
	config["region"] = tftypes.NewValue(tftypes.String, "us-east-1")
	if e.Stack != nil {
		config["endpoint_url"] = tftypes.NewValue(tftypes.String, e.Stack.Endpoint())
	} else {
		config["region"] = tftypes.NewValue(tftypes.String, e.Cfg.Region)
	}
	resp, err := srv.ConfigureProvider(e.Ctx, &tfprotov6.ConfigureProviderRequest{Config: dynamicValue(t, tftypes.NewValue(typ, config))})
	if err != nil {
		t.Fatal(err)
	}
	failOnErrors(t, "configuring the provider", resp.Diagnostics)
	return srv
}

// readPipeline refreshes a pipeline's state with the provider's server,
// without private state (as after an upgrade from a release that kept
// none), and returns the new state and private state.
func readPipeline(t *testing.T, srv tfprotov6.ProviderServer, state tftypes.Value) (tftypes.Value, []byte) {
	t.Helper()
	resp, err := srv.ReadResource(context.Background(), &tfprotov6.ReadResourceRequest{TypeName: "outbox_pipeline", CurrentState: dynamicValue(t, state)})
	if err != nil {
		t.Fatal(err)
	}
	return answered(t, "reading the pipeline", resp.Diagnostics, resp.NewState, state.Type()), resp.Private
}

// failOnErrors ends the test at the first error among a call's
// diagnostics.
func failOnErrors(t *testing.T, what string, diags []*tfprotov6.Diagnostic) {
	t.Helper()
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			t.Fatalf("%s: %s: %s", what, d.Summary, d.Detail)
		}
	}
}
