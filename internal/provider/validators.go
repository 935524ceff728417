package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

// scheduleExpressionValidator checks EventBridge Scheduler's grammar of
// rate(), cron() and at() expressions at plan time.
type scheduleExpressionValidator struct{}

var _ validator.String = scheduleExpressionValidator{}

func (scheduleExpressionValidator) Description(context.Context) string {
	return "an EventBridge Scheduler expression: rate(), cron() with six fields, or at()"
}

func (v scheduleExpressionValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (scheduleExpressionValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() || req.ConfigValue.ValueString() == "" {
		return
	}
	if problem, fix := provision.CheckScheduleExpression(req.ConfigValue.ValueString()); problem != "" {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid schedule expression", fmt.Sprintf("%s %s: %s.", dotted(req.Path), problem, fix))
	}
}

// logRetentionDays are the retentions CloudWatch Logs accepts.
func logRetentionDays() []int64 {
	var out []int64
	for _, d := range provision.LogRetentionDaysAllowed() {
		out = append(out, int64(d))
	}
	return out
}
