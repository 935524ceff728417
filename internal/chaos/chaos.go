// Package chaos proves the outbox under faults and load: a pipeline and a
// subscription applied through Terraform on the local AWS stack, writers
// committing events while the stack fails the target's publish calls and
// entries (PutEvents, PublishBatch), throttles the relay's writes, kills
// relay processes mid-invocation, holds the stream mapping past the
// stream's retention, rolls the stream's shards over, breaks the
// environment (the relay's permission, the bus or topic) and, while events
// are pending, changes the record contract
// (table.sort_key_prefix, a lower pending_index.shards) with a second
// apply; then every committed event must reach the consumer, none may be
// stranded, and every poison event must be set aside as FAILED.
//
// The test (TestChaos) runs with TF_ACC=1: 2,000 events by default (make
// test), 50,000 with make chaos. CHAOS_EVENTS and CHAOS_WRITERS change the
// count and the number of writers; CHAOS_TARGET the kind of target the
// pipeline publishes to: eventbridge (the default: the account's bus, a
// rule to the consumer's queue), sns-fifo (an SNS FIFO topic, the
// consumer's SQS FIFO queue subscribed with raw delivery) or
// sns-fifo-ordered (the same, the pipeline in ordered mode, the writers
// writing ordered events on 1,000 keys, 10 of them hot, some transactions
// with three events of one key). It ends with one line:
//
//	chaos: target=T written=N delivered=N lost=0 duplicates=D dup_pct=X kills=K stranded=0 failed_poison=P dlq=Q drain_s=S
//
// On a FIFO target the broker's deduplication (five minutes, by
// MessageDeduplicationId, the event id) absorbs the relay's republishing,
// so the duplicates that reach the consumer must stay within
// MaxFIFODuplicateShare of the events. The ordered run's line adds
// " inversions=0 gaps=0" (KeyOrder): no event first received after a later
// one of its key, and no sequence missing below a key's highest received.
//
// TestConsumeChaos proves the consumer kit (consumer/) the same way: events
// published as the relay publishes them go through a subscription
// (subscription.Provisioner, the code outbox_subscription runs) to a
// consumer function built with the kit (internal/chaos/consumer), run by
// the local stack's Lambda as real processes, while a share of the messages
// is delivered again (events published twice, messages sent twice, deletes
// that fail so that the visibility timeout expires) and processes are
// killed mid-invocation; the test takes the part of Lambda's SQS event
// source mapping, which the local stack does not provide. Every event's
// effect, a counter in a ledger table committed in the completing
// transaction, must have happened exactly once, and every id reused with
// another payload must be detected and dead-lettered. 2,000 events by
// default (make test), 50,000 with make chaos (CONSUME_EVENTS, CONSUME_KILLS).
// It ends with one line:
//
//	consume: events=N effects_once=N redelivered=R kills=K takeovers=T mismatches_injected=M mismatches_detected=M lost=0 wrong=0 unfinished=0 dlq=Q dlq_applied=A run_s=S
//
// TestChaosClaimCheck is TestChaos with the pipeline's claim check on:
// events of 2 B to 10 MiB (ClaimBands), S3 faults, transactions that never
// commit, a consumer that applies every event with the consumer kit (which
// fetches and verifies claim-checked data), then the claim sweep and the
// published items' TTL. 500 events by default (make test), 10,000 with
// make chaos (CLAIM_EVENTS). It ends with TestChaos's line and
// ClaimResult.Line:
//
//	claimcheck: events=N delivered=N verified=N lost=0 claimed=C bytes=B ... orphans_written=O orphans_removed=O orphans_left=0 objects_kept=C untagged=0 left_after_ttl=0 ...
//
// TestChaosRegions runs a multi-Region outbox: a global table (its
// replicas added with UpdateTable), a multi-Region pipeline in ordered
// mode on an SNS FIFO topic applied through provision in each of
// REGIONS_COUNT Regions (2 by default, 3 with make chaos) and a consumer
// (a FIFO queue) subscribed in each, a writer in every Region (half the
// events ordered on accounts only that Region writes, the rest unordered,
// a quarter of them on aggregates the first two Regions both write),
// every Region's reconciler fired every two seconds, under TestChaos's
// faults in every Region: the topic's publish faults and DynamoDB's
// throttling (the stack's fault rules are shared by its Regions), relay
// and reconciler processes killed mid-invocation, and every mapping held
// past the stream's retention once. Counted by event id across the
// Regions' consumers, nothing may be lost, stranded or received twice
// (the FIFO topic drops a Region's own republishing after a kill), no
// account's events received out of order or with a gap, every fault must
// fire, and no Region may be taken over. 300 events by default (make
// test), 3,000 with make chaos (REGIONS_EVENTS).
// TestChaosRegionsTakeover holds the last Region's relay and takes the
// Region down mid-run, faults and all, until its successor claims it,
// then brings it back: there must be a takeover and a hand-back, and at
// most the events written in that window received twice (window=). Both
// end with RegionsResult.Line:
//
//	chaos-regions: regions=2 written=N delivered=N lost=0 stranded=0 duplicates=D window=W takeovers=T handbacks=H inversions=0 gaps=0 kills=K drain_s=S
package chaos

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Tally records what the writers committed and what the consumer received.
// It is safe for concurrent use.
type Tally struct {
	mu          sync.Mutex
	written     map[string]struct{}
	poison      map[string]struct{}
	received    map[string]int
	firstAt     map[string]time.Time
	repeatsAt   map[string][]time.Time
	receptions  int
	lastReceive time.Time
}

