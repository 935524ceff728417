package operate

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
	"github.com/outboxkit/terraform-provider-outbox/internal/target"
)

// commands are the subcommands, in the order of the help.
func commands() []command {
	return []command{
		{
			name: "status", summary: "Show pending events by age, failed events, the DLQ, the mapping and the reconciler",
			help:        "Exits 0 when healthy and 1 when something is stuck: FAILED events, batches in the dead-letter queue,\na pending event older than --stuck-after, or a mapping that is not enabled. Each problem comes with what to do.",
			example:     "outbox status orders --region eu-west-1 --json",
			permissions: []string{"dynamodb:Query", "dynamodb:Scan", "sqs:GetQueueUrl", "sqs:GetQueueAttributes", "lambda:ListEventSourceMappings", "logs:FilterLogEvents"},
			flags:       statusFlags,
		},
		{
			name: "failed", summary: "List FAILED events with id, source, detail-type, age and last error",
			help:        "--since applies to the time the event was marked FAILED.",
			example:     `outbox failed orders --since 2h --reason AccessDenied --source com.example.orders`,
			permissions: []string{"dynamodb:Scan"},
			flags:       failedFlags,
		},
		{
			name: "requeue", summary: "Put FAILED events back to PENDING, for the reconciler to publish",
			help:        "Selects the FAILED events with the filters of `outbox failed`, or by --id. Requeued events get their\npending-index keys back, so the reconciler's next run publishes them; --now invokes it at once.",
			example:     "outbox requeue orders --since 2h --reason AccessDenied --now",
			permissions: []string{"dynamodb:Scan", "dynamodb:UpdateItem", "lambda:InvokeFunction"},
			flags:       requeueFlags,
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
			args:        " --since T",
			help:        "Only a pipeline whose published.action is \"mark\" keeps published events (for published.ttl). The\nevents are published as the relay published them, so consumers deduplicate on detail.metadata.eventId.\n--target sends them to another event bus (name or ARN), SNS topic or SQS queue (ARN).",
			example:     "outbox replay orders --since 2026-11-23 --until 2026-11-30 --detail-type OrderPlaced --target arn:aws:events:eu-west-1:123456789012:event-bus/analytics --rate 100",
			permissions: append([]string{"dynamodb:Scan"}, target.PublishActions()...),
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

func statusFlags(fs *flag.FlagSet) func(context.Context, *env) error {
	asJSON := fs.Bool("json", false, "print the status as JSON")
	stuckAfter := fs.Duration("stuck-after", 15*time.Minute, "pending age from which an event counts as stuck")
	return func(ctx context.Context, e *env) error {
		s, err := e.clients.Status(ctx, e.pipeline, StatusOptions{StuckAfter: *stuckAfter})
		if err != nil {
			return err
		}
		if *asJSON {
			if s.Problems == nil {
				s.Problems = []string{}
			}
			if err := e.printJSON(s); err != nil {
				return err
			}
		} else {
			printStatus(e, s)
		}
		if !s.Healthy {
			return &exitError{code: ExitStuck}
		}
		return nil
	}
}

// printJSON prints v as indented JSON, with <, > and & as they are.
func (e *env) printJSON(v any) error {
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
	if s.Pending.Total == 0 {
		line("pending", "0")
	} else {
		line("pending", "%d, oldest %s", s.Pending.Total, round(s.Pending.Oldest))
	}
	for _, b := range s.Pending.Buckets {
		line("  "+b.Label, "%d", b.Count)
	}
	line("failed", "%d", s.Failed.Total)
	for _, r := range s.Failed.TopReasons {
		line("", "%6d  %s", r.Count, r.Reason)
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
		line("reconciler", "last run %s (%s ago): found %d, published %d, left pending %d, poison %d",
			r.LastRun.Time.UTC().Format(time.RFC3339), round(e.now.Sub(r.LastRun.Time)), r.LastRun.Found, r.LastRun.Published, r.LastRun.Failed, r.LastRun.Poison)
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

// filterFlags declares the filters of failed and requeue.
func filterFlags(fs *flag.FlagSet, f *Filter) {
	fs.Var(timeFlag{t: &f.Since, now: time.Now}, "since", "only events that failed since this time (RFC 3339, date, or age such as 2h or 7d)")
	fs.StringVar(&f.Reason, "reason", "", "only events whose last error contains this text")
	fs.StringVar(&f.Source, "source", "", "only events of this source")
}

func failedFlags(fs *flag.FlagSet) func(context.Context, *env) error {
	var f Filter
	filterFlags(fs, &f)
	asJSON := fs.Bool("json", false, "print the events as JSON")
	return func(ctx context.Context, e *env) error {
		list, err := e.clients.Failed(ctx, e.pipeline, f)
		if err != nil {
			return err
		}
		if *asJSON {
			if list.Events == nil {
				list.Events = []FailedEvent{}
			}
			return e.printJSON(list)
		}
		printFailed(e, list.Events)
		e.printf("%d FAILED events\n", len(list.Events))
		if list.Broken > 0 {
			e.printf("%d more FAILED items break the record contract and can never be published\n", list.Broken)
		}
		return nil
	}
}

func printFailed(e *env, events []FailedEvent) {
	if len(events) == 0 {
		return
	}
	e.printf("ID\tSOURCE\tDETAIL-TYPE\tAGE\tLAST ERROR\n")
	for _, ev := range events {
		r := ev.Record
		e.printf("%s\t%s\t%s\t%s\t%s\n", r.EventID, r.Source, r.DetailType, round(e.now.Sub(r.OccurredAt)), r.LastError)
	}
}

func requeueFlags(fs *flag.FlagSet) func(context.Context, *env) error {
	var f Filter
	filterFlags(fs, &f)
	fs.Var(listFlag{&f.IDs}, "id", "only these event ids (repeat the flag or separate with commas)")
	dryRun := fs.Bool("dry-run", false, "print what would be requeued and change nothing")
	now := fs.Bool("now", false, "invoke the reconciler once requeued, instead of waiting for its schedule")
	return func(ctx context.Context, e *env) error {
		list, err := e.clients.Failed(ctx, e.pipeline, f)
		if err != nil {
			return err
		}
		if missing := missingIDs(f.IDs, list.Events); len(missing) > 0 {
			return stuck("no FAILED event has the id %s: check it with `outbox failed %s`", strings.Join(missing, ", "), e.pipeline.Name)
		}
		if *dryRun {
			printFailed(e, list.Events)
			e.printf("would requeue %d FAILED events (dry run: nothing changed)\n", len(list.Events))
			return nil
		}
		total := len(list.Events)
		res, err := e.clients.Requeue(ctx, e.pipeline, list.Events, func(done int) {
			e.progress.update("requeueing %s", bar(done, total))
		})
		e.progress.done("requeued %d events to PENDING (%d were no longer FAILED)", res.Requeued, res.Skipped)
		if err != nil {
			return err
		}
		if !*now {
			e.printf("the reconciler publishes them on its next run; pass --now to run it at once\n")
			return nil
		}
		return runReconciler(ctx, e)
	}
}

// runReconciler invokes the reconciler and reports its runs.
func runReconciler(ctx context.Context, e *env) error {
	run := 0
	r, err := e.clients.Reconcile(ctx, e.pipeline, func(r reconcile.Report) {
		run++
		e.progress.done("reconciler run %d: found %d, published %d, left pending %d, poison %d, complete %t",
			run, r.Found, r.Published, r.Failed, r.Poison, r.Complete)
	})
	if err != nil {
		return err
	}
	if r.Failed > 0 || !r.Complete {
		return stuck("%d events are still pending after %d reconciler runs: see `outbox status %s` and the reconciler's log group %s", r.Failed, run, e.pipeline.Name, e.pipeline.Names.ReconcilerLogGroup)
	}
	return nil
}

func drainFlags(fs *flag.FlagSet) func(context.Context, *env) error {
	var o DrainOptions
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "longest wait")
	fs.DurationVar(&o.Interval, "interval", 2*time.Second, "pause between two counts")
	return func(ctx context.Context, e *env) error {
		e.printf("waiting until no event of %s is pending (at most %s).\nThis does not stop the application's writers: stop them first if the outbox must stay empty.\n", e.pipeline.Name, o.Timeout)
		e.flush()
		o.Progress = func(p DrainProgress) {
			if p.Elapsed == 0 {
				e.progress.update("pending %d", p.Pending)
				return
			}
			left := "time left unknown"
			if p.Left > 0 {
				left = "about " + round(p.Left).String() + " left"
			}
			e.progress.update("pending %d, %.1f/s, %s (%s elapsed)", p.Pending, p.Rate, left, round(p.Elapsed))
		}
		res, err := e.clients.Drain(ctx, e.pipeline, o)
		if err != nil {
			return err
		}
		if !res.Drained {
			e.progress.done("timed out after %s: %d events still pending", round(res.Elapsed), res.Pending)
			return stuck("%d events of %s are still pending: see `outbox status %s`", res.Pending, e.pipeline.Name, e.pipeline.Name)
		}
		e.progress.done("drained: no event of %s is pending (%s)", e.pipeline.Name, round(res.Elapsed))
		return nil
	}
}

func replayFlags(fs *flag.FlagSet) func(context.Context, *env) error {
	var o ReplayOptions
	fs.Var(timeFlag{t: &o.Filter.Since, now: time.Now}, "since", "start of the window of occurrence (required; RFC 3339, date, or age such as 24h or 7d)")
	fs.Var(timeFlag{t: &o.Filter.Until, now: time.Now}, "until", "end of the window, exclusive (default: now)")
	fs.StringVar(&o.Filter.Source, "source", "", "only events of this source")
	fs.StringVar(&o.Filter.DetailType, "detail-type", "", "only events of this detail type")
	fs.StringVar(&o.Target, "target", "", target.Addresses()+" (default: the pipeline's target)")
	fs.Float64Var(&o.Rate, "rate", 0, "most events published per second (default: no limit)")
	return func(ctx context.Context, e *env) error {
		if o.Filter.Since.IsZero() {
			return usageError("replay needs --since, for example --since 24h (see outbox replay --help)")
		}
		o.Progress = func(done, total int) { e.progress.update("replaying %s", bar(done, total)) }
		start := time.Now()
		res, err := e.clients.Replay(ctx, e.pipeline, o)
		if err != nil {
			return err
		}
		window := "no event in the window"
		if res.Selected > 0 {
			window = fmt.Sprintf("occurred %s to %s", res.First.Format(time.RFC3339), res.Last.Format(time.RFC3339))
		}
		e.progress.done("replayed %d of %d events to %s in %s (%s)", res.Published, res.Selected, res.Target, round(time.Since(start)), window)
		if res.Failed > 0 {
			for _, r := range res.Reasons {
				e.printf("  %d\t%s\n", r.Count, r.Reason)
			}
			return stuck("%d events were not published; run the same replay again once the cause is fixed", res.Failed)
		}
		return nil
	}
}

func redriveFlags(fs *flag.FlagSet) func(context.Context, *env) error {
	var o RedriveOptions
	fs.BoolVar(&o.DryRun, "dry-run", false, "report the batches and change nothing")
	fs.DurationVar(&o.Visibility, "visibility", 5*time.Minute, "how long the messages stay hidden from other readers while redrive works")
	return func(ctx context.Context, e *env) error {
		o.Batches = func(msgs []DLQMessage) {
			e.printf("%s in the dead-letter queue %s\n", plural(len(msgs), "batch", "batches"), e.pipeline.Names.DeadLetterQueue)
			for _, m := range msgs {
				e.printf("  %s\n", m)
			}
			e.flush()
		}
		run := 0
		o.Report = func(r reconcile.Report) {
			run++
			e.progress.done("reconciler run %d: found %d, published %d, left pending %d, poison %d, complete %t", run, r.Found, r.Published, r.Failed, r.Poison, r.Complete)
		}
		res, err := e.clients.Redrive(ctx, e.pipeline, o)
		if err != nil {
			return err
		}
		if len(res.Messages) == 0 && res.InFlight > 0 {
			return stuck("%s held by another reader (a redrive still running?): try again once they are visible", plural(res.InFlight, "message is", "messages are"))
		}
		if o.DryRun || len(res.Messages) == 0 {
			return nil
		}
		deleted := 0
		for _, m := range res.Messages {
			if m.Deleted {
				deleted++
			}
		}
		e.printf("deleted %d of %s: their events are published\n", deleted, plural(len(res.Messages), "message", "messages"))
		if deleted < len(res.Messages) {
			return stuck("%d messages stay in the queue (%d events they may hold are still pending): see `outbox status %s`, then redrive again", len(res.Messages)-deleted, res.Pending, e.pipeline.Name)
		}
		return nil
	}
}

// plural returns "1 event" or "n events".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
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
