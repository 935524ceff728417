package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

func TestPipelineResourceSchema(t *testing.T) {
	t.Parallel()
	var resp resource.SchemaResponse
	NewPipelineResource().Schema(context.Background(), resource.SchemaRequest{}, &resp)
	if diags := resp.Schema.ValidateImplementation(context.Background()); diags.HasError() {
		t.Fatalf("schema: %v", diags)
	}
	check := func(name string, attrs map[string]schema.Attribute) {
		for n, a := range attrs {
			if a.GetMarkdownDescription() == "" {
				t.Errorf("attribute %s%s has no description", name, n)
			}
		}
	}
	check("", resp.Schema.Attributes)
	for name, b := range resp.Schema.Blocks {
		if b.GetMarkdownDescription() == "" && name != "timeouts" {
			t.Errorf("block %s has no description", name)
		}
		if nb, ok := b.(schema.SingleNestedBlock); ok && name != "timeouts" {
			check(name+".", nb.Attributes)
		}
	}
}

// An imported pipeline with every setting at its default has no blocks, as
// a configuration that relies on the defaults has none; a changed setting
// brings its whole block.
func TestModelFromSpecLeavesDefaultBlocksOut(t *testing.T) {
	t.Parallel()
	m := modelFromSpec(provision.Spec{Name: "orders", Tags: map[string]string{"env": "prod", "team": "orders"}}, provision.State{}, map[string]string{"env": "prod"})
	if m.Table != nil || m.Target != nil || m.Relay != nil || m.Published != nil || m.PendingIndex != nil || m.Reconciler != nil || m.DeadLetter != nil || m.Alarms != nil {
		t.Errorf("default spec has blocks: %+v", m)
	}
	if len(m.Tags.Elements()) != 1 || len(m.TagsAll.Elements()) != 2 {
		t.Errorf("tags = %v, tags_all = %v; want the default tags only in tags_all", m.Tags, m.TagsAll)
	}
	s := provision.Spec{Name: "orders", Mapping: provision.MappingSpec{BatchSize: 25}, Reconciler: provision.ReconcilerSpec{Disabled: true}}
	m = modelFromSpec(s, provision.State{}, nil)
	if m.Relay == nil || m.Relay.BatchSize.ValueInt64() != 25 || m.Relay.MemorySize.ValueInt64() != provision.DefaultRelayMemory {
		t.Errorf("relay block = %+v", m.Relay)
	}
	if m.Reconciler == nil || m.Reconciler.Enabled.ValueBool() {
		t.Errorf("reconciler block = %+v, want enabled = false", m.Reconciler)
	}
	if got := m.spec(nil, specOptions{}).WithDefaults(); got.Mapping.BatchSize != 25 || !got.Reconciler.Disabled {
		t.Errorf("the model does not map back to the spec: %+v", got)
	}
}

// The alarms block maps to the spec both ways; present, it enables the
// alarms unless it says otherwise.
func TestAlarmsBlockMapping(t *testing.T) {
	t.Parallel()
	s := provision.Spec{Name: "orders", Alarms: provision.AlarmsSpec{Enabled: true, SNSTopicARN: "arn:aws:sns:us-east-1:123456789012:alerts", RelayErrorsThreshold: 4}}
	m := modelFromSpec(s, provision.State{}, nil)
	if m.Alarms == nil || m.Alarms.RelayErrorsThreshold.ValueInt64() != 4 || m.Alarms.SNSTopicARN.ValueString() != s.Alarms.SNSTopicARN ||
		m.Alarms.TreatMissingData.ValueString() != provision.DefaultTreatMissingData {
		t.Fatalf("alarms block = %+v", m.Alarms)
	}
	if got := m.spec(nil, specOptions{}).WithDefaults().Alarms; got != s.WithDefaults().Alarms {
		t.Errorf("the model maps back to %+v, want %+v", got, s.WithDefaults().Alarms)
	}
	m.Alarms.Enabled = types.BoolNull()
	if !m.spec(nil, specOptions{}).Alarms.Enabled {
		t.Error("a present block without enabled does not enable the alarms")
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
