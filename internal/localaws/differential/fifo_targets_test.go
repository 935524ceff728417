package differential_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	schedtypes "github.com/aws/aws-sdk-go-v2/service/scheduler/types"
)

func TestDifferentialEventBridgeFIFO(t *testing.T) {
	compareOn(t, "events/fifo", eventbridge.NewFromConfig, func(r *run, c *eventbridge.Client) {
		url, arn := r.queueWith("diff-events.fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"})
		plainURL, plainARN := r.queueWith("diff-events-nocbd.fifo", map[string]string{"FifoQueue": "true"})
		if arn == "" || plainARN == "" {
			return
		}
		put := func(step, rule string, targets ...ebtypes.Target) {
			out, err := c.PutTargets(r.ctx, &eventbridge.PutTargetsInput{Rule: aws.String(rule), Targets: targets})
			r.rec(step, out, err)
		}
		target := func(id, arn, group string) ebtypes.Target {
			t := ebtypes.Target{Id: aws.String(id), Arn: aws.String(arn)}
			if group != "" {
				t.SqsParameters = &ebtypes.SqsParameters{MessageGroupId: aws.String(group)}
			}
			return t
		}
		put("PutTargets without SqsParameters to a missing rule", "diff-fifo-missing", target("q", arn, ""))
		rule, err := c.PutRule(r.ctx, &eventbridge.PutRuleInput{Name: aws.String("diff-fifo-rule"), EventPattern: aws.String(`{"source":["orders"]}`)})
		r.rec("PutRule", rule, err)
		if err != nil {
			return
		}
		r.allowSend(url, arn, "events.amazonaws.com", *rule.RuleArn)
		r.allowSend(plainURL, plainARN, "events.amazonaws.com", *rule.RuleArn)
		put("PutTargets without SqsParameters", "diff-fifo-rule", target("q", arn, ""))
		put("PutTargets with a MessageGroupId over 100 characters", "diff-fifo-rule", target("q", arn, strings.Repeat("g", 101)))
		put("PutTargets", "diff-fifo-rule", target("q", arn, "orders"), target("p", plainARN, "orders"))
		lt, err := c.ListTargetsByRule(r.ctx, &eventbridge.ListTargetsByRuleInput{Rule: aws.String("diff-fifo-rule")})
		if err == nil {
			sort.Slice(lt.Targets, func(i, j int) bool { return *lt.Targets[i].Id < *lt.Targets[j].Id })
		}
		r.rec("ListTargetsByRule", lt, err)
		var entries []ebtypes.PutEventsRequestEntry
		for _, n := range []string{"1", "2", "3"} {
			entries = append(entries, ebtypes.PutEventsRequestEntry{Source: aws.String("orders"), DetailType: aws.String("OrderPlaced"), Detail: aws.String(`{"n":` + n + `}`)})
		}
		pe, err := c.PutEvents(r.ctx, &eventbridge.PutEventsInput{Entries: entries})
		r.rec("PutEvents", pe, err)
		r.fifoEvents("delivered to the FIFO queue", url, 3)
		r.receiveBodies("delivered to the FIFO queue without ContentBasedDeduplication", plainURL, 10)
		_, err = c.RemoveTargets(r.ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String("diff-fifo-rule"), Ids: []string{"q", "p"}})
		r.rec("RemoveTargets", nil, err)
		_, err = c.DeleteRule(r.ctx, &eventbridge.DeleteRuleInput{Name: aws.String("diff-fifo-rule")})
		r.rec("DeleteRule", nil, err)
	})
}

// fifoEvents drains (bounded) want EventBridge events from a FIFO queue and
// records, ordered by detail, each one's detail, its message group, and
// whether its deduplication id is the SHA-256 of its body (content-based
// deduplication): the envelopes' ids make the ids themselves differ.
func (r *run) fifoEvents(name, url string, want int) {
	var out []map[string]any
	for _, m := range r.collectFIFO(name, url, want) {
		var ev struct{ Detail json.RawMessage }
		_ = json.Unmarshal([]byte(aws.ToString(m.Body)), &ev)
		sum := sha256.Sum256([]byte(aws.ToString(m.Body)))
		out = append(out, map[string]any{"Detail": string(ev.Detail), "MessageGroupId": m.Attributes["MessageGroupId"],
			"DeduplicationIdIsContentSHA256": m.Attributes["MessageDeduplicationId"] == hex.EncodeToString(sum[:])})
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["Detail"].(string) < out[j]["Detail"].(string) })
	r.note(name, out)
}

func TestDifferentialSchedulerFIFO(t *testing.T) {
	compareOn(t, "scheduler/fifo", scheduler.NewFromConfig, func(r *run, c *scheduler.Client) {
		_, arn := r.queueWith("diff-schedule.fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"})
		role := r.schedulerRole("diff-scheduler-fifo")
		if role == nil || arn == "" {
			return
		}
		for _, tc := range []struct {
			name, group, dlq string
		}{
			{"grouped", "jobs", ""},
			{"empty-group", "", ""},
			{"long-group", strings.Repeat("g", 129), ""},
			{"fifo-dead-letter-queue", "jobs", strings.Replace(arn, ".fifo", "-dlq.fifo", 1)},
		} {
			tgt := &schedtypes.Target{Arn: aws.String(arn), RoleArn: role, Input: aws.String(`{"job":"reconcile"}`),
				SqsParameters: &schedtypes.SqsParameters{MessageGroupId: aws.String(tc.group)}}
			if tc.dlq != "" {
				tgt.DeadLetterConfig = &schedtypes.DeadLetterConfig{Arn: aws.String(tc.dlq)}
			}
			out, err := c.CreateSchedule(r.ctx, &scheduler.CreateScheduleInput{Name: aws.String("diff-fifo-" + tc.name), ScheduleExpression: aws.String("rate(1 hour)"),
				Target: tgt, FlexibleTimeWindow: &schedtypes.FlexibleTimeWindow{Mode: schedtypes.FlexibleTimeWindowModeOff}})
			r.rec("CreateSchedule "+tc.name, out, err)
		}
		get, err := c.GetSchedule(r.ctx, &scheduler.GetScheduleInput{Name: aws.String("diff-fifo-grouped")})
		var target *schedtypes.Target
		if get != nil {
			target = get.Target
		}
		r.rec("GetSchedule's target", target, err)
		_, err = c.DeleteSchedule(r.ctx, &scheduler.DeleteScheduleInput{Name: aws.String("diff-fifo-grouped")})
		r.rec("DeleteSchedule", nil, err)
	})
}
