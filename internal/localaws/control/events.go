package control

import (
	"context"
	"net/http"
)

// RuleMetrics are an EventBridge rule's delivery counters.
type RuleMetrics struct {
	MatchedEvents     int64 `json:"matchedEvents"`
	Invocations       int64 `json:"invocations"`
	FailedInvocations int64 `json:"failedInvocations"`
}

// EventsMetrics returns the delivery counters of EventBridge rules by rule
// ARN (GET /_localaws/events/metrics).
func (c *Client) EventsMetrics(ctx context.Context) (map[string]RuleMetrics, error) {
	var out struct {
		Rules map[string]RuleMetrics `json:"rules"`
	}
	err := c.Do(ctx, http.MethodGet, "events/metrics", nil, &out)
	return out.Rules, err
}