// NewTally returns an empty Tally.
func NewTally() *Tally {
	return &Tally{
		written: map[string]struct{}{}, poison: map[string]struct{}{}, received: map[string]int{},
		firstAt: map[string]time.Time{}, repeatsAt: map[string][]time.Time{},
	}
}

// Written records a committed (non-poison) event.
func (t *Tally) Written(id string) {
	t.mu.Lock()
	t.written[id] = struct{}{}
	t.mu.Unlock()
}

// Poison records a committed poison event.
func (t *Tally) Poison(id string) {
	t.mu.Lock()
	t.poison[id] = struct{}{}
	t.mu.Unlock()
}

// Received records one reception of an event at time at.
func (t *Tally) Received(id string, at time.Time) {
	t.mu.Lock()
	t.received[id]++
	if t.received[id] == 1 {
		t.firstAt[id] = at
	} else {
		t.repeatsAt[id] = append(t.repeatsAt[id], at)
	}
	t.receptions++
	if at.After(t.lastReceive) {
		t.lastReceive = at
	}
	t.mu.Unlock()
}

// LastReceive is the time of the latest reception (zero before the first).
func (t *Tally) LastReceive() time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastReceive
}

// Progress returns how many events were written and how many of them were
// received at least once.
func (t *Tally) Progress() (written, delivered int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for id := range t.written {
		if t.received[id] > 0 {
			delivered++
		}
	}
	return len(t.written), delivered
}

// Duplicate is an event received more than once: when first, and when
// again.
type Duplicate struct {
	ID      string
	First   time.Time
	Repeats []time.Time
}

// Duplicates returns up to n of the events received more than once, by id.
func (t *Tally) Duplicates(n int) []Duplicate {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Duplicate, 0, len(t.repeatsAt))
	for id, at := range t.repeatsAt {
		out = append(out, Duplicate{ID: id, First: t.firstAt[id], Repeats: append([]time.Time(nil), at...)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// PoisonIDs returns the poison events' ids.
func (t *Tally) PoisonIDs() map[string]struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]struct{}, len(t.poison))
	for id := range t.poison {
		out[id] = struct{}{}
	}
	return out
}

// Lost returns up to n ids of written events never received, sorted.
func (t *Tally) Lost(n int) []string {
	t.mu.Lock()
	var out []string
	for id := range t.written {
		if t.received[id] == 0 {
			out = append(out, id)
		}
	}
	t.mu.Unlock()
	sort.Strings(out)
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// Result fills in the counts the tally knows: written, delivered, lost,
// duplicates, poison injected and delivered, and receptions of ids that
// were never written.
func (t *Tally) Result() Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := Result{Written: len(t.written), PoisonInjected: len(t.poison)}
	for id, n := range t.received {
		r.Duplicates += n - 1
		_, written := t.written[id]
		_, poison := t.poison[id]
		switch {
		case written:
			r.Delivered++
		case poison:
			r.PoisonDelivered++
		default:
			r.Unknown++
		}
	}
	r.Lost = r.Written - r.Delivered
	return r
}

