package control

import (
	"context"
	"net/http"
)

// Regions are the Regions a stack serves (those used so far) and those
// taken down.
type Regions struct {
	Default string   `json:"default"`
	Regions []string `json:"regions"`
	Down    []string `json:"down"`
}

// Regions lists the Regions the stack serves.
func (c *Client) Regions(ctx context.Context) (Regions, error) {
	var out Regions
	err := c.Do(ctx, http.MethodGet, "regions", nil, &out)
	return out, err
}

// RegionDown takes a Region down as a network partition would: its
// endpoints drop every connection, and global tables' replication to and
// from it stops, its changes kept in order.
func (c *Client) RegionDown(ctx context.Context, region string) error {
	return c.Do(ctx, http.MethodPost, "regions/down", map[string]string{"region": region}, nil)
}

// RegionUp brings a Region back: its endpoints answer again and
// replication resumes where it stopped.
func (c *Client) RegionUp(ctx context.Context, region string) error {
	return c.Do(ctx, http.MethodPost, "regions/up", map[string]string{"region": region}, nil)
}

// Replication is the state of global tables' replication: the lag of each
// write and the writes waiting, by "from>to" Regions.
type Replication struct {
	Lag     string         `json:"lag"`
	Pending map[string]int `json:"pending"`
}

// Replication returns the state of global tables' replication.
func (c *Client) Replication(ctx context.Context) (Replication, error) {
	var out Replication
	err := c.Do(ctx, http.MethodGet, "dynamodb/replication", nil, &out)
	return out, err
}

// SetReplicationLag changes how long global tables' writes take to reach
// the other Regions (a Go duration, "250ms").
func (c *Client) SetReplicationLag(ctx context.Context, lag string) (Replication, error) {
	var out Replication
	err := c.Do(ctx, http.MethodPost, "dynamodb/replication", map[string]string{"lag": lag}, &out)
	return out, err
}
