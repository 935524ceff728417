package provider

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
	"github.com/outboxkit/terraform-provider-outbox/internal/validation"
)

// Every limit of a Spec field, the pipeline's and the subscription's,
// reaches its attribute: its validator, and the allowed values in its
// description.
func TestLimitsReachTheirAttributes(t *testing.T) {
	t.Parallel()
	sch := (&PipelineResource{}).schema(context.Background())
	if n := checkLimitsReach(t, sch, specFieldPaths(), provision.Limit); n < 20 {
		t.Errorf("%d settings of the pipeline have a limit", n)
	}
	if n := checkLimitsReach(t, subscriptionSchema(), subscriptionFieldPaths(), subscription.Limit); n != 5 {
		t.Errorf("%d settings of the subscription have a limit, want its 5 whole numbers", n)
	}
	for _, s := range []schema.Schema{sch, subscriptionSchema()} {
		eachAttribute(s.Attributes, "", func(n string, a schema.Attribute) {
			if strings.Contains(a.GetMarkdownDescription(), limitMark) {
				t.Errorf("%s: %s in a description without a limit", n, limitMark)
			}
		})
	}
}

// checkLimitsReach checks that each Spec field in paths that has a limit
// has its validator and states the limit in its attribute's description;
// it returns how many have one.
func checkLimitsReach(t *testing.T, sch schema.Schema, paths map[string]path.Path, limitOf func(string) (validation.Limit, bool)) int {
	t.Helper()
	limited := 0
	for field, p := range paths {
		l, ok := limitOf(field)
		if !ok {
			continue
		}
		limited++
		a, diags := sch.AttributeAtPath(context.Background(), p)
		if diags.HasError() {
			t.Fatalf("%s: %v", p, diags)
		}
		desc := a.GetMarkdownDescription()
		switch l := l.(type) {
		case validation.Range, validation.Values:
			if !strings.Contains(desc, l.Describe()) {
				t.Errorf("%s: the description does not state %q: %q", dotted(p), l.Describe(), desc)
			}
		case validation.Choice:
			for _, c := range l {
				if !strings.Contains(desc, "`"+c+"`") {
					t.Errorf("%s: the description does not name %q: %q", dotted(p), c, desc)
				}
			}
		}
		if _, ok := limitValidatorOf(a); !ok {
			t.Errorf("%s has no validator of its limit", dotted(p))
		}
	}
	return limited
}

// limitValidatorOf is the validator of the limit of a, if it has one.
func limitValidatorOf(a schema.Attribute) (limitValidator, bool) {
	var vs []any
	switch a := a.(type) {
	case schema.Int64Attribute:
		for _, v := range a.Validators {
			vs = append(vs, v)
		}
	case schema.StringAttribute:
		for _, v := range a.Validators {
			vs = append(vs, v)
		}
	}
	for _, v := range vs {
		if lv, ok := v.(limitValidator); ok {
			return lv, true
		}
	}
	return limitValidator{}, false
}

func subscriptionSchema() schema.Schema {
	var sr resource.SchemaResponse
	NewSubscriptionResource().Schema(context.Background(), resource.SchemaRequest{}, &sr)
	return sr.Schema
}

// pipelineConfig is the configuration of outbox_pipeline whose only
// settings are name and, in their objects, values.
func pipelineConfig(t *testing.T, sch schema.Schema, values map[string]tftypes.Value) tfsdk.Config {
	t.Helper()
	ctx := context.Background()
	typ := sch.Type().TerraformType(ctx).(tftypes.Object)
	objects := map[string]map[string]tftypes.Value{}
	for p, v := range values {
		object, attribute, _ := strings.Cut(p, ".")
		if objects[object] == nil {
			objects[object] = map[string]tftypes.Value{}
		}
		objects[object][attribute] = v
	}
	top := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		top[name] = tftypes.NewValue(at, nil)
		if fields, ok := objects[name]; ok {
			ot := at.(tftypes.Object)
			vals := map[string]tftypes.Value{}
			for n, ft := range ot.AttributeTypes {
				vals[n] = tftypes.NewValue(ft, nil)
				if v, ok := fields[n]; ok {
					vals[n] = v
				}
			}
			top[name] = tftypes.NewValue(ot, vals)
		}
	}
	top["name"] = tftypes.NewValue(tftypes.String, "orders")
	return tfsdk.Config{Schema: sch, Raw: tftypes.NewValue(typ, top)}
}

