// Package control is a client for the local AWS stack's control API, served
// under /_localaws/ beside the AWS APIs: fault injection, the resource
// inventory and the routes services add.
package control

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

// FaultRule is a fault injection rule (see awsapi.FaultRule).
type FaultRule = awsapi.FaultRule

// Client calls the control API of one stack.
type Client struct {
	endpoint string
	http     *http.Client
	region   string // the Region every call names (?region=), "" for the default
}

// New returns a client for the stack at endpoint (http://127.0.0.1:4566).
// A nil httpClient uses http.DefaultClient.
func New(endpoint string, httpClient *http.Client) *Client {
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	return &Client{endpoint: strings.TrimRight(endpoint, "/"), http: httpClient}
}

// InRegion returns a client whose calls act on region: each names it in
// the query (?region=), as the routes that act on one Region's resources
// (schedules, mappings, Lambda functions) read it. The default Region is
// the stack's first.
func (c *Client) InRegion(region string) *Client {
	in := *c
	in.region = region
	return &in
}

// Error is a control API error response.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("local AWS control API: %d: %s", e.Status, e.Message)
}

// Do calls a control route. path is relative to /_localaws/ ("lambda/kill").
// in, when not nil, is sent as JSON; out, when not nil, receives the JSON
// response.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encoding control request: %w", err)
		}
		body = bytes.NewReader(b)
	}
	url := c.endpoint + awsapi.ControlPrefix + strings.TrimPrefix(path, "/")
	if c.region != "" {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		url += sep + "region=" + neturl.QueryEscape(c.region)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("calling %s %s: %w", method, url, err)
	}
	defer func() { _ = resp.Body.Close() }() // the body is read in full; a close error changes nothing
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("reading %s %s: %w", method, url, err)
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(b))
		}
		return &Error{Status: resp.StatusCode, Message: e.Error}
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("decoding %s %s: %w", method, url, err)
		}
	}
	return nil
}

// Health checks the stack is up.
func (c *Client) Health(ctx context.Context) error {
	return c.Do(ctx, http.MethodGet, "health", nil, nil)
}

// WaitReady polls Health until it succeeds or ctx is done.
func (c *Client) WaitReady(ctx context.Context) error {
	for {
		err := c.Health(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for local AWS stack: %w (last error: %w)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// AddFault adds a fault injection rule and returns it with its id.
func (c *Client) AddFault(ctx context.Context, rule FaultRule) (FaultRule, error) {
	var out FaultRule
	err := c.Do(ctx, http.MethodPost, "faults", rule, &out)
	return out, err
}

// Faults lists the active fault rules.
func (c *Client) Faults(ctx context.Context) ([]FaultRule, error) {
	var out []FaultRule
	err := c.Do(ctx, http.MethodGet, "faults", nil, &out)
	return out, err
}

// RemoveFault removes one rule.
func (c *Client) RemoveFault(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodDelete, "faults/"+id, nil, nil)
}

// ClearFaults removes every rule.
func (c *Client) ClearFaults(ctx context.Context) error {
	return c.Do(ctx, http.MethodDelete, "faults", nil, nil)
}

// Resources returns the inventory: the ARNs or names each service holds,
// by service name.
func (c *Client) Resources(ctx context.Context) (map[string][]string, error) {
	var out map[string][]string
	err := c.Do(ctx, http.MethodGet, "resources", nil, &out)
	return out, err
}
