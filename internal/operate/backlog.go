package operate

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"

	"github.com/outboxkit/terraform-provider-outbox/internal/durfmt"
)

// DefaultRateWindow is the window over which status measures the
// publishing rate: three runs of the reconciler's default schedule
// (rate(5 minutes)), so that one run late by its flexible window does not
// read as a stop.
const DefaultRateWindow = 15 * time.Minute

// The states of a backlog (BacklogStatus.State).
const (
	// BacklogNone: nothing is pending.
	BacklogNone = "none"
	// BacklogCatchingUp: events are published and the backlog shrinks or
	// its oldest event is no older than at the reconciler's earlier run.
	BacklogCatchingUp = "catching-up"
	// BacklogFallingBehind: events are published, but the backlog grows
	// and its oldest event gets older.
	BacklogFallingBehind = "falling-behind"
	// BacklogPublishing: events are published; no reconciler run to
	// compare the backlog with (the reconciler is disabled or has not run
	// for a day).
	BacklogPublishing = "publishing"
	// BacklogStuck: events are pending and none was published in the
	// window.
	BacklogStuck = "stuck"
)

// BacklogStatus is how fast the pending events are published, and when
// they will all be: Pending divided by RatePerSecond.
type BacklogStatus struct {
	// Pending is Status.Pending.Total.
	Pending int `json:"pending"`
	// RateWindowSeconds is the window the rate is measured over, ending now.
	RateWindowSeconds float64 `json:"rateWindowSeconds"`
	// Published counts the events published in the window, as the
	// reconciler's runs (each worker's report, when several run at once)
	// and the relay's invocations logged them.
	Published int `json:"published"`
	// ReconcilerRuns and RelayInvocations count the log lines read.
	ReconcilerRuns   int `json:"reconcilerRuns"`
	RelayInvocations int `json:"relayInvocations"`
	// RatePerSecond is Published divided by the window.
	RatePerSecond float64 `json:"ratePerSecond"`
	// ETA is "none" without a backlog, "unknown" when nothing was published
	// in the window, and otherwise the time left, such as "12m30s".
	ETA string `json:"eta"`
	// ETASeconds and DoneAt are the time left and the time the backlog is
	// estimated to be done; null when ETA is "none" or "unknown".
	ETASeconds *float64   `json:"etaSeconds"`
	DoneAt     *time.Time `json:"doneAt"`
	// State is none, catching-up, falling-behind, publishing or stuck.
	State string `json:"state"`
	// Compared says what the state compares: the backlog now against the
	// reconciler's run before the window, or at its start.
	Compared string `json:"compared,omitempty"`
	// RelayUnread says why the relay's log group could not be read (its
	// share is then not in Published); absent when it was.
	RelayUnread string `json:"relayUnread,omitempty"`
	// window is the rate window as a duration; oldest is the age of the
	// oldest pending event.
	window, oldest time.Duration
}

// maxETASeconds bounds an estimate: ten years.
const maxETASeconds = 10 * 365 * 24 * 3600

// relayBatchProcessed is the message the relay logs after each stream batch.
const relayBatchProcessed = "stream batch processed"

// eachLogLine calls fn with each line of group since start that contains
// message; a missing group has none.
func (c *Clients) eachLogLine(ctx context.Context, group, message string, start time.Time, fn func(msg string, ts int64)) error {
	pages := cloudwatchlogs.NewFilterLogEventsPaginator(c.Logs, &cloudwatchlogs.FilterLogEventsInput{
		LogGroupName:  aws.String(group),
		FilterPattern: aws.String(strconv.Quote(message)),
		StartTime:     aws.Int64(start.UnixMilli()),
	})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if isNotFound(err) {
			return nil
		}
		if err != nil {
			return call("logs:FilterLogEvents", "log group "+group, err)
		}
		for _, e := range out.Events {
			fn(aws.ToString(e.Message), aws.ToInt64(e.Timestamp))
		}
	}
	return nil
}

// relayPublished reads the count of events published from the relay's
// JSON log line of a stream batch, and the line's time.
func relayPublished(msg string, ts int64) (time.Time, int, bool) {
	i := strings.IndexByte(msg, '{')
	if i < 0 {
		return time.Time{}, 0, false
	}
	var line struct {
		Time      time.Time `json:"time"`
		Msg       string    `json:"msg"`
		Published int       `json:"published"`
	}
	if json.Unmarshal([]byte(msg[i:]), &line) != nil || line.Msg != relayBatchProcessed {
		return time.Time{}, 0, false
	}
	if line.Time.IsZero() {
		line.Time = time.UnixMilli(ts)
	}
	return line.Time, line.Published, true
}

