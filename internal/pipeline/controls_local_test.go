package pipeline

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
)

func TestLocalScheduleControls(t *testing.T) {
	t.Parallel()
	_, c := startStack(t, append(coreServices, "scheduler")...)
	ctx := testContext(t)
	if _, err := c.Scheduler.CreateScheduleGroup(ctx, &scheduler.CreateScheduleGroupInput{Name: aws.String("ops")}); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Name: "scheduled", Reconciler: ReconcilerSpec{
		ScheduleExpression: "cron(0/10 * * * ? *)", ScheduleTimezone: "Europe/Paris", FlexibleTimeWindowMinutes: 3, ScheduleGroup: "ops",
	}}
	st, err := c.Create(ctx, spec)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	t.Cleanup(func() { _, _ = c.Delete(context.Background(), st) })
	check := func(when, group, tz string, window int32) {
		t.Helper()
		have, err := c.getSchedule(ctx, st.ScheduleName, group)
		if err != nil || have == nil {
			t.Fatalf("%s: no schedule in group %s (%v)", when, group, err)
		}
		if aws.ToString(have.ScheduleExpressionTimezone) != tz || aws.ToInt32(have.FlexibleTimeWindow.MaximumWindowInMinutes) != window {
			t.Fatalf("%s: time zone %q, window %d; want %q, %d", when, aws.ToString(have.ScheduleExpressionTimezone), aws.ToInt32(have.FlexibleTimeWindow.MaximumWindowInMinutes), tz, window)
		}
	}
	check("created", "ops", "Europe/Paris", 3)
	if _, drift := mustRead(t, ctx, c, spec, st); !drift.None() {
		t.Fatalf("Read after Create: %s", drift)
	}
	found, _, err := c.Lookup(ctx, "scheduled")
	if err != nil {
		t.Fatal(err)
	}
	if r := found.Reconciler; r.ScheduleGroup != "ops" || r.ScheduleTimezone != "Europe/Paris" || r.FlexibleTimeWindowMinutes != 3 {
		t.Errorf("Lookup found %+v", r)
	}

	// Out of band, then reported.
	have, err := c.getSchedule(ctx, st.ScheduleName, "ops")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Scheduler.UpdateSchedule(ctx, &scheduler.UpdateScheduleInput{
		Name: aws.String(st.ScheduleName), GroupName: aws.String("ops"), ScheduleExpression: aws.String(spec.Reconciler.ScheduleExpression),
		ScheduleExpressionTimezone: aws.String("UTC"), FlexibleTimeWindow: spec.Reconciler.flexibleWindow(), Target: have.Target,
	}); err != nil {
		t.Fatal(err)
	}
	if _, drift := mustRead(t, ctx, c, spec, st); !hasChange(drift, ComponentSchedule, "schedule_timezone") {
		t.Fatalf("Read misses a time zone changed out of band: %s", drift)
	}

	// In place: the default group, time zone and no window.
	spec.Reconciler.ScheduleTimezone, spec.Reconciler.FlexibleTimeWindowMinutes, spec.Reconciler.ScheduleGroup = "", 0, ""
	if st, err = c.Update(ctx, spec, st); err != nil {
		t.Fatalf("Update: %v", err)
	}
	check("updated", ScheduleGroup, "UTC", 0)
	if old, err := c.getSchedule(ctx, st.ScheduleName, "ops"); err != nil || old != nil {
		t.Fatalf("the schedule is still in group ops after the move (%v)", err)
	}
	if _, drift := mustRead(t, ctx, c, spec, st); !drift.None() {
		t.Fatalf("Read after Update: %s", drift)
	}
	for _, bad := range []ReconcilerSpec{{ScheduleTimezone: "Mars/Olympus"}, {FlexibleTimeWindowMinutes: 1441}, {ScheduleGroup: "no spaces"}} {
		if err := (Spec{Name: "x", Reconciler: bad}).Validate(); err == nil {
			t.Errorf("Validate accepts %+v", bad)
		}
	}
}

