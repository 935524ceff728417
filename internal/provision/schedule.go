package provision

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/awsops"
)

// ReconcileInput is the payload that the schedule sends to the reconciler.
const ReconcileInput = `{"action":"reconcile"}`

// group is the schedule's group as recorded ("" is the default group).
func (st State) group() string {
	if st.ScheduleGroup == "" {
		return ScheduleGroup
	}
	return st.ScheduleGroup
}

func (c *Provisioner) getSchedule(ctx context.Context, name, group string) (*scheduler.GetScheduleOutput, error) {
	out, err := c.Scheduler.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String(name), GroupName: aws.String(group)})
	if err != nil {
		return nil, awsops.NotFound("reconcile schedule", name, err)
	}
	return out, nil
}

// flexibleWindow is the schedule's flexible time window.
func (r ReconcilerSpec) flexibleWindow() *types.FlexibleTimeWindow {
	if r.FlexibleTimeWindowMinutes > 0 {
		return &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeFlexible, MaximumWindowInMinutes: aws.Int32(r.FlexibleTimeWindowMinutes)}
	}
	return &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff}
}

// scheduleDiff lists what differs between the schedule and the spec.
func scheduleDiff(s Spec, st State, have *scheduler.GetScheduleOutput) []string {
	r := s.Reconciler
	var diff awsops.Fields
	add := diff.Add
	add(aws.ToString(have.ScheduleExpression) != r.ScheduleExpression, "schedule_expression")
	tz := aws.ToString(have.ScheduleExpressionTimezone)
	add(tz != r.ScheduleTimezone && (tz != "" || r.ScheduleTimezone != DefaultScheduleTimezone), "schedule_timezone")
	w := have.FlexibleTimeWindow
	add(w == nil || w.Mode != r.flexibleWindow().Mode || aws.ToInt32(w.MaximumWindowInMinutes) != r.FlexibleTimeWindowMinutes, "flexible_time_window")
	add(have.State != types.ScheduleStateEnabled, "state")
	t := have.Target
	if t == nil || aws.ToString(t.Arn) != st.ReconcilerFunctionARN || aws.ToString(t.RoleArn) != st.SchedulerRoleARN {
		diff = append(diff, "target")
	} else if !awsops.SamePolicy(aws.ToString(t.Input), ReconcileInput) {
		diff = append(diff, "input")
	}
	return diff
}

func (c *Provisioner) ensureSchedule(ctx context.Context, s Spec, st *State, known bool) error {
	name, group := NamesFor(s.Name).Schedule, s.Reconciler.ScheduleGroup
	if known && st.group() != group {
		// A schedule cannot move between groups: it is recreated.
		if err := c.deleteSchedule(ctx, st); err != nil {
			return err
		}
		known = false
	}
	have, err := c.getSchedule(ctx, name, group)
	absent := errors.Is(err, awsops.ErrNotFound)
	if err != nil && !absent {
		return fmt.Errorf("reading reconcile schedule (%s in group %s): %w", name, group, err)
	}
	r := s.Reconciler
	target := &types.Target{
		Arn:         aws.String(st.ReconcilerFunctionARN),
		RoleArn:     aws.String(st.SchedulerRoleARN),
		Input:       aws.String(ReconcileInput),
		RetryPolicy: &types.RetryPolicy{MaximumRetryAttempts: aws.Int32(0)},
	}
	desc := aws.String("Outbox pipeline " + s.Name + ": republishes pending events that the stream missed")
	switch {
	case absent:
		var out *scheduler.CreateScheduleOutput
		err := c.retryPropagation(ctx, func() (err error) {
			out, err = c.Scheduler.CreateSchedule(ctx, &scheduler.CreateScheduleInput{
				Name: aws.String(name), GroupName: aws.String(group),
				ScheduleExpression: aws.String(r.ScheduleExpression), ScheduleExpressionTimezone: aws.String(r.ScheduleTimezone),
				FlexibleTimeWindow: r.flexibleWindow(), Target: target, State: types.ScheduleStateEnabled, Description: desc,
			})
			return err
		})
		if awsops.IsNotFound(err) && group != ScheduleGroup {
			return fmt.Errorf("creating reconcile schedule (%s): the schedule group %s does not exist: create it first (aws_scheduler_schedule_group), or leave the group unset for the default group", name, group)
		}
		if err != nil {
			return fmt.Errorf("creating reconcile schedule (%s in group %s): %w", name, group, err)
		}
		st.ScheduleName, st.ScheduleARN = name, aws.ToString(out.ScheduleArn)
	case !known:
		return fmt.Errorf("creating reconcile schedule (%s): a schedule of that name already exists in group %s: delete it or choose another pipeline name", name, group)
	default:
		st.ScheduleName, st.ScheduleARN = name, aws.ToString(have.Arn)
		if len(scheduleDiff(s, *st, have)) == 0 {
			break
		}
		err := c.retryPropagation(ctx, func() error {
			_, err := c.Scheduler.UpdateSchedule(ctx, &scheduler.UpdateScheduleInput{
				Name: aws.String(name), GroupName: aws.String(group),
				ScheduleExpression: aws.String(r.ScheduleExpression), ScheduleExpressionTimezone: aws.String(r.ScheduleTimezone),
				FlexibleTimeWindow: r.flexibleWindow(), Target: target, State: types.ScheduleStateEnabled, Description: desc,
			})
			return err
		})
		if err != nil {
			return fmt.Errorf("updating reconcile schedule (%s in group %s): %w", name, group, err)
		}
	}
	st.ScheduleGroup = ""
	if group != ScheduleGroup {
		st.ScheduleGroup = group
	}
	return nil
}

