package control

import (
	"context"
	"net/http"
	"net/url"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambda/esm"
)

// MappingStatus is the poller state of a Lambda event source mapping.
type MappingStatus = esm.Status

// PauseMapping stops an event source mapping's poller from reading and
// invoking, without changing the mapping's state.
func (c *Client) PauseMapping(ctx context.Context, uuid string) (MappingStatus, error) {
	var out MappingStatus
	err := c.Do(ctx, http.MethodPost, "mappings/pause", map[string]string{"uuid": uuid}, &out)
	return out, err
}

// ResumeMapping undoes PauseMapping.
func (c *Client) ResumeMapping(ctx context.Context, uuid string) (MappingStatus, error) {
	var out MappingStatus
	err := c.Do(ctx, http.MethodPost, "mappings/resume", map[string]string{"uuid": uuid}, &out)
	return out, err
}

// MappingStatus returns a mapping's checkpoints, in-flight records and
// counters.
func (c *Client) MappingStatus(ctx context.Context, uuid string) (MappingStatus, error) {
	var out MappingStatus
	err := c.Do(ctx, http.MethodGet, "mappings/status?uuid="+url.QueryEscape(uuid), nil, &out)
	return out, err
}

// MappingStatuses returns the status of every mapping.
func (c *Client) MappingStatuses(ctx context.Context) ([]MappingStatus, error) {
	var out []MappingStatus
	err := c.Do(ctx, http.MethodGet, "mappings/status", nil, &out)
	return out, err
}