// Result is the outcome of a chaos run.
type Result struct {
	// Written counts committed non-poison events; Delivered those of them
	// received at least once; Lost the rest.
	Written, Delivered, Lost int
	// Duplicates counts receptions beyond the first of each event.
	Duplicates int
	// PoisonInjected counts the poison events written; FailedPoison the
	// items in status FAILED; PoisonDelivered the poison events received.
	PoisonInjected, FailedPoison, PoisonDelivered int
	// Unknown counts received ids that were never written.
	Unknown int
	// Stranded counts valid events still PENDING or FAILED when the run
	// ends: events that nothing would deliver without a person's help.
	Stranded int
	// Kills counts processes killed in the middle of an invocation (relay
	// and reconciler); DuplicateBound is the most duplicates those kills
	// can explain (one batch's worth of events per kill, capped by the
	// run's own limit).
	Kills, DuplicateBound int
	// DLQ counts the messages in the relay's dead-letter queue.
	DLQ int
	// Drain is the time from the faults clearing to quiescence.
	Drain time.Duration
	// Target names the kind of target the run published to; FIFO says
	// whether it deduplicates, and so whether MaxFIFODuplicateShare holds.
	Target string
	FIFO   bool
	// Ordered says the run wrote ordered events through a pipeline in
	// ordered mode, and so whether the order's counts (KeyOrder) are part of
	// the line and of the check: Inversions, Gaps and Unsequenced.
	Ordered                       bool
	Inversions, Gaps, Unsequenced int
}

// MaxFIFODuplicateShare is the most duplicates, as a share of the events
// written, that may reach the consumer of a FIFO target: 0.5 %.
const MaxFIFODuplicateShare = 0.005

// DuplicatePercent is the duplicates as a percentage of the events
// written.
func (r Result) DuplicatePercent() float64 {
	if r.Written == 0 {
		return 0
	}
	return 100 * float64(r.Duplicates) / float64(r.Written)
}

// Line is the one-line summary the suite ends with.
func (r Result) Line() string {
	target := ""
	if r.Target != "" {
		target = "target=" + r.Target + " "
	}
	line := fmt.Sprintf("chaos: %swritten=%d delivered=%d lost=%d duplicates=%d dup_pct=%.2f kills=%d stranded=%d failed_poison=%d dlq=%d drain_s=%.1f",
		target, r.Written, r.Delivered, r.Lost, r.Duplicates, r.DuplicatePercent(), r.Kills, r.Stranded, r.FailedPoison, r.DLQ, r.Drain.Seconds())
	if r.Ordered {
		line += fmt.Sprintf(" inversions=%d gaps=%d", r.Inversions, r.Gaps)
	}
	return line
}

// Check returns every violated guarantee: an event lost or stranded, a
// poison event not set aside or delivered, an event received that was
// never written, more duplicates than the kills explain or, on a FIFO
// target, than MaxFIFODuplicateShare of the events, on an ordered run an
// event received out of its key's order, a gap or an event without a
// sequence (orderProblems), or nothing written at all.
func (r Result) Check() error {
	var v violations
	v.add(r.Written == 0, "no event was written")
	v.add(r.Lost != 0, "%d of %d written events were never delivered", r.Lost, r.Written)
	v.add(r.PoisonInjected == 0, "no poison event was injected")
	v.add(r.FailedPoison != r.PoisonInjected, "%d items are FAILED, want the %d poison events", r.FailedPoison, r.PoisonInjected)
	v.add(r.PoisonDelivered != 0, "%d poison events were delivered", r.PoisonDelivered)
	v.add(r.Unknown != 0, "%d events were delivered that were never written", r.Unknown)
	v.add(r.Stranded != 0, "%d valid events are still PENDING or FAILED", r.Stranded)
	v.add(r.Duplicates > r.DuplicateBound, "%d duplicates, more than the %d that %d kills explain", r.Duplicates, r.DuplicateBound, r.Kills)
	r.orderProblems(&v)
	v.add(r.FIFO && float64(r.Duplicates) > MaxFIFODuplicateShare*float64(r.Written),
		"%d duplicates reached the FIFO consumer, %.2f %% of the %d events, more than the %.1f %% the broker's deduplication allows",
		r.Duplicates, r.DuplicatePercent(), r.Written, 100*MaxFIFODuplicateShare)
	return errors.Join(v...)
}

// violations collects the guarantees a run broke.
type violations []error

// add records the violation that format describes when broken holds.
func (v *violations) add(broken bool, format string, args ...any) {
	if broken {
		*v = append(*v, fmt.Errorf(format, args...))
	}
}
