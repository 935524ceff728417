package awsapi

import "sync"

// Counters are a service's delivery counters, an M (a struct of counts,
// named after the service's CloudWatch metrics) by resource ARN, safe for
// concurrent use. The zero value is ready.
type Counters[M any] struct {
	mu sync.Mutex
	m  map[string]*M
}

// Count applies fn to the counters of arn, created at zero when absent.
func (c *Counters[M]) Count(arn string, fn func(m *M)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*M{}
	}
	m := c.m[arn]
	if m == nil {
		m = new(M)
		c.m[arn] = m
	}
	fn(m)
}

// Snapshot returns a copy of the counters by ARN.
func (c *Counters[M]) Snapshot() map[string]M {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]M, len(c.m))
	for k, v := range c.m {
		out[k] = *v
	}
	return out
}
