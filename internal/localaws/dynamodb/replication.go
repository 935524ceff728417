package dynamodb

import (
	"sync"
	"time"
)

// DefaultReplicationLag is how long a global table's write takes to reach
// the other replicas when nothing else is said. AWS states no figure
// ("usually within a second", no SLA: "Global tables: how it works",
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/V2globaltables_HowItWorks.html).
const DefaultReplicationLag = 100 * time.Millisecond

// Replication carries global tables' changes between the DynamoDB services
// of the Regions of a stack, in order from each Region to each other one,
// each after the replication lag. A Region that is down neither sends nor
// receives: its changes wait, in order, until it is up again.
type Replication struct {
	open func(region string) (*Service, error)

	mu     sync.Mutex
	lag    time.Duration
	down   map[string]bool
	queues map[route][]task
	wake   chan struct{}
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
}

// route is a direction of replication.
type route struct{ from, to string }

// task is one change to apply in a Region once due: at its time, plus
// the lag (the current one) when lagged.
type task struct {
	at     time.Time
	lagged bool
	apply  func(dst *Service)
}

func (t task) due(lag time.Duration) time.Time {
	if t.lagged {
		return t.at.Add(lag)
	}
	return t.at
}

// NewReplication returns the replication of a stack whose Regions'
// DynamoDB services open returns (starting them when needed); lag <= 0 is
// DefaultReplicationLag. Close stops it.
func NewReplication(lag time.Duration, open func(region string) (*Service, error)) *Replication {
	if lag <= 0 {
		lag = DefaultReplicationLag
	}
	r := &Replication{open: open, lag: lag, down: map[string]bool{}, queues: map[route][]task{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go r.run()
	return r
}

// Lag is the current replication lag.
func (r *Replication) Lag() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lag
}

// SetLag changes the lag, of the changes waiting as well as of those sent
// from now on.
func (r *Replication) SetLag(d time.Duration) {
	r.mu.Lock()
	r.lag = d
	r.mu.Unlock()
	r.poke()
}

// SetDown stops (down) or resumes replication to and from a Region.
func (r *Replication) SetDown(region string, down bool) {
	r.mu.Lock()
	if down {
		r.down[region] = true
	} else {
		delete(r.down, region)
	}
	r.mu.Unlock()
	r.poke()
}

// Down reports whether a Region is down.
func (r *Replication) Down(region string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.down[region]
}

// Pending counts the changes waiting to be applied, by "from>to" route.
func (r *Replication) Pending() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for rt, q := range r.queues {
		if len(q) > 0 {
			out[rt.from+">"+rt.to] = len(q)
		}
	}
	return out
}

// Close stops delivering; what is pending is dropped with the stack.
func (r *Replication) Close() {
	r.once.Do(func() {
		close(r.stop)
		<-r.done
	})
}

// send queues apply for Region to, after the lag when lagged.
func (r *Replication) send(from, to string, lagged bool, apply func(dst *Service)) {
	r.mu.Lock()
	rt := route{from, to}
	r.queues[rt] = append(r.queues[rt], task{at: time.Now(), lagged: lagged, apply: apply})
	r.mu.Unlock()
	r.poke()
}

func (r *Replication) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// next takes the tasks due now at the head of each route whose Regions are
// up, and says how long to wait for the next one otherwise.
func (r *Replication) next() (map[string][]task, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	wait := time.Hour
	due := map[string][]task{}
	for rt, q := range r.queues {
		if r.down[rt.from] || r.down[rt.to] {
			continue
		}
		n := 0
		for n < len(q) && !q[n].due(r.lag).After(now) {
			n++
		}
		due[rt.to] = append(due[rt.to], q[:n]...)
		r.queues[rt] = q[n:]
		if n < len(q) {
			wait = min(wait, q[n].due(r.lag).Sub(now))
		}
	}
	return due, wait
}

func (r *Replication) run() {
	defer close(r.done)
	for {
		due, wait := r.next()
		for region, tasks := range due {
			if len(tasks) == 0 {
				continue
			}
			dst, err := r.open(region)
			if err != nil || dst == nil {
				continue
			}
			for _, t := range tasks {
				t.apply(dst)
			}
		}
		timer := time.NewTimer(wait)
		select {
		case <-r.stop:
			timer.Stop()
			return
		case <-r.wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}