func (c *Provisioner) deleteSchedule(ctx context.Context, st *State) error {
	if st.ScheduleName == "" {
		return nil
	}
	_, err := c.Scheduler.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{Name: aws.String(st.ScheduleName), GroupName: aws.String(st.group())})
	if err := awsops.IgnoreNotFound(err); err != nil {
		return fmt.Errorf("deleting reconcile schedule (%s in group %s): %w", st.ScheduleName, st.group(), err)
	}
	st.ScheduleName, st.ScheduleARN, st.ScheduleGroup = "", "", ""
	return nil
}

func (c *Provisioner) readSchedule(ctx context.Context, p *pass) error {
	st := p.st
	return readRecorded(p, ComponentSchedule, "reconcile schedule", st.ScheduleName,
		func() (*scheduler.GetScheduleOutput, error) { return c.getSchedule(ctx, st.ScheduleName, st.group()) },
		func() { st.ScheduleName, st.ScheduleARN = "", "" },
		func(have *scheduler.GetScheduleOutput) []string { return scheduleDiff(p.s, *st, have) })
}

func (c *Provisioner) lookupSchedule(ctx context.Context, p *pass) error {
	n, r := p.names(), &p.s.Reconciler
	// A schedule that cannot be read is left out of the import.
	sch, err := c.findSchedule(ctx, n.Schedule)
	if err != nil {
		return nil //nolint:nilerr // see above
	}
	p.st.ScheduleName, p.st.ScheduleARN = n.Schedule, aws.ToString(sch.Arn)
	if g := aws.ToString(sch.GroupName); g != ScheduleGroup {
		p.st.ScheduleGroup, r.ScheduleGroup = g, g
	}
	r.ScheduleTimezone = aws.ToString(sch.ScheduleExpressionTimezone)
	if w := sch.FlexibleTimeWindow; w != nil {
		r.FlexibleTimeWindowMinutes = aws.ToInt32(w.MaximumWindowInMinutes)
	}
	r.ScheduleExpression = aws.ToString(sch.ScheduleExpression)
	return nil
}

// findSchedule finds the pipeline's schedule in any group, or returns a
// NotFoundError.
func (c *Provisioner) findSchedule(ctx context.Context, name string) (*scheduler.GetScheduleOutput, error) {
	p := scheduler.NewListSchedulesPaginator(c.Scheduler, &scheduler.ListSchedulesInput{NamePrefix: aws.String(name)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, sch := range page.Schedules {
			if aws.ToString(sch.Name) == name {
				return c.getSchedule(ctx, name, aws.ToString(sch.GroupName))
			}
		}
	}
	return nil, &awsops.NotFoundError{Kind: "reconcile schedule", ID: name}
}

var scheduleComponent = componentDef{
	Name: ComponentSchedule, Wanted: reconcilerEnabled, Required: true,
	Recorded: func(st State) bool { return st.ScheduleName != "" },
	Ensure: func(c *Provisioner, ctx context.Context, p *pass) error {
		return c.ensureSchedule(ctx, p.s, p.st, p.st.ScheduleName != "")
	},
	Read: (*Provisioner).readSchedule, Remove: (*Provisioner).deleteSchedule, Lookup: (*Provisioner).lookupSchedule,
}
