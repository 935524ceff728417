package reconcile_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
)

// A run's metrics carry the backlog it found and the events it published
// per second of the run, which the run's report repeats.
func TestRunReportsBacklogAndPublishRate(t *testing.T) {
	t.Parallel()
	table, fake, _ := setup(t, 3, 50)
	rec := newReconciler(table, fake, 7)
	// The run reads the clock first when it starts; every later reading
	// is 10 seconds on.
	var mu sync.Mutex
	started := false
	rec.Now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		if !started {
			started = true
			return now
		}
		return now.Add(10 * time.Second)
	}
	m := metrics.New()
	rep := rec.Run(context.Background(), 5*time.Minute, m)
	if rep.Found != 50 || rep.Published != 50 || rep.PublishRate != 5 {
		t.Errorf("report: found %d, published %d, publish rate %v; want 50, 50 and 5 events a second", rep.Found, rep.Published, rep.PublishRate)
	}
	if got := m.Values(metrics.Backlog); !slices.Equal(got, []float64{50}) {
		t.Errorf("Backlog = %v, want [50]", got)
	}
	if got := m.Values(metrics.PublishRate); !slices.Equal(got, []float64{5}) {
		t.Errorf("PublishRate = %v, want [5]", got)
	}
	// An idle run publishes nothing: a rate of 0 and a backlog of 0.
	m = metrics.New()
	started = false
	rep = rec.Run(context.Background(), 5*time.Minute, m)
	if rep.Found != 0 || rep.PublishRate != 0 || !slices.Equal(m.Values(metrics.Backlog), []float64{0}) || !slices.Equal(m.Values(metrics.PublishRate), []float64{0}) {
		t.Errorf("an idle run reports %+v, Backlog %v, PublishRate %v", rep, m.Values(metrics.Backlog), m.Values(metrics.PublishRate))
	}
}
