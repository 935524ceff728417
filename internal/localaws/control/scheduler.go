package control

import (
	"context"
	"net/http"
	"time"
)

// FireResult is the outcome of the first attempt of a fired schedule.
type FireResult struct {
	ScheduleArn   string    `json:"scheduleArn"`
	ExecutionID   string    `json:"executionId"`
	ScheduledTime time.Time `json:"scheduledTime"`
	// Invoked is true when the target accepted the invocation; otherwise
	// ErrorCode and ErrorMessage say why, and retries and the dead-letter
	// queue follow in the background.
	Invoked      bool   `json:"invoked"`
	ErrorCode    string `json:"errorCode,omitempty"`
	ErrorMessage string `json:"errorMessage,omitempty"`
}

// ScheduleMetrics are an EventBridge Scheduler schedule's counters:
// invocation attempts, failed attempts, dead-letter deliveries and
// failures, and occurrences dropped with no dead-letter queue.
type ScheduleMetrics struct {
	Invocations          int64 `json:"invocations"`
	FailedInvocations    int64 `json:"failedInvocations"`
	DeadLetterDeliveries int64 `json:"deadLetterDeliveries"`
	DeadLetterFailures   int64 `json:"deadLetterFailures"`
	Dropped              int64 `json:"dropped"`
}

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
