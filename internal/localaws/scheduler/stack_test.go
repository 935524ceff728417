package scheduler_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	awsiam "github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambdatest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// TestStackScheduleInvokesFunction fires a schedule of a full stack: the
// scheduler assumes its role, and a real function runs and logs its input.
func TestStackScheduleInvokesFunction(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs a function")
	}
	code := lambdatest.Zip(t, "../lambda/testdata/fn", runtime.GOARCH)

	s := localawstest.Start(t)
	cfg := localawstest.Config(s)
	ctx := context.Background()
	e := env{stack: s, iam: awsiam.NewFromConfig(cfg)}
	lam := lambda.NewFromConfig(cfg)
	sched := scheduler.NewFromConfig(cfg)
	fnRole := e.role(t, "fn", "lambda.amazonaws.com")
	fn, err := lam.CreateFunction(ctx, &lambda.CreateFunctionInput{
		FunctionName: aws.String("scheduled"), Runtime: lambdatypes.RuntimeProvidedal2023, Handler: aws.String("bootstrap"),
		Role: aws.String(fnRole), Code: &lambdatypes.FunctionCode{ZipFile: code}, Architectures: []lambdatypes.Architecture{lambdatest.HostArchitecture()},
	})
	if err != nil {
		t.Fatal(err)
	}
	lambdatest.WaitActive(ctx, t, lam, "scheduled")
	role := e.role(t, "sched", "scheduler.amazonaws.com", "lambda:InvokeFunction")
	if _, err := sched.CreateSchedule(ctx, &scheduler.CreateScheduleInput{
		Name: aws.String("every-day"), ScheduleExpression: aws.String("rate(1 day)"),
		FlexibleTimeWindow: &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff},
		Target: &types.Target{Arn: fn.FunctionArn, RoleArn: aws.String(role),
			Input: aws.String(`{"action":"log","message":"scheduled <aws.scheduler.execution-id>"}`)},
	}); err != nil {
		t.Fatal(err)
	}
	res, err := localawstest.Control(s).FireSchedule(ctx, "", "every-day")
	if err != nil || !res.Invoked {
		t.Fatalf("FireSchedule = %+v, %v", res, err)
	}
	logs := cloudwatchlogs.NewFromConfig(cfg)
	lambdatest.WaitForLogs(ctx, t, logs, "/aws/lambda/scheduled", "scheduled "+res.ExecutionID)
	if inv := s.Router().Inventory()["scheduler"]; len(inv) != 1 || inv[0] != "arn:aws:scheduler:us-east-1:000000000000:schedule/default/every-day" {
		t.Fatalf("inventory = %v", inv)
	}
}
