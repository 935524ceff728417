package perfreport

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/durfmt"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

// recoveryExtrapolations are the backlogs the drain time is extrapolated
// to.
var recoveryExtrapolations = []int{1_000_000, 10_000_000}

// Unordered and Ordered are the runs of each mode (nil when not measured).
func (r *Recovery) Unordered() *RecoveryRun { return r.find(false) }
func (r *Recovery) Ordered() *RecoveryRun   { return r.find(true) }

func (r *Recovery) find(ordered bool) *RecoveryRun {
	for i := range r.Runs {
		if r.Runs[i].Ordered == ordered {
			return &r.Runs[i]
		}
	}
	return nil
}

// RecoveryGoal is one goal and whether the measurement meets it.
type RecoveryGoal struct {
	Goal, Measured string
	Met            bool
}

// Goals are the recovery goals against the measured figures.
func (r *Recovery) Goals() []RecoveryGoal {
	var out []RecoveryGoal
	un, or := r.Unordered(), r.Ordered()
	if un != nil {
		rate := un.EventsPerSecond()
		out = append(out, RecoveryGoal{fmt.Sprintf("unordered: at least %s events/s", count(GoalUnorderedEventsPerSec)), fmt.Sprintf("%.0f events/s", rate), rate >= GoalUnorderedEventsPerSec})
	}
	if un != nil && or != nil && un.EventsPerSecond() > 0 {
		share := or.EventsPerSecond() / un.EventsPerSecond()
		out = append(out, RecoveryGoal{fmt.Sprintf("ordered: at least %.0f %% of the unordered rate", 100*GoalOrderedShare), fmt.Sprintf("%.0f %%", 100*share), share >= GoalOrderedShare})
	}
	if or != nil {
		// Only ordered mode holds a key's events back; unordered, a hot
		// key drains at its share of the whole rate.
		out = append(out, RecoveryGoal{fmt.Sprintf("ordered: a hot key at least %d events/s", GoalHotKeyEventsPerSec), fmt.Sprintf("%.0f events/s (slowest hot key)", or.HotKeyRate), or.HotKeyRate >= GoalHotKeyEventsPerSec})
	}
	for _, run := range r.Runs {
		out = append(out, RecoveryGoal{fmt.Sprintf("%s: first event within one reconciler interval (%s)", run.Name, durfmt.Short(r.Options.Interval)), sec(run.First), run.Received > 0 && run.First <= r.Options.Interval})
	}
	return out
}

// writeRecovery writes the recovery section, when measured.
func (r Report) writeRecovery(p func(string, ...any)) {
	rec := r.Recovery
	if rec == nil || len(rec.Runs) == 0 {
		return
	}
	o := rec.Options
	p("## Recovery from an outage longer than the stream's retention")
	p("")
	p("A pipeline whose relay and reconciler were down for longer than the stream keeps its records (up to 24 hours on AWS: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Streams.html) finds its backlog in the pending index only: the stream records are gone, and only the reconciler can publish it. The measurement builds that state on the local stack as AWS would: a pipeline is deployed (`provision.Provisioner.Create`, defaults, reconciler minimum age 1 s), its stream mapping is disabled (`UpdateEventSourceMapping`) and its schedule disabled (`UpdateSchedule`); %s events are committed over %s ordering keys, %d of them hot holding %.0f %% of the events, each key's events spread over the outage as a service writes them (event i of a key of n events at (i+0.5)/n of it, so that the oldest events of the backlog are every key's oldest); (on the ordered pipeline each key is the events' `OrderingKey`; on the unordered one the same split names the events' aggregates, which the relay does not order); then the stream's retention passes (the stack's stream keeps records %s here instead of 24 hours) until the stream holds no record. The outage ends when the mapping is enabled again and the reconciler's schedule fires (the stack's `schedules/fire`, the call EventBridge Scheduler makes, as the schedule's role), then again every %s, the reconciler's interval; every call is slowed by the [AWS latency model](#the-aws-latency-model). Times run from the end of the outage to the receipt of the events by a queue subscribed to the target (8 consumers). Calls are the pipeline's DynamoDB and publish requests as the stack received them; invocations are the schedule's fires and the mapping's invocations.",
		count(rec.Runs[0].Events), count(o.Keys), o.HotKeys, 100*o.HotShare, durfmt.Short(o.Retention), durfmt.Short(o.Interval))
	p("")
	p("Each pipeline's reconciler publishes at most `reconciler.max_events_per_second` events a second, set here to a share of the target's quota:")
	p("")
	for _, run := range rec.Runs {
		p("- %s: %s events a second, %s.", run.Name, count(int(run.Rate)), run.Quota)
	}
	p("")
	p("| target | events | first event | last event | events/s | slowest hot key, events/s | lost | duplicates | reconciler runs | relay invocations |")
	p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, run := range rec.Runs {
		p("| %s | %s | %s | %s | %.0f | %.0f | %d | %d | %d | %d |", run.Name, count(run.Events), sec(run.First), sec(run.Last), run.EventsPerSecond(), run.HotKeyRate, run.Lost, run.Duplicates, run.Reconciles, run.RelayInvocations)
	}
	p("")
	writeRecoveryCalls(p, rec.Runs)
	writeRecoveryCPU(p, rec.Runs, r.Machine.Cores)
	writeRecoveryExtrapolation(p, rec.Runs)
	p("**Goals.**")
	p("")
	p("| goal | measured | met |")
	p("| --- | ---: | --- |")
	for _, g := range rec.Goals() {
		met := "yes"
		if !g.Met {
			met = "**no**"
		}
		p("| %s | %s | %s |", g.Goal, g.Measured, met)
	}
	p("")
	p("DynamoDB read and write *units* are not shown: the local stack computes them only for a request that asks (`ReturnConsumedCapacity`), which the functions do not, and publishes no per-table consumed capacity. Every item here is under 1 KB, so each write request of one item costs one write unit, plus one per pending-index entry it adds or removes (see [write units](#dynamodb-write-units-and-cost-per-million-events)).")
	p("")
}

