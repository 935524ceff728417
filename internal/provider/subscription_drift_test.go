package provider

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
)

// TestSubscriptionDriftTags: every component a subscription's drift may
// name is shown by a computed attribute, and every drift tag names one.
func TestSubscriptionDriftTags(t *testing.T) {
	t.Parallel()
	shown := map[string]bool{}
	var fields []reflect.StructField
	var collect func(reflect.Type)
	collect = func(t reflect.Type) {
		for f := range t.Fields() {
			if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
				collect(f.Type.Elem())
			}
			fields = append(fields, f)
		}
	}
	collect(reflect.TypeFor[SubscriptionResourceModel]())
	for _, f := range fields {
		for c := range strings.SplitSeq(f.Tag.Get("drift"), ",") {
			if c == "" {
				continue
			}
			if !slices.Contains(subscription.DriftComponents, c) {
				t.Errorf("%s: drift tag names %q, which is not a component of subscription.DriftComponents", f.Name, c)
			}
			shown[c] = true
		}
	}
	for _, c := range subscription.DriftComponents {
		if !shown[c] {
			t.Errorf("component %q is in no drift tag: its drift would not show in the plan", c)
		}
	}
}

func TestSubscriptionPlanRepairs(t *testing.T) {
	t.Parallel()
	known := func() SubscriptionResourceModel {
		return SubscriptionResourceModel{
			RuleARN: types.StringValue("rule"), QueueURL: types.StringValue("url"), QueueARN: types.StringValue("arn"),
			DeadLetterQueueURL: types.StringValue("dlq-url"), DeadLetterQueueARN: types.StringValue("dlq-arn"),
		}
	}
	unknown := func(m SubscriptionResourceModel) []string {
		var out []string
		for name, v := range map[string]types.String{
			"rule_arn": m.RuleARN, "queue_url": m.QueueURL, "queue_arn": m.QueueARN,
			"dead_letter_queue_url": m.DeadLetterQueueURL, "dead_letter_queue_arn": m.DeadLetterQueueARN,
		} {
			if v.IsUnknown() {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name  string
		drift awsops.Drift
		gone  func(*SubscriptionResourceModel)
		want  []string
	}{
		{name: "no drift"},
		{name: "target changed", drift: awsops.Drift{Changed: []awsops.Change{{Component: subscription.ComponentTarget}}}, want: []string{"rule_arn"}},
		{name: "queue missing", drift: awsops.Drift{Missing: []string{subscription.ComponentQueue}}, want: []string{"queue_arn", "queue_url"}},
		{
			name: "dead-letter queue gone", gone: func(m *SubscriptionResourceModel) { m.DeadLetterQueueURL = types.StringNull() },
			want: []string{"dead_letter_queue_url"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := known()
			if tc.gone != nil {
				tc.gone(&m)
			}
			m.planRepairs(tc.drift)
			if got := unknown(m); !slices.Equal(got, tc.want) {
				t.Errorf("unknown after planRepairs: %v, want %v", got, tc.want)
			}
		})
	}
}
