package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"

	"github.com/outboxkit/terraform-provider-outbox/internal/pipeline"
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

// lastKillBefore returns the latest kill at or before t and whether there
// was one.
func (r *run) lastKillBefore(t time.Time) (killAt, bool) {
	r.killMu.Lock()
	defer r.killMu.Unlock()
	var last killAt
	found := false
	for _, k := range r.killLog {
		if !k.at.After(t) && (!found || k.at.After(last.at)) {
			last, found = k, true
		}
	}
	return last, found
}

// explainDuplicates logs, for the first duplicates, when the event was
// received, the latest kill before each repeat and what the functions
// logged about the event (a publish whose mark failed, a hold lost), and
// counts how many
// repeats came within window of a kill: those a kill between the
// publish and the mark explains (the batch, or the reconciler's page, is
// then published again). It returns that count and the repeats in all.
func (r *run) explainDuplicates(ctx context.Context, start time.Time, window time.Duration) (nearKill, repeats int) {
	const shown = 20
	for i, d := range r.tally.Duplicates(1 << 30) {
		for _, at := range d.Repeats {
			repeats++
			k, ok := r.lastKillBefore(at)
			near := ok && at.Sub(k.at) <= window && !k.at.Before(d.First.Add(-window))
			if near {
				nearKill++
			}
			if i >= shown {
				continue
			}
			cause := "no kill before it"
			if ok {
				cause = fmt.Sprintf("the latest kill: %s at +%s, %s before", k.function, k.at.Sub(start).Round(100*time.Millisecond), at.Sub(k.at).Round(100*time.Millisecond))
			}
			r.t.Logf("duplicate %s: received at +%s, again at +%s; %s; logged: %s", d.ID,
				d.First.Sub(start).Round(100*time.Millisecond), at.Sub(start).Round(100*time.Millisecond), cause,
				strings.Join(r.logMentions(ctx, d.ID, start), "; "))
		}
	}
	return nearKill, repeats
}

// logMentions returns what the relay and the reconciler logged about the
// event id: each line's time, function, message and reason.
func (r *run) logMentions(ctx context.Context, id string, start time.Time) []string {
	names := pipeline.NamesFor(r.pipelineName)
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
