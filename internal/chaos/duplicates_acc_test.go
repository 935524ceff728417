package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

// killAt is one process killed in the middle of an invocation.
type killAt struct {
	function string
	at       time.Time
}

// killed records a kill of function's process now.
func (r *run) killed(function string) {
	r.killMu.Lock()
	r.killLog = append(r.killLog, killAt{function: function, at: time.Now()})
	r.killMu.Unlock()
}

// killNear returns the kill nearest to t within [t-before, t+after],
// before being the killed function's timeout, and whether there was one.
func (r *run) killNear(t time.Time, before map[string]time.Duration, after time.Duration) (killAt, bool) {
	r.killMu.Lock()
	defer r.killMu.Unlock()
	var best killAt
	found := false
	for _, k := range r.killLog {
		if k.at.Before(t.Add(-before[k.function])) || k.at.After(t.Add(after)) {
			continue
		}
		if !found || k.at.Sub(t).Abs() < best.at.Sub(t).Abs() {
			best, found = k, true
		}
	}
	return best, found
}

// explainDuplicates logs, for the first duplicates, when the event was
// received, the kill nearest to its first reception and what the
// functions logged about the event (a publish whose mark failed, a hold
// lost). A kill between the publish and the mark leaves the event pending:
// the retried batch, or the reconciler once the item's hold ends (minutes
// later, after failed holds), publishes it again. So a repeat is counted
// as a kill's when a kill came within the killed function's timeout before
// the first reception or shortly after it (the consumer's polling). It
// returns that count and the repeats in all.
func (r *run) explainDuplicates(ctx context.Context, start time.Time, timeouts map[string]time.Duration) (nearKill, repeats int) {
	const shown = 20
	rel := func(t time.Time) time.Duration { return t.Sub(start).Round(100 * time.Millisecond) }
	for i, d := range r.tally.Duplicates(1 << 30) {
		k, ok := r.killNear(d.First, timeouts, 10*time.Second)
		repeats += len(d.Repeats)
		if ok {
			nearKill += len(d.Repeats)
		}
		if i >= shown {
			continue
		}
		cause := "no kill near the first reception"
		if ok {
			cause = fmt.Sprintf("%s killed at +%s", k.function, rel(k.at))
		}
		again := make([]string, len(d.Repeats))
		for j, at := range d.Repeats {
			again[j] = "+" + rel(at).String()
		}
		r.t.Logf("duplicate %s: received at +%s, again at %s; %s; logged: %s", d.ID, rel(d.First),
			strings.Join(again, ", "), cause, strings.Join(r.logMentions(ctx, d.ID, start), "; "))
	}
	return nearKill, repeats
}

// logMentions returns what the relay and the reconciler logged about the
// event id: each line's time, function, message and reason.
func (r *run) logMentions(ctx context.Context, id string, start time.Time) []string {
	names := provision.NamesFor(r.pipelineName)
	var out []string
	for _, group := range []string{names.RelayLogGroup, names.ReconcilerLogGroup} {
		res, err := r.logs.FilterLogEvents(ctx, &cloudwatchlogs.FilterLogEventsInput{
			LogGroupName: aws.String(group), FilterPattern: aws.String(`"` + id + `"`), Limit: aws.Int32(5),
		})
		if err != nil {
			out = append(out, fmt.Sprintf("searching %s: %v", group, err))
			continue
		}
		for _, e := range res.Events {
			var line struct {
				Msg       string `json:"msg"`
				Reason    string `json:"reason"`
				Published *bool  `json:"eventPublished"`
			}
			msg := aws.ToString(e.Message)
			if json.Unmarshal([]byte(msg), &line) == nil && line.Msg != "" {
				msg = line.Msg
				if line.Published != nil {
					msg += fmt.Sprintf(" (eventPublished=%v)", *line.Published)
				}
				if line.Reason != "" {
					msg += ": " + line.Reason
				}
			}
			at := time.UnixMilli(aws.ToInt64(e.Timestamp)).Sub(start).Round(100 * time.Millisecond)
			out = append(out, fmt.Sprintf("+%s %s %.200s", at, group[strings.LastIndex(group, "/")+1:], msg))
		}
	}
	if len(out) == 0 {
		return []string{"nothing"}
	}
	return out
}
