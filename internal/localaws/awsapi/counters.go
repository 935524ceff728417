package awsapi

import (
	"maps"
	"sync"
)

// Counters are a service's delivery counters, an M (a struct of counts,
// named after the service's CloudWatch metrics) by resource ARN, safe for
// concurrent use. The zero value is ready.
type Counters[M any] struct {
	mu sync.Mutex
	m  map[string]M
}

// Count applies fn to the counters of arn, created at zero when absent.
func (c *Counters[M]) Count(arn string, fn func(m *M)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]M{}
	}
	m := c.m[arn]
	fn(&m)
	c.m[arn] = m
}

// Snapshot returns a copy of the counters by ARN.
func (c *Counters[M]) Snapshot() map[string]M {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		return map[string]M{}
	}
	return maps.Clone(c.m)
}