// A value outside its limit is reported by the attribute's validator with
// the very diagnostic of the Spec's check, so that the framework, which
// drops a diagnostic it holds already, shows it once.
func TestLimitDiagnosticIsTheSpecCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := &PipelineResource{}
	sch := r.schema(ctx)
	config := pipelineConfig(t, sch, map[string]tftypes.Value{
		"relay.batch_size":           tftypes.NewValue(tftypes.Number, 20000),
		"relay.architecture":         tftypes.NewValue(tftypes.String, "sparc"),
		"reconciler.memory_size":     tftypes.NewValue(tftypes.Number, 64),
		"alarms.treat_missing_data":  tftypes.NewValue(tftypes.String, "ok"),
		"published.ttl_days":         tftypes.NewValue(tftypes.Number, -1),
		"reconciler.min_age_seconds": tftypes.NewValue(tftypes.Number, -5),
	})
	var vr resource.ValidateConfigResponse
	r.ValidateConfig(ctx, resource.ValidateConfigRequest{Config: config}, &vr)
	all := vr.Diagnostics
	for _, p := range []path.Path{
		path.Root("relay").AtName("batch_size"), path.Root("relay").AtName("architecture"), path.Root("reconciler").AtName("memory_size"),
		path.Root("alarms").AtName("treat_missing_data"), path.Root("published").AtName("ttl_days"), path.Root("reconciler").AtName("min_age_seconds"),
	} {
		own := runValidators(t, sch, config, p)
		if len(own) != 1 || !vr.Diagnostics.Contains(own[0]) {
			t.Errorf("%s: the validator reports %v; ValidateConfig %v", dotted(p), own, vr.Diagnostics)
		}
		all.Append(own...)
	}
	if len(all) != len(vr.Diagnostics) {
		t.Errorf("together, %d diagnostics; want the %d of ValidateConfig: %v", len(all), len(vr.Diagnostics), all)
	}
}

// runValidators runs the limit's validator of the attribute at p on config.
func runValidators(t *testing.T, sch schema.Schema, config tfsdk.Config, p path.Path) diag.Diagnostics {
	t.Helper()
	ctx := context.Background()
	a, diags := sch.AttributeAtPath(ctx, p)
	lv, ok := limitValidatorOf(a)
	if diags.HasError() || !ok {
		t.Fatalf("%s has no limit: %v", p, diags)
	}
	var v attr.Value
	diags.Append(config.GetAttribute(ctx, p, &v)...)
	switch v := v.(type) {
	case types.Int64:
		lv.check(p, v.ValueInt64(), &diags)
	case types.String:
		lv.check(p, v.ValueString(), &diags)
	default:
		t.Fatalf("%s is a %T", p, v)
	}
	return diags
}

// Every setting maps to its Spec field and back: a Spec of values other
// than the defaults, imported and mapped again, is the same Spec.
func TestSettingsMapBothWays(t *testing.T) {
	t.Parallel()
	s := provision.Spec{
		Name:  "orders",
		Table: provision.TableSpec{Existing: true, Name: "app", PartitionKey: "pk", SortKey: "sk", SortKeyPrefix: "EV#", TTLAttribute: "ttl", PendingIndexName: "pending", PendingShards: 4},
		Mapping: provision.MappingSpec{BatchSize: 50, MaximumBatchingWindowSeconds: 5, ParallelizationFactor: 2,
			MaximumRetryAttempts: ptrTo(int32(-1)), MaximumRecordAgeSeconds: ptrTo(int32(600)), BisectBatchOnFunctionError: ptrTo(false)},
		Relay:      provision.FunctionSpec{MemorySize: 512, Timeout: 30, ReservedConcurrency: ptrTo(int32(3)), LogRetentionDays: 30},
		Reconciler: provision.ReconcilerSpec{ScheduleExpression: "rate(10 minutes)", MinAge: 600e9, ScheduleTimezone: "Europe/Paris", FlexibleTimeWindowMinutes: 5, ScheduleGroup: "g"},
		Controls: provision.LambdaControls{TracingMode: "Active", LogFormat: "JSON", ApplicationLogLevel: "DEBUG", SystemLogLevel: "WARN",
			SubnetIDs: []string{"subnet-1"}, SecurityGroupIDs: []string{"sg-1"}},
		Alarms:       provision.AlarmsSpec{Enabled: true, SNSTopicARN: "arn:aws:sns:us-east-1:123456789012:alerts", EvaluationPeriods: 3},
		IAM:          provision.IAMSpec{Path: "/outbox/"},
		ForceDestroy: true,
	}
	s.Reconciler.Function = provision.FunctionSpec{MemorySize: 1024, Timeout: 120, LogRetentionDays: 7}
	m := modelFromSpec(s, provision.State{Added: provision.Added{TTL: true}}, nil)
	want := s.WithDefaults()
	got := m.spec(nil, specOptions{}).WithDefaults()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mapped back:\n%+v\nwant\n%+v", got, want)
	}
}

func ptrTo[T any](v T) *T { return &v }
