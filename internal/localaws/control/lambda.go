package control

import (
	"context"
	"net/http"
	"net/url"
)

// LambdaInstances counts the processes of a function.
type LambdaInstances struct {
	// Live processes, Busy ones reserved for an invocation, Running ones
	// whose runtime has received its invocation, Started since the function
	// was created.
	Live    int `json:"live"`
	Busy    int `json:"busy"`
	Running int `json:"running"`
	Started int `json:"started"`
}

// KillLambda kills a process of a function in the middle of its current
// invocation, or of its next one when none is running; that invocation
// fails with Runtime.ExitError. killed reports an immediate kill.
func (c *Client) KillLambda(ctx context.Context, function string) (killed bool, err error) {
	var out struct {
		Killed bool `json:"killed"`
	}
	err = c.Do(ctx, http.MethodPost, "lambda/kill", map[string]string{"function": function}, &out)
	return out.Killed, err
}

// StopLambda stops every process of a function, so its next invocation
// starts cold. It returns how many were stopped.
func (c *Client) StopLambda(ctx context.Context, function string) (int, error) {
	var out struct {
		Stopped int `json:"stopped"`
	}
	err := c.Do(ctx, http.MethodPost, "lambda/stop", map[string]string{"function": function}, &out)
	return out.Stopped, err
}

// LambdaInstances returns the process counts of a function.
func (c *Client) LambdaInstances(ctx context.Context, function string) (LambdaInstances, error) {
	var out LambdaInstances
	err := c.Do(ctx, http.MethodGet, "lambda/instances/"+url.PathEscape(function), nil, &out)
	return out, err
}
