package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

func TestPipelineResourceSchema(t *testing.T) {
	t.Parallel()
	var resp resource.SchemaResponse
	NewPipelineResource().Schema(context.Background(), resource.SchemaRequest{}, &resp)
	if diags := resp.Schema.ValidateImplementation(context.Background()); diags.HasError() {
		t.Fatalf("schema: %v", diags)
	}
	eachAttribute(resp.Schema.Attributes, "", func(name string, a schema.Attribute) {
		if a.GetMarkdownDescription() == "" {
			t.Errorf("attribute %s has no description", name)
		}
	})
	for name := range resp.Schema.Blocks {
		if name != "timeouts" {
			t.Errorf("block %s: the settings are nested attributes, so that their defaults are planned", name)
		}
	}
}

// eachAttribute calls fn for every attribute, with its dotted name,
// descending into single nested attributes.
func eachAttribute(attrs map[string]schema.Attribute, prefix string, fn func(string, schema.Attribute)) {
	for n, a := range attrs {
		fn(prefix+n, a)
		if nested, ok := a.(schema.SingleNestedAttribute); ok {
			eachAttribute(nested.Attributes, prefix+n+".", fn)
		}
	}
}

// An object with defaults is planned, when omitted, as the object of its
// attributes' defaults: the schema's default of each is built from them.
func TestPipelineObjectDefaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var resp resource.SchemaResponse
	NewPipelineResource().Schema(ctx, resource.SchemaRequest{}, &resp)
	want := map[string]string{
		"table.sort_key_prefix": `"OUTBOX#"`, "table.name": "<null>", "table.deletion_protection": "true",
		"relay.batch_size": fmt.Sprint(provision.DefaultBatchSize), "relay.logging.log_format": `"` + provision.DefaultLogFormat + `"`,
		"relay.vpc_config": "<null>", "relay.reserved_concurrency": "<null>",
		"reconciler.schedule_expression": `"` + provision.DefaultScheduleExpression + `"`, "published.ttl_days": "30",
		"pending_index.shards": "16", "dead_letter.kms_master_key_id": "<null>", "iam.path": `"/"`, "target.event_bus": "<null>",
	}
	for p, w := range want {
		steps := strings.Split(p, ".")
		a, ok := resp.Schema.Attributes[steps[0]].(schema.SingleNestedAttribute)
		if !ok || a.Default == nil || !a.Computed {
			t.Fatalf("%s is not an optional, computed object with a default", steps[0])
		}
		var dr defaults.ObjectResponse
		a.Default.DefaultObject(ctx, defaults.ObjectRequest{}, &dr)
		var v attr.Value = dr.PlanValue
		for _, s := range steps[1:] {
			v = v.(types.Object).Attributes()[s]
		}
		if v.String() != w {
			t.Errorf("default of %s = %s, want %s", p, v, w)
		}
	}
	if a := resp.Schema.Attributes["alarms"].(schema.SingleNestedAttribute); a.Default != nil || a.Computed {
		t.Error("alarms has a default: omitted, there are no alarms")
	}
}

