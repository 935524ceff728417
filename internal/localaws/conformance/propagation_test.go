package conformance_test

import (
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
)

// TestIAMPropagation: while a new role and its policies propagate,
// CreateFunction and CreateEventSourceMapping fail with the messages the
// AWS provider retries; retried with a bound, the pipeline delivers.
func TestIAMPropagation(t *testing.T) {
	t.Parallel()
	const delay = 2 * time.Second
	e := newEnv(t, func(o *localaws.Options) { o.IAMPropagationDelay = delay })
	start := time.Now()
	f := newFixture(e, hostArch())
	if took := time.Since(start); took < delay {
		t.Errorf("the function was created %s after its role, before IAM propagated (%s)", took, delay)
	}
	f.mapping(nil)
	f.put(f.table, "order#1", "OUTBOX#1", nil)
	f.rec.waitDelivered("INSERT order#1/OUTBOX#1")
	f.rec.drain()
	wantDelivered(t, f.rec, map[string]int{"INSERT order#1/OUTBOX#1": 1})
}
