package pipeline

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// ReconcileInput is the payload that the schedule sends to the reconciler.
const ReconcileInput = `{"action":"reconcile"}`

func (c *Clients) getSchedule(ctx context.Context, name string) (*scheduler.GetScheduleOutput, error) {
	out, err := c.Scheduler.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String(name), GroupName: aws.String(ScheduleGroup)})
	if awsops.IsNotFound(err) {
		return nil, nil
	}
	return out, err
}

// scheduleDiff lists what differs between the schedule and the spec.
func scheduleDiff(s Spec, st State, have *scheduler.GetScheduleOutput) []string {
	var diff []string
	if aws.ToString(have.ScheduleExpression) != s.Reconciler.ScheduleExpression {
		diff = append(diff, "schedule_expression")
	}
	if have.State != types.ScheduleStateEnabled {
		diff = append(diff, "state")
	}
	t := have.Target
	if t == nil || aws.ToString(t.Arn) != st.ReconcilerFunctionARN || aws.ToString(t.RoleArn) != st.SchedulerRoleARN {
		diff = append(diff, "target")
	} else if !awsops.SamePolicy(aws.ToString(t.Input), ReconcileInput) {
		diff = append(diff, "input")
	}
	return diff
}

func (c *Clients) ensureSchedule(ctx context.Context, s Spec, st *State, known bool) error {
	name := NamesFor(s.Name).Schedule
	have, err := c.getSchedule(ctx, name)
	if err != nil {
		return fmt.Errorf("reading reconcile schedule (%s): %w", name, err)
	}
	target := &types.Target{
		Arn:         aws.String(st.ReconcilerFunctionARN),
		RoleArn:     aws.String(st.SchedulerRoleARN),
		Input:       aws.String(ReconcileInput),
		RetryPolicy: &types.RetryPolicy{MaximumRetryAttempts: aws.Int32(0)},
	}
	window := &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff}
	desc := aws.String("Outbox pipeline " + s.Name + ": republishes pending events that the stream missed")
	switch {
	case have == nil:
		var out *scheduler.CreateScheduleOutput
		err := c.retryPropagation(ctx, func() (err error) {
			out, err = c.Scheduler.CreateSchedule(ctx, &scheduler.CreateScheduleInput{
				Name: aws.String(name), GroupName: aws.String(ScheduleGroup),
				ScheduleExpression: aws.String(s.Reconciler.ScheduleExpression),
				FlexibleTimeWindow: window, Target: target, State: types.ScheduleStateEnabled, Description: desc,
			})
			return err
		})
		if err != nil {
			return fmt.Errorf("creating reconcile schedule (%s): %w", name, err)
		}
		st.ScheduleName, st.ScheduleARN = name, aws.ToString(out.ScheduleArn)
	case !known:
		return fmt.Errorf("creating reconcile schedule (%s): a schedule of that name already exists in group %s: delete it or choose another pipeline name", name, ScheduleGroup)
	default:
		st.ScheduleName, st.ScheduleARN = name, aws.ToString(have.Arn)
		if len(scheduleDiff(s, *st, have)) == 0 {
			return nil
		}
		err := c.retryPropagation(ctx, func() error {
			_, err := c.Scheduler.UpdateSchedule(ctx, &scheduler.UpdateScheduleInput{
				Name: aws.String(name), GroupName: aws.String(ScheduleGroup),
				ScheduleExpression: aws.String(s.Reconciler.ScheduleExpression),
				FlexibleTimeWindow: window, Target: target, State: types.ScheduleStateEnabled, Description: desc,
			})
			return err
		})
		if err != nil {
			return fmt.Errorf("updating reconcile schedule (%s): %w", name, err)
		}
	}
	return nil
}

func (c *Clients) deleteSchedule(ctx context.Context, st *State) error {
	if st.ScheduleName == "" {
		return nil
	}
	_, err := c.Scheduler.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{Name: aws.String(st.ScheduleName), GroupName: aws.String(ScheduleGroup)})
	if err := awsops.IgnoreNotFound(err); err != nil {
		return fmt.Errorf("deleting reconcile schedule (%s): %w", st.ScheduleName, err)
	}
	st.ScheduleName, st.ScheduleARN = "", ""
	return nil
}