// An imported pipeline with every setting at its default has the objects
// that a configuration relying on the defaults plans; a changed setting
// shows in its object.
func TestModelFromSpecHasDefaultObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := modelFromSpec(provision.Spec{Name: "orders", Tags: map[string]string{"env": "prod", "team": "orders"}}, provision.State{}, map[string]string{"env": "prod"})
	var sr resource.SchemaResponse
	NewPipelineResource().Schema(ctx, resource.SchemaRequest{}, &sr)
	st := tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(sr.Schema.Type().TerraformType(ctx), nil)}
	if diags := st.Set(ctx, &m); diags.HasError() {
		t.Fatal(diags)
	}
	for name, a := range sr.Schema.Attributes {
		nested, ok := a.(schema.SingleNestedAttribute)
		if !ok {
			continue
		}
		var got types.Object
		if diags := st.GetAttribute(ctx, path.Root(name), &got); diags.HasError() {
			t.Fatal(diags)
		}
		want := types.ObjectNull(nested.GetType().(types.ObjectType).AttrTypes)
		if nested.Default != nil {
			var dr defaults.ObjectResponse
			nested.Default.DefaultObject(ctx, defaults.ObjectRequest{}, &dr)
			want = dr.PlanValue
		}
		if !got.Equal(want) {
			t.Errorf("imported %s = %s, want the default %s", name, got, want)
		}
	}
	if len(m.Tags.Elements()) != 1 || len(m.TagsAll.Elements()) != 2 {
		t.Errorf("tags = %v, tags_all = %v; want the default tags only in tags_all", m.Tags, m.TagsAll)
	}
	s := provision.Spec{Name: "orders", Mapping: provision.MappingSpec{BatchSize: 25}, Reconciler: provision.ReconcilerSpec{Disabled: true}}
	m = modelFromSpec(s, provision.State{}, nil)
	if m.Relay == nil || m.Relay.BatchSize.ValueInt64() != 25 || m.Relay.MemorySize.ValueInt64() != provision.DefaultRelayMemory {
		t.Errorf("relay object = %+v", m.Relay)
	}
	if m.Reconciler == nil || m.Reconciler.Enabled.ValueBool() {
		t.Errorf("reconciler object = %+v, want enabled = false", m.Reconciler)
	}
	if got := m.spec(nil, specOptions{}).WithDefaults(); got.Mapping.BatchSize != 25 || !got.Reconciler.Disabled {
		t.Errorf("the model does not map back to the spec: %+v", got)
	}
}

// The alarms object maps to the spec both ways; present, it enables the
// alarms unless it says otherwise.
func TestAlarmsBlockMapping(t *testing.T) {
	t.Parallel()
	s := provision.Spec{Name: "orders", Alarms: provision.AlarmsSpec{Enabled: true, SNSTopicARN: "arn:aws:sns:us-east-1:123456789012:alerts", RelayErrorsThreshold: 4}}
	m := modelFromSpec(s, provision.State{}, nil)
	if m.Alarms == nil || m.Alarms.RelayErrorsThreshold.ValueInt64() != 4 || m.Alarms.SNSTopicARN.ValueString() != s.Alarms.SNSTopicARN ||
		m.Alarms.TreatMissingData.ValueString() != provision.DefaultTreatMissingData {
		t.Fatalf("alarms object = %+v", m.Alarms)
	}
	if got := m.spec(nil, specOptions{}).WithDefaults().Alarms; got != s.WithDefaults().Alarms {
		t.Errorf("the model maps back to %+v, want %+v", got, s.WithDefaults().Alarms)
	}
	m.Alarms.Enabled = types.BoolNull()
	if !m.spec(nil, specOptions{}).Alarms.Enabled {
		t.Error("a present object without enabled does not enable the alarms")
	}
	m.Alarms.Enabled = types.BoolValue(false)
	if m.spec(nil, specOptions{}).Alarms.Enabled {
		t.Error("enabled = false enables the alarms")
	}
	m.Alarms.SNSTopicARN = types.StringUnknown()
	m.Alarms.Enabled = types.BoolValue(true)
	if err := m.spec(nil, specOptions{validating: true}).Validate(); err != nil {
		t.Errorf("an unknown topic fails validation: %v", err)
	}
	st := provision.State{Alarms: provision.AlarmARNs{DLQNotEmpty: "arn:dlq", RelayErrors: "arn:errors"}}
	m.setState(st)
	if len(m.AlarmARNs.Elements()) != 2 {
		t.Errorf("alarm_arns = %v", m.AlarmARNs)
	}
	m.setState(provision.State{})
	if !m.AlarmARNs.IsNull() {
		t.Errorf("alarm_arns without alarms = %v, want null", m.AlarmARNs)
	}
}
