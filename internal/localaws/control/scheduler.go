package control

import (
	"context"
	"net/http"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/scheduler"
)

// FireResult is the outcome of the first attempt of a fired schedule.
type FireResult = scheduler.FireResult

// ScheduleMetrics are an EventBridge Scheduler schedule's counters:
// invocation attempts, failed attempts, dead-letter deliveries and
// failures, and occurrences dropped with no dead-letter queue.
type ScheduleMetrics = scheduler.Metrics

// FireSchedule fires a schedule now (POST /_localaws/schedules/fire). An
// empty group is the default group. It returns once the first attempt is
// made, authorised as the schedule's execution role.
func (c *Client) FireSchedule(ctx context.Context, group, name string) (FireResult, error) {
	var out FireResult
	err := c.Do(ctx, http.MethodPost, "schedules/fire", map[string]string{"name": name, "group": group}, &out)
	return out, err
}

// SchedulerMetrics returns the counters of schedules by schedule ARN
// (GET /_localaws/schedules/metrics).
func (c *Client) SchedulerMetrics(ctx context.Context) (map[string]ScheduleMetrics, error) {
	var out struct {
		Schedules map[string]ScheduleMetrics `json:"schedules"`
	}
	err := c.Do(ctx, http.MethodGet, "schedules/metrics", nil, &out)
	return out.Schedules, err
}
