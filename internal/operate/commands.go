package operate

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/durfmt"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
)

// commands are the subcommands, in the order of the help.
func commands() []command {
	return []command{
		{
			name: "status", summary: "Show pending events by age and when they will be out, failed events, the DLQ, the mapping and the reconciler",
			help: "Exits 0 when healthy and 1 when something is stuck: FAILED events, batches in the dead-letter queue,\na pending event older than --stuck-after, a mapping that is not enabled, or a silent Region. Each problem\ncomes with what to do. A multi-Region pipeline shows each Region's heartbeat, pending and FAILED events\nand takeover claims, and counts the events of the Region it runs against.\n" +
				"The rate is the events published in the last --rate-window, as the reconciler's runs and the relay's\ninvocations logged them, divided by the window; the backlog is done in (pending events) / (rate).",
			example:     "outbox status orders --region eu-west-1 --json",
			permissions: []string{"dynamodb:Query", "dynamodb:Scan", "dynamodb:GetItem", "sqs:GetQueueUrl", "sqs:GetQueueAttributes", "lambda:ListEventSourceMappings", "logs:FilterLogEvents"},
			flags:       statusFlags,
		},
		{
			name: "failed", summary: "List FAILED events with id, source, detail-type, age and last error",
			help:        "--since applies to the time the event was marked FAILED.",
			example:     `outbox failed orders --since 2h --reason AccessDenied --source com.example.orders`,
			permissions: []string{"dynamodb:Scan", "dynamodb:GetItem"},
			flags:       failedFlags,
		},
		{
			name: "requeue", summary: "Put FAILED events back to PENDING, for the reconciler to publish",
			help:        "Selects the FAILED events with the filters of `outbox failed`, or by --id. Requeued events get their\npending-index keys back, so the reconciler's next run publishes them; --now invokes it at once.",
			example:     "outbox requeue orders --since 2h --reason AccessDenied --now",
			permissions: []string{"dynamodb:Scan", "dynamodb:GetItem", "dynamodb:UpdateItem", "lambda:InvokeFunction"},
			flags:       requeueFlags,
		},
		{
			name: "skip", summary: "Skip a FAILED ordered event, so that the later events of its key are published",
			help:        "An ordered event that failed holds the later events of its ordering key. Fix its cause and requeue it\nwhen it must be published; skip it when it must not: it becomes SKIPPED (kept, with the time it was\nskipped) and its key's cursor moves past it, so the reconciler's next run publishes the events behind\nit. Only the key's next event can be skipped. Without --yes, skip shows the event and changes nothing.",
			example:     "outbox skip orders --event-id 01JDQ4Z6X0V8W3M5K2R7T9B1CE --yes",
			permissions: IAMActions("dynamodb:Scan", "dynamodb:GetItem", "dynamodb:TransactWriteItems"),
			flags:       skipFlags,
		},
		{
			name: "drain", summary: "Wait until no event is pending, with progress, up to --timeout",
			help:        "It does not stop the application's writers: stop them first if the outbox must stay empty, for\nexample before a destroy or a migration. Exits 1 on timeout, saying what is left.",
			example:     "outbox drain orders --timeout 15m",
			permissions: []string{"dynamodb:Query"},
			flags:       drainFlags,
		},
		{
			name: "replay", summary: "Publish PUBLISHED events of a time window again, in order, with their original ids",
			args:        " --since DURATION|TIME",
			help:        "Only a pipeline whose published.action is \"mark\" keeps published events (for published.ttl). The\nevents are published as the relay published them, so consumers deduplicate on detail.metadata.eventId.\n--target sends them to another event bus (name or ARN), SNS topic or SQS queue (ARN).",
			example:     "outbox replay orders --since 2026-11-23 --until 2026-11-30 --detail-type OrderPlaced --target arn:aws:events:eu-west-1:123456789012:event-bus/analytics --rate 100",
			permissions: append([]string{"dynamodb:Scan"}, targetkind.PublishActions()...),
			flags:       replayFlags,
		},
		{
			name: "redrive", summary: "Settle the DLQ: report the failed batches, reconcile, delete what is published",
			help:        "The dead-letter queue holds only the metadata of the batches that ran out of retries (shard, sequence\nnumbers, arrival times); their events are still pending in the table. redrive runs the reconciler, then\ndeletes each message once no event written before its batch's last record is pending.",
			example:     "outbox redrive orders",
			permissions: []string{"sqs:GetQueueUrl", "sqs:GetQueueAttributes", "sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "lambda:InvokeFunction", "dynamodb:Query"},
			flags:       redriveFlags,
		},
	}
}

func statusFlags(fs *flag.FlagSet) action {
	stuckAfter := 15 * time.Minute
	fs.Var(durationValue(&stuckAfter), "stuck-after", "a pending event older than `DURATION` counts as stuck")
	rateWindow := DefaultRateWindow
	fs.Var(durationValue(&rateWindow), "rate-window", "measure the publishing rate over the last `DURATION`")
	return action{
		check: func() error {
			return cmp.Or(positive("--stuck-after", stuckAfter), positive("--rate-window", rateWindow))
		},
		run: func(ctx context.Context, e *env) error {
			s, err := e.clients.Status(ctx, e.pipeline, StatusOptions{StuckAfter: stuckAfter, RateWindow: rateWindow, Now: func() time.Time { return e.now }})
			if err != nil {
				return err
			}
			if s.Problems == nil {
				s.Problems = []string{}
			}
			if err := e.result(s, func() { printStatus(e, s) }); err != nil {
				return err
			}
			if !s.Healthy {
				return &exitError{code: ExitStuck}
			}
			return nil
		},
	}
}

// result prints v as JSON with --json, and runs text otherwise.
func (e *env) result(v any, text func()) error {
	if !e.json {
		text()
		return nil
	}
	e.progress.clear()
	enc := json.NewEncoder(e.out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func printStatus(e *env, s Status) {
	line := func(label, format string, args ...any) {
		e.printf("%-19s %s\n", label, fmt.Sprintf(format, args...))
	}
	e.printf("pipeline %s: table %s, target %s\n", s.Pipeline, s.Table, s.Target)
	if s.Regions != nil {
		printRegions(line, s.Regions, e.now)
	}
	if s.Pending.Total == 0 {
		line("pending", "0")
	} else {
		line("pending", "%d, oldest %s", s.Pending.Total, round(s.Pending.Oldest))
	}
	for _, b := range s.Pending.Buckets {
		line("  "+b.Label, "%d", b.Count)
	}
	printBacklog(line, s.Backlog)
	line("failed", "%d", s.Failed.Total)
	for _, r := range s.Failed.TopReasons {
		line("", "%6d  %s", r.Count, r.Reason)
	}
	for _, k := range s.Failed.Keys {
		broken := ""
		if k.BrokenBecause != "" {
			broken = ", which breaks the record contract"
		}
		line("", "ordering key %s held by %s (event %d)%s, %d waiting behind it", k.OrderingKey, k.EventID, k.Sequence, broken, k.WaitingBehind)
	}
	if s.DLQ.Missing {
		line("dead-letter queue", "missing (%s)", s.DLQ.Name)
	} else {
		line("dead-letter queue", "%s, %d in flight (%s)", plural(s.DLQ.Messages, "message", "messages"), s.DLQ.InFlight, s.DLQ.Name)
	}
	line("mapping", "%s, last result: %s", s.Mapping.State, s.Mapping.LastProcessingResult)
	switch r := s.Reconciler; {
	case !r.Enabled:
		line("reconciler", "disabled: dead-lettered batches and records trimmed from the stream are never published")
	case r.LastRun == nil:
		line("reconciler", "no run in the last 24 hours (%s)", r.Function)
	default:
		line("reconciler", "last run %s (%s ago): found %d, published %d, left pending %d, poison %d%s",
			r.LastRun.Time.UTC().Format(time.RFC3339), round(e.now.Sub(r.LastRun.Time)), r.LastRun.Found, r.LastRun.Published, r.LastRun.Failed, r.LastRun.Poison,
			waitingText(r.LastRun.Waiting, r.LastRun.Blocked))
	}
	if s.Healthy {
		e.printf("healthy\n")
		return
	}
	e.printf("STUCK\n")
	for _, p := range s.Problems {
		e.printf("  - %s\n", p)
	}
}

// printBacklog prints the rate, when the backlog is done and whether it
// shrinks.
func printBacklog(line func(label, format string, args ...any), b BacklogStatus) {
	line("rate", "%.3g events/s over the last %s: %d published (%s, %s)", b.RatePerSecond, durfmt.Short(b.window), b.Published,
		plural(b.ReconcilerRuns, "reconciler run", "reconciler runs"), plural(b.RelayInvocations, "relay invocation", "relay invocations"))
	if b.RelayUnread != "" {
		line("", "the relay's share is not counted: %s", b.RelayUnread)
	}
	switch {
	case b.DoneAt != nil:
		line("done", "in %s, at %s (%d pending / %.3g events/s)", b.ETA, b.DoneAt.Format(time.RFC3339), b.Pending, b.RatePerSecond)
	case b.State == BacklogNone:
		line("done", "none: nothing is pending")
	default:
		line("done", "unknown: nothing was published in the last %s", durfmt.Short(b.window))
	}
	line("progress", "%s", b.text())
}

// filterFlags declares the filters of failed and requeue.
func filterFlags(fs *flag.FlagSet, f *Filter) {
	fs.Var(timeValue(&f.Since), "since", "only events that failed since `DURATION|TIME`: an age (2h, 7d), a date or an RFC 3339 time")
	fs.StringVar(&f.Reason, "reason", "", "only events whose last error contains `TEXT`")
	fs.StringVar(&f.Source, "source", "", "only events of this `SOURCE`")
}

// failedAction is an action on the FAILED events that the filter flags,
// added to fs, select: run is given them.
func failedAction(fs *flag.FlagSet, f *Filter, run func(ctx context.Context, e *env, list FailedList) error) action {
	filterFlags(fs, f)
	originFlags(fs, &f.Origins)
	return action{
		check: func() error { return errors.Join(notInFuture("--since", f.Since), f.Origins.check()) },
		run: func(ctx context.Context, e *env) error {
			list, err := e.clients.Failed(ctx, e.pipeline, *f)
			if err != nil {
				return err
			}
			e.noteLeftOut(list.Origins, "FAILED events")
			return run(ctx, e, list)
		},
	}
}

func failedFlags(fs *flag.FlagSet) action {
	return failedAction(fs, &Filter{}, func(_ context.Context, e *env, list FailedList) error {
		if list.Events == nil {
			list.Events = []FailedEvent{}
		}
		return e.result(list, func() {
			printFailed(e, list.Events)
			printWaiting(e, list.Events)
			printBroken(e, list.Events)
			e.printf("%s\n", plural(len(list.Events), "FAILED event", "FAILED events"))
			if list.Broken > 0 {
				e.printf("%s the record contract: such an event is never published until its item is fixed; fix the item, then requeue the event\n",
					plural(list.Broken, "of them breaks", "of them break"))
			}
		})
	})
}

// printFailed lists events: AGE is the time since the event occurred,
// FAILED AT the time it was marked FAILED (what --since filters on).
func printFailed(e *env, events []FailedEvent) {
	if len(events) == 0 {
		return
	}
	e.printf("ID\tSOURCE\tDETAIL-TYPE\tAGE\tFAILED AT\tLAST ERROR\n")
	for _, ev := range events {
		r := ev.Record
		failedAt := "-"
		if !ev.FailedAt.IsZero() {
			failedAt = ev.FailedAt.UTC().Format(time.RFC3339)
		}
		age := "-" // a broken item may not say when it occurred
		if !r.OccurredAt.IsZero() {
			age = round(e.now.Sub(r.OccurredAt)).String()
		}
		e.printf("%s\t%s\t%s\t%s\t%s\t%s\n", r.EventID, r.Source, r.DetailType, age, failedAt, r.LastError)
	}
}

// printBroken says, for each event of events that breaks the record
// contract, why.
func printBroken(e *env, events []FailedEvent) {
	for _, ev := range events {
		if ev.Broken != "" {
			e.printf("event %s breaks the record contract: %s\n", ev.Record.EventID, ev.Broken)
		}
	}
}

// printWaiting says, for each event of events that holds its key, how many
// events of its key wait behind it.
func printWaiting(e *env, events []FailedEvent) {
	for _, ev := range events {
		if r := ev.Record; ev.HoldsKey {
			e.printf("ordering key %s: %s is event %d, %s behind it\n", r.OrderingKey, r.EventID, r.Sequence, plural(int(ev.WaitingBehind), "event waits", "events wait"))
		}
	}
}

func skipFlags(fs *flag.FlagSet) action {
	eventID := fs.String("event-id", "", "the `ID` of the FAILED ordered event to skip (required)")
	yes := fs.Bool("yes", false, "skip it; without --yes, show what would be skipped and change nothing")
	var origins Origins
	originFlags(fs, &origins)
	return action{
		check: func() error {
			if *eventID == "" {
				return errors.New("skip needs --event-id, the id of the FAILED ordered event: `outbox failed` lists them")
			}
			return origins.check()
		},
		run: func(ctx context.Context, e *env) error {
			ev, err := e.clients.failedEvent(ctx, e.pipeline, *eventID, origins)
			if err != nil {
				return err
			}
			out := SkipOutput{Pipeline: e.pipeline.Name, DryRun: !*yes, Event: ev}
			if !*yes {
				return e.result(out, func() {
					printFailed(e, []FailedEvent{ev})
					printWaiting(e, []FailedEvent{ev})
					printBroken(e, []FailedEvent{ev})
					e.printf("would skip event %s (dry run: nothing changed; pass --yes to skip it)\n", ev.Record.EventID)
				})
			}
			if err := e.clients.Skip(ctx, e.pipeline, ev, time.Now()); err != nil {
				return err
			}
			out.Skipped = true
			r := ev.Record
			e.notef("skipped event %s, event %d of ordering key %s: it stays in the table as SKIPPED; the reconciler's next run publishes the %s behind it", r.EventID, r.Sequence, r.OrderingKey, plural(int(ev.WaitingBehind), "event", "events"))
			return e.result(out, func() { e.printf("skipped %s\n", r.EventID) })
		},
	}
}

func requeueFlags(fs *flag.FlagSet) action {
	var f Filter
	fs.Var(listFlag{&f.IDs}, "id", "only the events of this `ID` (repeat the flag, or separate the ids with commas)")
	dryRun := fs.Bool("dry-run", false, "list what would be requeued, and change nothing")
	now := fs.Bool("now", false, "invoke the reconciler once requeued, instead of waiting for its schedule")
	return failedAction(fs, &f, func(ctx context.Context, e *env, list FailedList) error {
		if missing := missingIDs(f.IDs, list.Events); len(missing) > 0 {
			return missingError(e.pipeline, missing, list.elsewhere)
		}
		list, err := leaveBroken(e, list, len(f.IDs) > 0)
		if err != nil {
			return err
		}
		out := RequeueOutput{Pipeline: e.pipeline.Name, DryRun: *dryRun, Selected: len(list.Events), Broken: list.Broken, Events: list.Events, Origins: list.Origins}
		if out.Events == nil {
			out.Events = []FailedEvent{}
		}
		if *dryRun {
			return e.result(out, func() {
				printFailed(e, list.Events)
				e.printf("would requeue %s (dry run: nothing changed)\n", plural(len(list.Events), "FAILED event", "FAILED events"))
			})
		}
		return requeue(ctx, e, list.Events, *now, out)
	})
}

// leaveBroken returns list without the events that break the record
// contract, which requeue leaves FAILED: the relay would only mark them
// FAILED again. Named by --id (byID), a broken event is an error that says
// how to fix it; otherwise a note counts them.
func leaveBroken(e *env, list FailedList, byID bool) (FailedList, error) {
	var sound []FailedEvent
	var errs []error
	for _, ev := range list.Events {
		switch {
		case ev.Broken == "":
			sound = append(sound, ev)
		case byID:
			errs = append(errs, fmt.Errorf("event %s is not requeued: %s", ev.Record.EventID, requeueAdvice(e.pipeline, ev)))
		}
	}
	if len(errs) > 0 {
		return list, usageError("requeue", "%v", errors.Join(errs...))
	}
	if list.Broken > 0 {
		e.notef("%s left FAILED: their items break the record contract (`outbox failed %s` says why); fix them, then requeue them",
			plural(list.Broken, "event is", "events are"), e.pipeline.Name)
	}
	list.Events = sound
	return list, nil
}

// requeue requeues events, reconciles with --now, and prints out.
func requeue(ctx context.Context, e *env, events []FailedEvent, now bool, out RequeueOutput) error {
	res, err := e.clients.Requeue(ctx, e.pipeline, events, func(done int) {
		e.progress.count("requeueing", done, len(events))
	})
	out.Requeued, out.Skipped = res.Requeued, res.Skipped
	if !e.json {
		e.printf("requeued %s to PENDING (%s no longer FAILED)\n", plural(res.Requeued, "event", "events"), plural(res.Skipped, "was", "were"))
		e.flush()
	}
	if err != nil {
		return err
	}
	var incomplete error
	switch {
	case now:
		if o := out.Origins; o != nil && o.Origin != e.pipeline.Region && res.Requeued > 0 {
			e.notef("--now runs the reconciler of %s, which publishes the events written there: the requeued events of %s are published by the reconciler of their Region, or of the Region that took it over", e.pipeline.Region, o.Origin)
		}
		runs := newRunLog(e)
		total, err := e.clients.Reconcile(ctx, e.pipeline, runs.report)
		if err != nil {
			return err
		}
		out.Reconciler, incomplete = runs.finish(total)
	case res.Requeued > 0:
		e.notef("the reconciler publishes the requeued events on its next run; pass --now to run it at once")
	}
	// Without --json, the text was written as the work went.
	if err := e.result(out, func() {}); err != nil {
		return err
	}
	return incomplete
}

// runLog collects the reconciler's runs, and prints each as it ends
// (without --json).
type runLog struct {
	e    *env
	runs ReconcilerRuns
}

func newRunLog(e *env) *runLog { return &runLog{e: e, runs: ReconcilerRuns{Runs: []ReconcileRun{}}} }

func (l *runLog) report(r reconcile.Report) {
	l.runs.Runs = append(l.runs.Runs, newReconcileRun(time.Now().UTC(), r))
	if !l.e.json {
		l.e.printf("reconciler run %d: found %d, published %d, left pending %d, poison %d%s, complete %t\n",
			len(l.runs.Runs), r.Found, r.Published, r.Failed, r.Poison, waitingText(r.Waiting, r.Blocked), r.Complete)
		l.e.flush()
	}
}

// waitingText says how many events a run left waiting behind their keys,
// if any.
func waitingText(waiting, blocked int) string {
	if waiting == 0 {
		return ""
	}
	return fmt.Sprintf(", waiting %d behind their ordering keys (%d behind a FAILED event)", waiting, blocked)
}

// finish returns the runs with the sum of their reports, and a stuck
// error when they left events pending.
func (l *runLog) finish(total reconcile.Report) (*ReconcilerRuns, error) {
	l.runs.LeftPending, l.runs.Waiting, l.runs.Complete = total.Failed, total.Waiting, total.Complete
	if total.Failed > 0 || !total.Complete {
		return &l.runs, stuck("%s still pending after %s: see `outbox status %s` and the reconciler's log group %s",
			plural(total.Failed, "event is", "events are"), plural(len(l.runs.Runs), "reconciler run", "reconciler runs"), l.e.pipeline.Name, l.e.pipeline.Names.ReconcilerLogGroup)
	}
	if total.Waiting > 0 {
		return &l.runs, stuck("%s still pending behind an earlier event of their ordering key (%d behind a FAILED event): `outbox failed %s` lists the FAILED events that hold keys",
			plural(total.Waiting, "event is", "events are"), total.Blocked, l.e.pipeline.Name)
	}
	return &l.runs, nil
}

func drainFlags(fs *flag.FlagSet) action {
	o := DrainOptions{Timeout: 10 * time.Minute, Interval: 2 * time.Second}
	fs.Var(durationValue(&o.Timeout), "timeout", "wait at most `DURATION`")
	fs.Var(durationValue(&o.Interval), "interval", "count the pending events every `DURATION`")
	originFlags(fs, &o.Origins)
	return action{
		check: func() error {
			return errors.Join(positive("--timeout", o.Timeout), positive("--interval", o.Interval), o.Origins.check())
		},
		run: func(ctx context.Context, e *env) error {
			e.notef("waiting until no event of %s is pending (at most %s).\nThis does not stop the application's writers: stop them first if the outbox must stay empty.", e.pipeline.Name, durfmt.Short(o.Timeout))
			first := -1
			o.Progress = func(p DrainProgress) {
				if first < 0 {
					first = p.Pending
				}
				e.progress.show(drainLine(e.progress.terminal, first, p))
			}
			res, err := e.clients.Drain(ctx, e.pipeline, o)
			if err != nil {
				return err
			}
			out := DrainOutput{Pipeline: e.pipeline.Name, Drained: res.Drained, Pending: res.Pending, RatePerSecond: res.Rate,
				ElapsedSeconds: res.Elapsed.Seconds(), TimeoutSeconds: o.Timeout.Seconds(), Origins: res.Origins}
			e.noteLeftOut(res.Origins, "pending events")
			err = e.result(out, func() {
				if res.Drained {
					e.printf("drained: no event of %s is pending (%s)\n", e.pipeline.Name, round(res.Elapsed))
					return
				}
				e.printf("timed out after %s: %s still pending\n", round(res.Elapsed), plural(res.Pending, "event", "events"))
			})
			if err == nil && !res.Drained {
				err = stuck("pipeline %s still has %s pending: see `outbox status %s`", e.pipeline.Name, plural(res.Pending, "event", "events"), e.pipeline.Name)
			}
			return err
		},
	}
}

// drainLine describes a count of drain: with a bar of the events gone
// since the first count on a terminal.
func drainLine(terminal bool, first int, p DrainProgress) string {
	left := "time left unknown"
	if p.Left > 0 {
		left = "about " + round(p.Left).String() + " left"
	}
	line := fmt.Sprintf("pending %d, %.1f/s, %s (%s elapsed)", p.Pending, p.Rate, left, round(p.Elapsed))
	if terminal {
		return "draining " + bar(first-p.Pending, first) + " " + line
	}
	return line
}

func replayFlags(fs *flag.FlagSet) action {
	var o ReplayOptions
	fs.Var(timeValue(&o.Filter.Since), "since", "replay the events that occurred since `DURATION|TIME`: an age (24h, 7d), a date or an RFC 3339 time (required)")
	fs.Var(timeValue(&o.Filter.Until), "until", "and before `DURATION|TIME`, exclusive (default: now)")
	fs.StringVar(&o.Filter.Source, "source", "", "only events of this `SOURCE`")
	fs.StringVar(&o.Filter.DetailType, "detail-type", "", "only events of this `DETAIL_TYPE`")
	fs.StringVar(&o.Target, "target", "", "publish to `BUS|TOPIC|QUEUE`: "+targetkind.Addresses()+" (default: the pipeline's target)")
	fs.Var(rateValue(&o.Rate), "rate", "publish at most `N` events a second (default: no limit)")
	originFlags(fs, &o.Filter.Origins)
	return action{
		check: func() error {
			return cmp.Or(checkWindow(o.Filter.Since, o.Filter.Until, time.Now()), o.Filter.Origins.check())
		},
		run: func(ctx context.Context, e *env) error {
			o.Progress = func(done, total int) { e.progress.count("replaying", done, total) }
			start := time.Now()
			res, err := e.clients.Replay(ctx, e.pipeline, o)
			if err != nil {
				return err
			}
			out := newReplayOutput(e.pipeline.Name, o.Filter, start, res)
			e.noteLeftOut(res.Origins, "events of the window")
			err = e.result(out, func() {
				window := "no event in the window"
				if res.Selected > 0 {
					window = fmt.Sprintf("occurred %s to %s", res.First.UTC().Format(time.RFC3339), res.Last.UTC().Format(time.RFC3339))
				}
				e.printf("replayed %d of %s to %s in %s (%s)\n", res.Published, plural(res.Selected, "event", "events"), res.Target, round(time.Since(start)), window)
				for _, r := range res.Reasons {
					e.printf("  %d\t%s\n", r.Count, r.Reason)
				}
			})
			if err == nil && res.Failed > 0 {
				err = stuck("%s not published; run the same replay again once the cause is fixed", plural(res.Failed, "event was", "events were"))
			}
			return err
		},
	}
}

func redriveFlags(fs *flag.FlagSet) action {
	o := RedriveOptions{Visibility: 5 * time.Minute}
	fs.BoolVar(&o.DryRun, "dry-run", false, "list the batches, and change nothing")
	fs.Var(durationValue(&o.Visibility), "visibility", "hide the messages from other readers for `DURATION` while redrive works")
	return action{
		check: func() error {
			if o.Visibility < time.Second || o.Visibility > 12*time.Hour {
				return fmt.Errorf("--visibility %s is out of range: SQS hides a message for 1s to 12h; use a time longer than the redrive takes, such as 5m", durfmt.Short(o.Visibility))
			}
			return nil
		},
		run: func(ctx context.Context, e *env) error { return redrive(ctx, e, o) },
	}
}

func redrive(ctx context.Context, e *env, o RedriveOptions) error {
	queue := e.pipeline.Names.DeadLetterQueue
	o.Batches = func(msgs []DLQMessage) {
		if e.json {
			return
		}
		e.printf("%s in the dead-letter queue %s\n", plural(len(msgs), "batch", "batches"), queue)
		for _, m := range msgs {
			e.printf("  %s\n", m)
		}
		e.flush()
	}
	runs := newRunLog(e)
	o.Report = runs.report
	res, err := e.clients.Redrive(ctx, e.pipeline, o)
	if err != nil {
		return err
	}
	var reconciled *ReconcilerRuns
	if !o.DryRun && len(res.Messages) > 0 {
		reconciled, _ = runs.finish(res.Reconcile) // the messages left say what is incomplete
	}
	out := newRedriveOutput(e.pipeline.Name, queue, o.DryRun, res, reconciled)
	err = e.result(out, func() {
		if !o.DryRun && len(res.Messages) > 0 {
			e.printf("deleted %d of %s: their events are published\n", out.Deleted, plural(len(res.Messages), "message", "messages"))
		}
	})
	switch {
	case err != nil:
		return err
	case len(res.Messages) == 0 && res.InFlight > 0:
		return stuck("%s held by another reader (a redrive still running?): try again once they are visible", plural(res.InFlight, "message is", "messages are"))
	case out.Left > 0:
		return stuck("%s in the queue (%s they may hold still pending): see `outbox status %s`, then redrive again",
			plural(out.Left, "message stays", "messages stay"), plural(res.Pending, "event", "events"), e.pipeline.Name)
	}
	return nil
}

// positive refuses a duration of 0.
func positive(flagName string, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("%s must be longer than 0s, such as 30s or 15m", flagName)
	}
	return nil
}

// notInFuture refuses a --since after now: nothing can be selected.
func notInFuture(flagName string, t time.Time) error {
	if t.After(time.Now()) {
		return fmt.Errorf("%s %s is in the future, so it selects nothing: pass a past time or an age, such as 2h or 7d", flagName, t.UTC().Format(time.RFC3339))
	}
	return nil
}

// checkWindow refuses a replay window that is missing or empty.
func checkWindow(since, until, now time.Time) error {
	if since.IsZero() {
		return errors.New("replay needs --since, the start of the window, for example --since 24h")
	}
	if err := notInFuture("--since", since); err != nil {
		return err
	}
	if !until.IsZero() && !until.After(since) {
		return fmt.Errorf("the window is empty: --until (%s, %s ago) is not after --since (%s, %s ago); an age counts back from now, so the larger age is the earlier time: pass the earlier time to --since, for example --since 2h --until 30m",
			until.UTC().Format(time.RFC3339), round(now.Sub(until)), since.UTC().Format(time.RFC3339), round(now.Sub(since)))
	}
	return nil
}

// plural returns "1 event" or "n events".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// missingError says that no FAILED event in scope has the ids missing,
// and of those that another Region's event has (elsewhere: id → Region),
// how to take them.
func missingError(p *Pipeline, missing []string, elsewhere map[string]string) error {
	var errs []error
	var none []string
	for _, id := range missing {
		if region, ok := elsewhere[id]; ok {
			errs = append(errs, fmt.Errorf("FAILED event %s was written in %s: pass --origin %s to take it from here, or run against %s with --region %s", id, region, region, region, region))
			continue
		}
		none = append(none, id)
	}
	if len(none) > 0 {
		errs = append(errs, fmt.Errorf("no FAILED event has the id %s: check it with `outbox failed %s`", strings.Join(none, ", "), p.Name))
	}
	return notFoundError{errors.Join(errs...)}
}

// missingIDs returns the ids that no event has.
func missingIDs(ids []string, events []FailedEvent) []string {
	found := map[string]bool{}
	for _, e := range events {
		found[e.Record.EventID] = true
	}
	var missing []string
	for _, id := range ids {
		if !found[id] {
			missing = append(missing, id)
		}
	}
	return missing
}