// inWindow reports whether t is in the window of length w ending at now.
func inWindow(t, now time.Time, w time.Duration) bool {
	return t.After(now.Add(-w)) && !t.After(now)
}

// relayRate adds to b the events the relay published in the window. A
// role that may read only the reconciler's log group (all that status
// needed before it measured the rate) gets the reconciler's share, and
// RelayUnread says what to grant.
func (c *Clients) relayRate(ctx context.Context, p *Pipeline, now time.Time, b *BacklogStatus) error {
	published, invocations := 0, 0
	err := c.eachLogLine(ctx, p.Names.RelayLogGroup, relayBatchProcessed, now.Add(-b.window), func(msg string, ts int64) {
		if at, n, ok := relayPublished(msg, ts); ok && inWindow(at, now, b.window) {
			published += n
			invocations++
		}
	})
	var denied *PermissionError
	if errors.As(err, &denied) {
		b.RelayUnread = fmt.Sprintf("%s on %s was denied: grant it to count the relay's invocations", denied.Action, denied.Resource)
		return nil
	}
	b.Published += published
	b.RelayInvocations += invocations
	return err
}

// estimate completes b from the pending events, the reconciler's runs and
// what the relay published: the rate, the time left and the state.
func (b *BacklogStatus) estimate(now time.Time, pending PendingStatus, runs []ReconcileRun) {
	b.Pending, b.oldest = pending.Total, pending.Oldest
	b.RateWindowSeconds = b.window.Seconds()
	// The backlog is compared with the reconciler's earliest run in the
	// window, or else its last run before.
	var first, before *ReconcileRun
	for i, run := range runs {
		switch {
		case inWindow(run.Time, now, b.window):
			b.Published += run.Published
			b.ReconcilerRuns++
			if first == nil || run.Time.Before(first.Time) {
				first = &runs[i]
			}
		case !run.Time.After(now) && (before == nil || run.Time.After(before.Time)):
			before = &runs[i]
		}
	}
	ref := cmp.Or(first, before)
	b.RatePerSecond = float64(b.Published) / b.window.Seconds()
	switch {
	case b.Pending == 0:
		b.ETA, b.State = "none", BacklogNone
		return
	case b.Published == 0:
		b.ETA, b.State = "unknown", BacklogStuck
		return
	}
	// Capped at ten years, well within a time.Duration.
	left := time.Duration(min(float64(b.Pending)/b.RatePerSecond, maxETASeconds) * float64(time.Second)).Round(time.Second)
	seconds, done := left.Seconds(), now.Add(left).UTC()
	b.ETA, b.ETASeconds, b.DoneAt = durfmt.Short(left), &seconds, &done
	if ref == nil {
		b.State = BacklogPublishing
		return
	}
	b.Compared = fmt.Sprintf("the reconciler's run at %s found %d pending, the oldest %s old",
		ref.Time.UTC().Format(time.RFC3339), ref.Found, round(time.Duration(ref.oldestPendingAge*float64(time.Second))))
	b.State = BacklogFallingBehind
	if b.Pending < ref.Found || pending.Oldest.Seconds() <= ref.oldestPendingAge {
		b.State = BacklogCatchingUp
	}
}

// text is the state as the status prints it.
func (b BacklogStatus) text() string {
	w := durfmt.Short(b.window)
	switch b.State {
	case BacklogNone:
		return "nothing pending"
	case BacklogStuck:
		return fmt.Sprintf("STUCK: %s pending and nothing published in the last %s", plural(b.Pending, "event", "events"), w)
	case BacklogPublishing:
		return "publishing; no reconciler run to compare the backlog with"
	}
	now := fmt.Sprintf("%d pending, the oldest %s old, where %s", b.Pending, round(b.oldest), b.Compared)
	if b.State == BacklogCatchingUp {
		return "catching up: " + now
	}
	return "falling behind: " + now
}

// progress is what a problem about old pending events adds: whether they
// are being published, and when they will be done.
func (b BacklogStatus) progress() string {
	switch {
	case b.window == 0:
		return ""
	case b.DoneAt == nil:
		return fmt.Sprintf(" and nothing was published in the last %s", durfmt.Short(b.window))
	}
	return fmt.Sprintf(", but %s at %.3g events/s, done in about %s", strings.ReplaceAll(b.State, "-", " "), b.RatePerSecond, b.ETA)
}
