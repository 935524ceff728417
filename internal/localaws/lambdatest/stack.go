package lambdatest

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// HostArchitecture is the Lambda architecture of this host: a function
// built for it runs without an emulator.
func HostArchitecture() types.Architecture {
	if runtime.GOARCH == "arm64" {
		return types.ArchitectureArm64
	}
	return types.ArchitectureX8664
}

// WaitForLogs waits up to 30 s until the log group holds, for each of
// wants, an event whose message contains it, and fails t otherwise.
func WaitForLogs(ctx context.Context, t testing.TB, logs *cloudwatchlogs.Client, group string, wants ...string) {
	t.Helper()
	localawstest.EventuallyState(t, 30*time.Second, fmt.Sprintf("%q on log group %s", wants, group), func() (bool, string) {
		out, err := logs.FilterLogEvents(ctx, &cloudwatchlogs.FilterLogEventsInput{LogGroupName: aws.String(group)})
		found := map[string]bool{}
		if err == nil {
			for _, ev := range out.Events {
				for _, want := range wants {
					if strings.Contains(aws.ToString(ev.Message), want) {
						found[want] = true
					}
				}
			}
		}
		return len(found) == len(wants), fmt.Sprintf("found %v (last error %v)", found, err)
	})
}

// WaitActive waits up to 30 s, with the SDK's FunctionActiveV2 waiter
// polling every 50 to 200 ms, until the function name is Active, and
// fails t otherwise.
func WaitActive(ctx context.Context, t testing.TB, client *lambda.Client, name string) {
	t.Helper()
	if err := lambda.NewFunctionActiveV2Waiter(client, func(o *lambda.FunctionActiveV2WaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, 200*time.Millisecond
	}).Wait(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(name)}, 30*time.Second); err != nil {
		t.Fatalf("waiting for function %s to be Active: %v", name, err)
	}
}