// writeRecoveryCalls writes the calls per event of each run.
func writeRecoveryCalls(p func(string, ...any), runs []RecoveryRun) {
	ops := map[string]bool{}
	for _, run := range runs {
		for k := range run.Calls {
			ops[k] = true
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range ops {
			if !yield(k) {
				return
			}
		}
	})
	var heads []string
	for _, run := range runs {
		heads = append(heads, run.Name)
	}
	p("| call | %s |", strings.Join(heads, " | "))
	p("| --- |%s", strings.Repeat(" ---: |", len(runs)))
	for _, op := range names {
		var cells []string
		for _, run := range runs {
			cells = append(cells, fmt.Sprintf("%s (%.3f per event)", count(int(run.Calls[op])), perEventCount(run.Calls[op], run.Events)))
		}
		p("| `%s` | %s |", op, strings.Join(cells, " | "))
	}
	p("")
}

func perEventCount(n int64, events int) float64 {
	if events == 0 {
		return 0
	}
	return float64(n) / float64(events)
}

// writeRecoveryCPU writes the CPU time the runs used per event, and the
// rates it allows on AWS and on this machine of cores.
func writeRecoveryCPU(p func(string, ...any), runs []RecoveryRun, cores int) {
	measured := slices.DeleteFunc(slices.Clone(runs), func(r RecoveryRun) bool { return r.FunctionCPU <= 0 || r.Received == 0 })
	if len(measured) == 0 {
		return
	}
	p("**CPU.** The pipeline's functions run as processes of their own on the stack; the harness reads their CPU time when they end (it stops them after the drain). The stack and the harness run in the measuring process. Lambda gives a function a share of a vCPU in proportion to its memory, one vCPU at %s MB (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html), so on AWS the functions' CPU time per event bounds what one reconciler invocation publishes, whatever the calls' latency; the invocations that publish at once are `reconciler.max_workers` unordered, one ordered (one run at a time), and twice the reconciler's memory (`reconciler.memory_size`) doubles their bound. The CPU time is this machine's, where every process contends for its %d cores, so the bound on AWS is an estimate to check against the reconciler's duration there. Those cores run the functions, the stack and the harness together, which bounds the rates measured here:", count(provision.LambdaMBPerVCPU), cores)
	p("")
	p("| target | functions' CPU per event | stack and harness CPU per event | one invocation at its memory, events/s | invocations at once | bound by CPU on AWS, events/s | bound by %d cores here, events/s |", cores)
	p("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, run := range measured {
		fn, stack := run.PerEvent(run.FunctionCPU), run.PerEvent(run.StackCPU)
		one := run.InstanceEventsPerSecond()
		p("| %s | %s | %s | %s (%d MB, %.2f vCPU) | %d | %s | %s |", run.Name, millis(fn), millis(stack),
			count(int(one)), run.Memory, run.VCPU(), run.Instances,
			count(int(one*float64(run.Instances))), count(int(float64(cores)/(fn+stack).Seconds())))
	}
	p("")
}

// millis is a duration in milliseconds with two decimals.
func millis(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// writeRecoveryExtrapolation writes the drain time of larger backlogs.
func writeRecoveryExtrapolation(p func(string, ...any), runs []RecoveryRun) {
	var heads []string
	for _, n := range recoveryExtrapolations {
		heads = append(heads, count(n)+" events")
	}
	p("Extrapolated drain time, at each run's rate after its first event (linear: the same pipeline, the same keys' shares):")
	p("")
	p("| target | %s |", strings.Join(heads, " | "))
	p("| --- |%s", strings.Repeat(" ---: |", len(recoveryExtrapolations)))
	for _, run := range runs {
		var cells []string
		for _, n := range recoveryExtrapolations {
			cells = append(cells, hms(run.Extrapolate(n)))
		}
		p("| %s | %s |", run.Name, strings.Join(cells, " | "))
	}
	p("")
}

// count writes n with thousands separators, as the report's prose does.
func count(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + count(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// hms is a duration rounded to the second.
func hms(d time.Duration) string { return d.Round(time.Second).String() }

// RecoveryLine is the recovery's closing line for scripts.
func (r *Recovery) RecoveryLine() string {
	f := func(run *RecoveryRun, v func(*RecoveryRun) string) string {
		if run == nil {
			return "n/a"
		}
		return v(run)
	}
	rate := func(run *RecoveryRun) string { return fmt.Sprintf("%.0f", run.EventsPerSecond()) }
	hot := func(run *RecoveryRun) string { return fmt.Sprintf("%.0f", run.HotKeyRate) }
	first := func(run *RecoveryRun) string { return fmt.Sprintf("%.1f", run.First.Seconds()) }
	lost := 0
	for _, run := range r.Runs {
		lost += run.Lost
	}
	met := 0
	goals := r.Goals()
	for _, g := range goals {
		if g.Met {
			met++
		}
	}
	un, or := r.Unordered(), r.Ordered()
	return fmt.Sprintf("recovery: events=%d unordered_events_per_s=%s ordered_events_per_s=%s hot_key_events_per_s=%s first_s_unordered=%s first_s_ordered=%s lost=%d goals_met=%d/%d",
		r.Options.Events, f(un, rate), f(or, rate), f(or, hot), f(un, first), f(or, first), lost, met, len(goals))
}
