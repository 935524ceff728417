package operate

import "time"

// The types below are what the subcommands print with --json, one type per
// subcommand (status prints Status, failed FailedList). Their fields are a
// documented interface (the operations guide): add fields, never rename or
// drop one. Times are RFC 3339 in UTC.

// RequeueOutput is what `outbox requeue --json` prints.
type RequeueOutput struct {
	Pipeline string `json:"pipeline"`
	DryRun   bool   `json:"dryRun"`
	// Selected counts the FAILED events the filters selected and requeue
	// takes: not those that break the record contract (Broken counts them),
	// which stay FAILED until their items are fixed.
	Selected int `json:"selected"`
	Broken   int `json:"broken"`
	// Requeued counts the events put back to PENDING; Skipped those that
	// were no longer FAILED when updated. Both are 0 in a dry run.
	Requeued int `json:"requeued"`
	Skipped  int `json:"skipped"`
	// Events are the events selected, as `outbox failed --json` lists
	// them.
	Events []FailedEvent `json:"events"`
	// Reconciler is what --now ran; null without --now.
	Reconciler *ReconcilerRuns `json:"reconciler"`
	// Origins says, on a multi-Region pipeline, whose events were
	// selected and counts those of other Regions left out; absent for a
	// single-Region pipeline.
	Origins *OriginsOutput `json:"origins,omitempty"`
}

// ReconcilerRuns are the reconciler runs that a subcommand invoked.
type ReconcilerRuns struct {
	// Runs are the runs' reports, in order (Failed: the events a run left
	// pending, for the next run).
	Runs []ReconcileRun `json:"runs"`
	// LeftPending counts the events the runs left pending; Complete is
	// true when the last run swept every shard.
	LeftPending int `json:"leftPending"`
	// Waiting counts the events the last run left pending behind an
	// earlier event of their ordering key (held behind their key).
	Waiting  int  `json:"waiting"`
	Complete bool `json:"complete"`
}

// DrainOutput is what `outbox drain --json` prints.
type DrainOutput struct {
	Pipeline string `json:"pipeline"`
	// Drained is true when no event was pending at the last count.
	Drained bool `json:"drained"`
	// Pending is the last count.
	Pending int `json:"pending"`
	// RatePerSecond is the number of events leaving the outbox a second
	// at the end, over the last 30 seconds (negative when writers add
	// faster).
	RatePerSecond  float64 `json:"ratePerSecond"`
	ElapsedSeconds float64 `json:"elapsedSeconds"`
	TimeoutSeconds float64 `json:"timeoutSeconds"`
	// Origins says, on a multi-Region pipeline, whose pending events were
	// counted, and counts those of other Regions left out at the last
	// count; absent for a single-Region pipeline.
	Origins *OriginsOutput `json:"origins,omitempty"`
}

// ReplayOutput is what `outbox replay --json` prints.
type ReplayOutput struct {
	Pipeline string `json:"pipeline"`
	// Target is where the events went: a bus name or ARN, a topic ARN.
	Target string `json:"target"`
	// Since and Until are the window of occurrence, [since, until).
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
	// Selected counts the events of the window; Published and Failed
	// split them.
	Selected  int `json:"selected"`
	Published int `json:"published"`
	Failed    int `json:"failed"`
	// Reasons are the reasons of the failures, most frequent first.
	Reasons []ReasonCount `json:"reasons"`
	// FirstOccurredAt and LastOccurredAt are the times of occurrence of
	// the first and last event selected; null when none was.
	FirstOccurredAt *time.Time `json:"firstOccurredAt"`
	LastOccurredAt  *time.Time `json:"lastOccurredAt"`
	ElapsedSeconds  float64    `json:"elapsedSeconds"`
	// Origins says, on a multi-Region pipeline, whose events were
	// replayed and counts those of other Regions left out; absent for a
	// single-Region pipeline.
	Origins *OriginsOutput `json:"origins,omitempty"`
}

func newReplayOutput(pipeline string, f Filter, start time.Time, res ReplayResult) ReplayOutput {
	out := ReplayOutput{
		Pipeline: pipeline, Target: res.Target, Since: f.Since.UTC(), Until: f.Until.UTC(),
		Selected: res.Selected, Published: res.Published, Failed: res.Failed, Reasons: res.Reasons,
		ElapsedSeconds: time.Since(start).Seconds(), Origins: res.Origins,
	}
	if f.Until.IsZero() {
		out.Until = start.UTC()
	}
	if out.Reasons == nil {
		out.Reasons = []ReasonCount{}
	}
	if res.Selected > 0 {
		first, last := res.First.UTC(), res.Last.UTC()
		out.FirstOccurredAt, out.LastOccurredAt = &first, &last
	}
	return out
}

// RedriveOutput is what `outbox redrive --json` prints.
type RedriveOutput struct {
	Pipeline string `json:"pipeline"`
	// Queue is the dead-letter queue's name.
	Queue  string `json:"queue"`
	DryRun bool   `json:"dryRun"`
	// Messages are the messages read, each a batch's metadata.
	Messages []DLQMessage `json:"messages"`
	// Deleted counts the messages deleted (their events are published);
	// Left those that stay in the queue.
	Deleted int `json:"deleted"`
	Left    int `json:"left"`
	// Pending counts the events still pending that the batches left may
	// hold.
	Pending int `json:"pending"`
	// InFlight counts the messages another reader held, when none could
	// be read.
	InFlight int `json:"inFlight"`
	// Reconciler is what redrive ran; null in a dry run or with an empty
	// queue.
	Reconciler *ReconcilerRuns `json:"reconciler"`
}

func newRedriveOutput(pipeline, queue string, dryRun bool, res RedriveResult, runs *ReconcilerRuns) RedriveOutput {
	out := RedriveOutput{Pipeline: pipeline, Queue: queue, DryRun: dryRun, Messages: res.Messages, Pending: res.Pending, InFlight: res.InFlight, Reconciler: runs}
	if out.Messages == nil {
		out.Messages = []DLQMessage{}
	}
	for _, m := range res.Messages {
		if m.Deleted {
			out.Deleted++
		}
	}
	if !dryRun {
		out.Left = len(res.Messages) - out.Deleted
	}
	return out
}
