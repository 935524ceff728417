package scheduler_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/iam"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambdatest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	localscheduler "github.com/outboxkit/terraform-provider-outbox/internal/localaws/scheduler"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sqs"
)

// fakeClock is a manual clock: After channels fire when Advance passes
// their deadline.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []waiter
}

type waiter struct {
	at time.Time
	ch chan time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, waiter{c.now.Add(d), ch})
	return ch
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
		} else {
			w.ch <- c.now
		}
	}
	c.waiters = kept
}

// pending counts the waits that have not fired.
func (c *fakeClock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

type env struct {
	stack  *localaws.Stack
	sched  *scheduler.Client
	iam    *awsiam.Client
	sqs    *awssqs.Client
	lambda *lambdatest.RecordingInvoker
	clock  *fakeClock
	ctl    *control.Client
}

// start runs IAM (the authorizer), SQS, a fake Lambda and the scheduler on
// a manual clock.
func start(t *testing.T) env {
	t.Helper()
	stack := localawstest.StartEmpty(t)
	iamSvc := iam.New(stack.Env(), iam.Options{})
	stack.Env().SetAuthorizer(iamSvc)
	q := sqs.New(stack.Env())
	fl := &lambdatest.RecordingInvoker{}
	clock := &fakeClock{now: time.Now().UTC().Truncate(time.Second)}
	svc := localscheduler.New(stack.Env(), localscheduler.Deps{
		Functions: func() (localscheduler.FunctionInvoker, error) { return fl, nil },
		Queues:    func() (localscheduler.QueueSink, error) { return q, nil },
		Roles:     func() localscheduler.RoleChecker { return iamSvc },
	}, localscheduler.Options{Clock: clock, RetryBaseDelay: 5 * time.Millisecond, RetryMaxDelay: 20 * time.Millisecond})
	localawstest.Serve(t, stack, iamSvc, q, svc)
	cfg := localawstest.Config(stack)
	return env{stack, scheduler.NewFromConfig(cfg, func(o *scheduler.Options) { o.RetryMaxAttempts = 1 }),
		awsiam.NewFromConfig(cfg), awssqs.NewFromConfig(cfg), fl, clock, localawstest.Control(stack)}
}

const functionArn = "arn:aws:lambda:us-east-1:000000000000:function:target"

// role creates a role trusted by service with an inline policy allowing
// actions (none when empty).
func (e env) role(t *testing.T, name, service string, actions ...string) string {
	t.Helper()
	ctx := context.Background()
	out, err := e.iam.CreateRole(ctx, &awsiam.CreateRoleInput{RoleName: aws.String(name),
		AssumeRolePolicyDocument: aws.String(localawstest.TrustPolicy(service))})
	if err != nil {
		t.Fatal(err)
	}
	if len(actions) > 0 {
		doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["` + strings.Join(actions, `","`) + `"],"Resource":"*"}]}`
		if _, err := e.iam.PutRolePolicy(ctx, &awsiam.PutRolePolicyInput{RoleName: aws.String(name), PolicyName: aws.String("p"), PolicyDocument: aws.String(doc)}); err != nil {
			t.Fatal(err)
		}
	}
	return aws.ToString(out.Role.Arn)
}

// schedulerRole creates the role "sched", which EventBridge Scheduler may
// assume, allowed actions.
func (e env) schedulerRole(t *testing.T, actions ...string) string {
	t.Helper()
	return e.role(t, "sched", "scheduler.amazonaws.com", actions...)
}

// create creates a schedule and fails t if it cannot.
func (e env) create(t *testing.T, in *scheduler.CreateScheduleInput) {
	t.Helper()
	if _, err := e.sched.CreateSchedule(t.Context(), in); err != nil {
		t.Fatal(err)
	}
}

func input(name, expr, roleArn string) *scheduler.CreateScheduleInput {
	return &scheduler.CreateScheduleInput{
		Name: aws.String(name), ScheduleExpression: aws.String(expr),
		FlexibleTimeWindow: &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff},
		Target:             &types.Target{Arn: aws.String(functionArn), RoleArn: aws.String(roleArn), Input: aws.String(`{"hello":"world"}`)},
	}
}

// eventually waits up to 15 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	localawstest.Eventually(t, 15*time.Second, what, cond)
}

func apiError[T error](t *testing.T, err error, message string) {
	t.Helper()
	localawstest.WantErrorMessage[T](t, err, "the call", message)
}

// checkUpdateReplaces updates the schedule "nightly", created from in,
// and checks that UpdateSchedule replaces the whole configuration.
func (e env) checkUpdateReplaces(t *testing.T, role string, in *scheduler.CreateScheduleInput) {
	t.Helper()
	ctx := t.Context()
	_, err := e.sched.UpdateSchedule(ctx, &scheduler.UpdateScheduleInput{
		Name: aws.String("nightly"), ScheduleExpression: aws.String("rate(10 minutes)"),
		FlexibleTimeWindow: &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff},
		Target: &types.Target{Arn: aws.String(functionArn), RoleArn: aws.String(role),
			RetryPolicy: &types.RetryPolicy{MaximumRetryAttempts: aws.Int32(0)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.sched.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String("nightly"), GroupName: aws.String("default")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(got.ScheduleExpression) != "rate(10 minutes)" || got.State != types.ScheduleStateEnabled || got.Description != nil ||
		got.StartDate != nil || got.KmsKeyArn != nil || aws.ToString(got.ScheduleExpressionTimezone) != "UTC" ||
		got.Target.Input != nil || got.Target.DeadLetterConfig != nil || aws.ToInt32(got.Target.RetryPolicy.MaximumRetryAttempts) != 0 ||
		!got.LastModificationDate.After(got.CreationDate.Add(-time.Millisecond)) {
		t.Fatalf("GetSchedule after UpdateSchedule = %+v %+v", got, got.Target)
	}
	_, err = e.sched.UpdateSchedule(ctx, &scheduler.UpdateScheduleInput{Name: aws.String("missing"), ScheduleExpression: aws.String("rate(1 hour)"),
		FlexibleTimeWindow: in.FlexibleTimeWindow, Target: in.Target})
	apiError[*types.ResourceNotFoundException](t, err, "Schedule missing does not exist.")
}

func TestScheduleCRUD(t *testing.T) {
	t.Parallel()
	e := start(t)
	ctx := context.Background()
	role := e.schedulerRole(t, "lambda:InvokeFunction")
	in := input("nightly", "cron(0 3 * * ? *)", role)
	in.Description = aws.String("nightly job")
	in.ScheduleExpressionTimezone = aws.String("Europe/Paris")
	in.State = types.ScheduleStateDisabled
	in.ClientToken = aws.String("token-1")
	in.KmsKeyArn = aws.String("arn:aws:kms:us-east-1:000000000000:key/abc")
	in.FlexibleTimeWindow = &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeFlexible, MaximumWindowInMinutes: aws.Int32(15)}
	in.Target.DeadLetterConfig = &types.DeadLetterConfig{Arn: aws.String("arn:aws:sqs:us-east-1:000000000000:dlq")}
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	in.StartDate, in.EndDate = aws.Time(start), aws.Time(start.AddDate(1, 0, 0))
	created, err := e.sched.CreateSchedule(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	const arn = "arn:aws:scheduler:us-east-1:000000000000:schedule/default/nightly"
	if aws.ToString(created.ScheduleArn) != arn {
		t.Fatalf("ScheduleArn = %s", aws.ToString(created.ScheduleArn))
	}
	// A retry with the same client token succeeds; another create conflicts.
	if again, err := e.sched.CreateSchedule(ctx, in); err != nil || aws.ToString(again.ScheduleArn) != arn {
		t.Fatalf("idempotent CreateSchedule = %v, %v", again, err)
	}
	in.ClientToken = aws.String("token-2")
	_, err = e.sched.CreateSchedule(ctx, in)
	apiError[*types.ConflictException](t, err, "Schedule nightly already exists.")

	got, err := e.sched.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String("nightly")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(got.Arn) != arn || aws.ToString(got.GroupName) != "default" || got.State != types.ScheduleStateDisabled ||
		aws.ToString(got.ScheduleExpression) != "cron(0 3 * * ? *)" || aws.ToString(got.ScheduleExpressionTimezone) != "Europe/Paris" ||
		aws.ToString(got.Description) != "nightly job" || got.ActionAfterCompletion != types.ActionAfterCompletionNone ||
		aws.ToString(got.KmsKeyArn) != "arn:aws:kms:us-east-1:000000000000:key/abc" ||
		got.FlexibleTimeWindow.Mode != types.FlexibleTimeWindowModeFlexible || aws.ToInt32(got.FlexibleTimeWindow.MaximumWindowInMinutes) != 15 ||
		!got.StartDate.Equal(start) || !got.EndDate.Equal(start.AddDate(1, 0, 0)) || got.CreationDate == nil {
		t.Fatalf("GetSchedule = %+v", got)
	}
	tg := got.Target
	if aws.ToString(tg.Arn) != functionArn || aws.ToString(tg.RoleArn) != role || aws.ToString(tg.Input) != `{"hello":"world"}` ||
		aws.ToInt32(tg.RetryPolicy.MaximumRetryAttempts) != 185 || aws.ToInt32(tg.RetryPolicy.MaximumEventAgeInSeconds) != 86400 ||
		aws.ToString(tg.DeadLetterConfig.Arn) != "arn:aws:sqs:us-east-1:000000000000:dlq" {
		t.Fatalf("GetSchedule target = %+v", tg)
	}

	e.checkUpdateReplaces(t, role, in)

	if _, err := e.sched.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{Name: aws.String("nightly"), ClientToken: aws.String("del-1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sched.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{Name: aws.String("nightly"), ClientToken: aws.String("del-1")}); err != nil {
		t.Fatalf("idempotent DeleteSchedule: %v", err)
	}
	_, err = e.sched.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{Name: aws.String("nightly")})
	apiError[*types.ResourceNotFoundException](t, err, "Schedule nightly does not exist.")
	_, err = e.sched.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String("nightly")})
	apiError[*types.ResourceNotFoundException](t, err, "")
	_, err = e.sched.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String("x"), GroupName: aws.String("nogroup")})
	apiError[*types.ResourceNotFoundException](t, err, "Schedule group nogroup does not exist.")
}

func TestScheduleValidation(t *testing.T) {
	t.Parallel()
	e := start(t)
	ctx := context.Background()
	role := e.schedulerRole(t)
	lambdaRole := e.role(t, "fn", "lambda.amazonaws.com")
	for _, expr := range []string{"rate(0 minutes)", "rate(1 minutes)", "cron(0 12 * * * *)", "cron(0 12 * *)", "at(2024-01-01 10:00:00)", "every day"} {
		_, err := e.sched.CreateSchedule(ctx, input("bad", expr, role))
		apiError[*types.ValidationException](t, err, "Invalid Schedule Expression "+expr+".")
	}
	_, err := e.sched.CreateSchedule(ctx, input("bad", "cron(0 12 L * ? *)", role))
	apiError[*types.ValidationException](t, err, "does not support the L, W and #")

	const cannotAssume = "The execution role you provide must allow AWS EventBridge Scheduler to assume the role."
	_, err = e.sched.CreateSchedule(ctx, input("bad", "rate(1 hour)", lambdaRole))
	apiError[*types.ValidationException](t, err, cannotAssume)
	_, err = e.sched.CreateSchedule(ctx, input("bad", "rate(1 hour)", "arn:aws:iam::000000000000:role/missing"))
	apiError[*types.ValidationException](t, err, cannotAssume)
	_, err = e.sched.CreateSchedule(ctx, input("bad", "rate(1 hour)", "not-a-role"))
	apiError[*types.ValidationException](t, err, "at 'target.roleArn' failed to satisfy constraint")

	for _, c := range []struct {
		change func(in *scheduler.CreateScheduleInput)
		want   string
	}{
		{func(in *scheduler.CreateScheduleInput) {
			in.Target.Arn = aws.String("arn:aws:dynamodb:us-east-1:000000000000:table/orders")
		}, "Invalid target arn arn:aws:dynamodb:us-east-1:000000000000:table/orders."},
		{func(in *scheduler.CreateScheduleInput) { in.ScheduleExpressionTimezone = aws.String("Mars/Olympus") }, "Invalid timezone Mars/Olympus."},
		{func(in *scheduler.CreateScheduleInput) {
			in.FlexibleTimeWindow = &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeFlexible}
		}, "MaximumWindowInMinutes must be provided"},
		{func(in *scheduler.CreateScheduleInput) {
			in.Target.RetryPolicy = &types.RetryPolicy{MaximumRetryAttempts: aws.Int32(186)}
		}, "Member must have value between 0 and 185"},
		{func(in *scheduler.CreateScheduleInput) {
			in.Target.SqsParameters = &types.SqsParameters{MessageGroupId: aws.String("")}
		}, "at 'target.sqsParameters.messageGroupId' failed to satisfy constraint: Member must have length between 1 and 128"},
		{func(in *scheduler.CreateScheduleInput) {
			in.Target.SqsParameters = &types.SqsParameters{MessageGroupId: aws.String(strings.Repeat("g", 129))}
		}, "at 'target.sqsParameters.messageGroupId' failed to satisfy constraint: Member must have length between 1 and 128"},
		{func(in *scheduler.CreateScheduleInput) {
			in.Target.DeadLetterConfig = &types.DeadLetterConfig{Arn: aws.String("arn:aws:sqs:us-east-1:000000000000:dlq.fifo")}
		}, "at 'target.deadLetterConfig.arn' failed to satisfy constraint"},
	} {
		bad := input("bad", "rate(1 hour)", role)
		c.change(bad)
		_, err = e.sched.CreateSchedule(ctx, bad)
		apiError[*types.ValidationException](t, err, c.want)
	}
	bad := input("bad", "rate(1 hour)", role)
	bad.GroupName = aws.String("nogroup")
	_, err = e.sched.CreateSchedule(ctx, bad)
	apiError[*types.ResourceNotFoundException](t, err, "Schedule group nogroup does not exist.")

	if inv := e.stack.Router().Inventory()["scheduler"]; len(inv) != 0 {
		t.Fatalf("failed creates left %v", inv)
	}
}

// scheduleNames lists schedule summaries as group/name.
func scheduleNames(summaries []types.ScheduleSummary) []string {
	var names []string
	for _, s := range summaries {
		names = append(names, aws.ToString(s.GroupName)+"/"+aws.ToString(s.Name))
	}
	return names
}

// list is ListSchedules as group/name.
func (e env) list(t *testing.T, in *scheduler.ListSchedulesInput) []string {
	t.Helper()
	out, err := e.sched.ListSchedules(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	return scheduleNames(out.Schedules)
}

// listPaged lists every schedule, size a page, and checks each summary's
// target.
func (e env) listPaged(t *testing.T, size int32) (names []string, pages int) {
	t.Helper()
	p := scheduler.NewListSchedulesPaginator(e.sched, &scheduler.ListSchedulesInput{MaxResults: aws.Int32(size)})
	for p.HasMorePages() {
		out, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, s := range out.Schedules {
			if aws.ToString(s.Target.Arn) != functionArn {
				t.Fatalf("summary target = %+v", s.Target)
			}
		}
		names = append(names, scheduleNames(out.Schedules)...)
	}
	return names, pages
}

// checkGroupTags tags and untags the group groupArn (created with
// team=a), and checks that schedules take no tags.
func (e env) checkGroupTags(t *testing.T, groupArn string) {
	t.Helper()
	ctx := t.Context()
	if _, err := e.sched.TagResource(ctx, &scheduler.TagResourceInput{ResourceArn: aws.String(groupArn),
		Tags: []types.Tag{{Key: aws.String("env"), Value: aws.String("test")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sched.UntagResource(ctx, &scheduler.UntagResourceInput{ResourceArn: aws.String(groupArn), TagKeys: []string{"team"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := e.sched.ListTagsForResource(ctx, &scheduler.ListTagsForResourceInput{ResourceArn: aws.String(groupArn)})
	if err != nil || len(tags.Tags) != 1 || aws.ToString(tags.Tags[0].Key) != "env" || aws.ToString(tags.Tags[0].Value) != "test" {
		t.Fatalf("ListTagsForResource = %+v, %v", tags, err)
	}
	_, err = e.sched.TagResource(ctx, &scheduler.TagResourceInput{ResourceArn: aws.String("arn:aws:scheduler:us-east-1:000000000000:schedule/default/a1"),
		Tags: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}})
	apiError[*types.ValidationException](t, err, "schedule groups only")
}

func TestListSchedulesAndGroups(t *testing.T) {
	t.Parallel()
	e := start(t)
	ctx := context.Background()
	role := e.schedulerRole(t)
	g, err := e.sched.CreateScheduleGroup(ctx, &scheduler.CreateScheduleGroupInput{Name: aws.String("jobs"),
		Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("a")}}})
	if err != nil {
		t.Fatal(err)
	}
	groupArn := aws.ToString(g.ScheduleGroupArn)
	if groupArn != "arn:aws:scheduler:us-east-1:000000000000:schedule-group/jobs" {
		t.Fatalf("ScheduleGroupArn = %s", groupArn)
	}
	_, err = e.sched.CreateScheduleGroup(ctx, &scheduler.CreateScheduleGroupInput{Name: aws.String("jobs")})
	apiError[*types.ConflictException](t, err, "")
	for _, n := range []string{"a1", "a2", "a3", "b1", "b2"} {
		in := input(n, "rate(1 hour)", role)
		if n == "a3" {
			in.State = types.ScheduleStateDisabled
		}
		e.create(t, in)
	}
	in := input("a1", "rate(1 hour)", role)
	in.GroupName = aws.String("jobs")
	if _, err := e.sched.CreateSchedule(ctx, in); err != nil {
		t.Fatalf("a schedule name is unique per group only: %v", err)
	}

	names, pages := e.listPaged(t, 2)
	want := []string{"default/a1", "default/a2", "default/a3", "default/b1", "default/b2", "jobs/a1"}
	if !slices.Equal(names, want) || pages != 3 {
		t.Fatalf("paged ListSchedules = %v in %d pages", names, pages)
	}
	if got := e.list(t, &scheduler.ListSchedulesInput{NamePrefix: aws.String("a"), GroupName: aws.String("default")}); !slices.Equal(got, []string{"default/a1", "default/a2", "default/a3"}) {
		t.Fatalf("NamePrefix and GroupName: %v", got)
	}
	if got := e.list(t, &scheduler.ListSchedulesInput{State: types.ScheduleStateDisabled}); !slices.Equal(got, []string{"default/a3"}) {
		t.Fatalf("State DISABLED: %v", got)
	}
	if got := e.list(t, &scheduler.ListSchedulesInput{GroupName: aws.String("jobs")}); !slices.Equal(got, []string{"jobs/a1"}) {
		t.Fatalf("GroupName jobs: %v", got)
	}

	groups, err := e.sched.ListScheduleGroups(ctx, &scheduler.ListScheduleGroupsInput{})
	if err != nil || len(groups.ScheduleGroups) != 2 || aws.ToString(groups.ScheduleGroups[0].Name) != "default" ||
		aws.ToString(groups.ScheduleGroups[1].Arn) != groupArn || groups.ScheduleGroups[1].State != types.ScheduleGroupStateActive {
		t.Fatalf("ListScheduleGroups = %+v, %v", groups, err)
	}

	e.checkGroupTags(t, groupArn)

	inv := e.stack.Router().Inventory()["scheduler"]
	if !slices.Contains(inv, groupArn) || !slices.Contains(inv, "arn:aws:scheduler:us-east-1:000000000000:schedule/jobs/a1") ||
		len(inv) != 7 || slices.Contains(inv, "arn:aws:scheduler:us-east-1:000000000000:schedule-group/default") {
		t.Fatalf("inventory = %v", inv)
	}

	_, err = e.sched.DeleteScheduleGroup(ctx, &scheduler.DeleteScheduleGroupInput{Name: aws.String("default")})
	apiError[*types.ValidationException](t, err, "")
	if _, err := e.sched.DeleteScheduleGroup(ctx, &scheduler.DeleteScheduleGroupInput{Name: aws.String("jobs")}); err != nil {
		t.Fatal(err)
	}
	_, err = e.sched.GetScheduleGroup(ctx, &scheduler.GetScheduleGroupInput{Name: aws.String("jobs")})
	apiError[*types.ResourceNotFoundException](t, err, "")
	if got := e.list(t, &scheduler.ListSchedulesInput{GroupName: aws.String("jobs")}); len(got) != 0 {
		t.Fatalf("deleting a group keeps its schedules: %v", got)
	}
}

func TestFireInvokesTargetAsRole(t *testing.T) {
	t.Parallel()
	e := start(t)
	ctx := context.Background()
	role := e.schedulerRole(t, "lambda:InvokeFunction")
	in := input("now", "rate(1 day)", role)
	in.Target.Input = aws.String(`{"schedule":"<aws.scheduler.schedule-arn>","attempt":<aws.scheduler.attempt-number>}`)
	e.create(t, in)
	res, err := e.ctl.FireSchedule(ctx, "", "now")
	if err != nil {
		t.Fatal(err)
	}
	const arn = "arn:aws:scheduler:us-east-1:000000000000:schedule/default/now"
	if !res.Invoked || res.ScheduleArn != arn || len(res.ExecutionID) != 16 || res.ErrorCode != "" {
		t.Fatalf("FireSchedule = %+v", res)
	}
	calls := e.lambda.Invocations()
	if want := (lambdatest.Invocation{Function: functionArn, Payload: `{"schedule":"` + arn + `","attempt":1}`}); len(calls) != 1 || calls[0] != want {
		t.Fatalf("invocations = %+v, want %+v", calls, want)
	}
	m, err := e.ctl.SchedulerMetrics(ctx)
	if err != nil || m[arn] != (control.ScheduleMetrics{Invocations: 1}) {
		t.Fatalf("SchedulerMetrics = %+v, %v", m, err)
	}
	if _, err := e.ctl.FireSchedule(ctx, "default", "missing"); err == nil {
		t.Fatal("firing a missing schedule succeeded")
	}
}

func TestRateScheduleFiresOnItsClock(t *testing.T) {
	t.Parallel()
	e := start(t)
	ctx := context.Background()
	role := e.schedulerRole(t, "lambda:InvokeFunction")
	e.create(t, input("tick", "rate(1 minute)", role))
	eventually(t, "the runner to wait for its first minute", func() bool { return e.clock.pending() == 1 })
	e.clock.Advance(59 * time.Second)
	if n := len(e.lambda.Invocations()); n != 0 {
		t.Fatalf("%d invocations before the first minute", n)
	}
	e.clock.Advance(time.Second)
	eventually(t, "the first invocation", func() bool { return len(e.lambda.Invocations()) == 1 })
	eventually(t, "the runner to wait for the second minute", func() bool { return e.clock.pending() == 1 })
	e.clock.Advance(time.Minute)
	eventually(t, "the second invocation", func() bool { return len(e.lambda.Invocations()) == 2 })
	if got := e.lambda.Invocations()[1]; got != (lambdatest.Invocation{Function: functionArn, Payload: `{"hello":"world"}`}) {
		t.Fatalf("invocation = %+v", got)
	}

	// Disabling stops the runner: its pending wait fires into nothing.
	eventually(t, "the runner to wait for the third minute", func() bool { return e.clock.pending() == 1 })
	upd := input("tick", "rate(1 minute)", role)
	if _, err := e.sched.UpdateSchedule(ctx, &scheduler.UpdateScheduleInput{Name: upd.Name, ScheduleExpression: upd.ScheduleExpression,
		FlexibleTimeWindow: upd.FlexibleTimeWindow, Target: upd.Target, State: types.ScheduleStateDisabled}); err != nil {
		t.Fatal(err)
	}
	// An at() schedule fires once and, with DELETE, is deleted after.
	at := input("once", "at("+e.clock.Now().Add(90*time.Second).Format("2006-01-02T15:04:05")+")", role)
	at.ActionAfterCompletion = types.ActionAfterCompletionDelete
	e.create(t, at)
	eventually(t, "the at() runner to wait", func() bool { return e.clock.pending() == 2 })
	e.clock.Advance(2 * time.Minute)
	eventually(t, "the at() schedule to fire and be deleted", func() bool {
		_, err := e.sched.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String("once")})
		var nf *types.ResourceNotFoundException
		return errors.As(err, &nf)
	})
	m, err := e.ctl.SchedulerMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := m["arn:aws:scheduler:us-east-1:000000000000:schedule/default/tick"].Invocations; got != 2 {
		t.Fatalf("the disabled schedule has %d invocations, want 2", got)
	}
	if got := m["arn:aws:scheduler:us-east-1:000000000000:schedule/default/once"].Invocations; got != 1 {
		t.Fatalf("the at() schedule has %d invocations, want 1", got)
	}
}

// receive receives the messages of a queue, with their system and message
// attributes, and fails t unless there are want of them.
func (e env) receive(t *testing.T, url *string, want int) []sqstypes.Message {
	t.Helper()
	out, err := e.sqs.ReceiveMessage(t.Context(), &awssqs.ReceiveMessageInput{QueueUrl: url, MaxNumberOfMessages: 10, MessageAttributeNames: []string{"All"},
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
	if err != nil || len(out.Messages) != want {
		t.Fatalf("ReceiveMessage = %+v, %v; want %d messages", out, err, want)
	}
	return out.Messages
}

func TestDeniedRoleDeadLetters(t *testing.T) {
	t.Parallel()
	e := start(t)
	ctx := context.Background()
	// The role may send to the DLQ but not invoke the function.
	role := e.schedulerRole(t, "sqs:SendMessage")
	q, err := e.sqs.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String("dlq")})
	if err != nil {
		t.Fatal(err)
	}
	in := input("denied", "rate(1 day)", role)
	in.Target.RetryPolicy = &types.RetryPolicy{MaximumRetryAttempts: aws.Int32(2)}
	in.Target.DeadLetterConfig = &types.DeadLetterConfig{Arn: aws.String("arn:aws:sqs:us-east-1:000000000000:dlq")}
	e.create(t, in)
	res, err := e.ctl.FireSchedule(ctx, "default", "denied")
	if err != nil {
		t.Fatal(err)
	}
	if res.Invoked || res.ErrorCode != "AccessDeniedException" ||
		!strings.Contains(res.ErrorMessage, "assumed-role/sched/"+res.ExecutionID+" is not authorized to perform: lambda:InvokeFunction on resource: "+functionArn) {
		t.Fatalf("FireSchedule = %+v", res)
	}
	const arn = "arn:aws:scheduler:us-east-1:000000000000:schedule/default/denied"
	var m map[string]control.ScheduleMetrics
	eventually(t, "the dead-letter delivery", func() bool {
		m, err = e.ctl.SchedulerMetrics(ctx)
		return err == nil && m[arn].DeadLetterDeliveries == 1
	})
	if want := (control.ScheduleMetrics{Invocations: 3, FailedInvocations: 3, DeadLetterDeliveries: 1}); m[arn] != want {
		t.Fatalf("metrics = %+v, want %+v", m[arn], want)
	}
	msg := e.receive(t, q.QueueUrl, 1)[0]
	if aws.ToString(msg.Body) != `{"hello":"world"}` {
		t.Fatalf("dead-letter body = %s", aws.ToString(msg.Body))
	}
	attr := func(k string) string { return aws.ToString(msg.MessageAttributes[k].StringValue) }
	if attr("ERROR_CODE") != "AccessDeniedException" || !strings.Contains(attr("ERROR_MESSAGE"), "lambda:InvokeFunction") ||
		attr("EXECUTION_ID") != res.ExecutionID || attr("EXHAUSTED_RETRY_CONDITION") != "MaximumRetryAttempts" ||
		attr("RETRY_ATTEMPTS") != "2" || attr("SCHEDULE_ARN") != arn || attr("TARGET_ARN") != functionArn ||
		attr("IS_PAYLOAD_TRUNCATED") != "false" || attr("SCHEDULED_TIME") != res.ScheduledTime.UTC().Format(time.RFC3339) {
		t.Fatalf("dead-letter attributes = %+v", msg.MessageAttributes)
	}
	if calls := e.lambda.Invocations(); len(calls) != 0 {
		t.Fatalf("a denied role invoked the function: %v", calls)
	}
}

// TestFIFOQueueTarget fires schedules whose target is a FIFO queue: the
// messages take SqsParameters.MessageGroupId as their group and their body's
// SHA-256 as their deduplication id; without a group, or to a queue without
// ContentBasedDeduplication, the invocation fails as SendMessage would.
func TestFIFOQueueTarget(t *testing.T) {
	t.Parallel()
	e := start(t)
	ctx := context.Background()
	role := e.schedulerRole(t, "sqs:SendMessage")
	urls := map[string]*string{}
	for name, cbd := range map[string]string{"jobs.fifo": "true", "nocbd.fifo": "false"} {
		q, err := e.sqs.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String(name),
			Attributes: map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": cbd}})
		if err != nil {
			t.Fatal(err)
		}
		urls[name] = q.QueueUrl
	}
	for _, c := range []struct{ name, queue, group, wantCode string }{
		{"grouped", "jobs.fifo", "jobs", ""},
		{"ungrouped", "jobs.fifo", "", "MissingParameter"},
		{"no-content-deduplication", "nocbd.fifo", "jobs", "InvalidParameterValue"},
	} {
		in := input(c.name, "rate(1 day)", role)
		in.Target.Arn = aws.String("arn:aws:sqs:us-east-1:000000000000:" + c.queue)
		in.Target.Input = aws.String(`{"execution":"<aws.scheduler.execution-id>"}`)
		in.Target.RetryPolicy = &types.RetryPolicy{MaximumRetryAttempts: aws.Int32(0)}
		if c.group != "" {
			in.Target.SqsParameters = &types.SqsParameters{MessageGroupId: aws.String(c.group)}
		}
		e.create(t, in)
		for range 2 {
			res, err := e.ctl.FireSchedule(ctx, "", c.name)
			if err != nil || res.Invoked != (c.wantCode == "") || res.ErrorCode != c.wantCode {
				t.Fatalf("FireSchedule %s = %+v, %v; want error code %q", c.name, res, err, c.wantCode)
			}
		}
	}
	got, err := e.sched.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String("grouped")})
	if err != nil || got.Target.SqsParameters == nil || aws.ToString(got.Target.SqsParameters.MessageGroupId) != "jobs" {
		t.Fatalf("GetSchedule = %+v, %v", got, err)
	}
	msgs := e.receive(t, urls["jobs.fifo"], 2)
	for _, m := range msgs {
		sum := sha256.Sum256([]byte(aws.ToString(m.Body)))
		if m.Attributes["MessageGroupId"] != "jobs" || m.Attributes["MessageDeduplicationId"] != hex.EncodeToString(sum[:]) {
			t.Fatalf("message %s has attributes %v", aws.ToString(m.Body), m.Attributes)
		}
	}
	if aws.ToString(msgs[0].Body) == aws.ToString(msgs[1].Body) {
		t.Fatalf("both fires sent %s", aws.ToString(msgs[0].Body))
	}
}
