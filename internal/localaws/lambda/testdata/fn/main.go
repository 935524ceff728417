// Command fn is the test function of the local Lambda service: its event
// says what to do.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

type event struct {
	Action  string `json:"action"`
	Message string `json:"message,omitempty"`
	SleepMS int    `json:"sleepMs,omitempty"`
	Data    any    `json:"data,omitempty"`
}

type response struct {
	Data        any               `json:"data,omitempty"`
	Env         map[string]string `json:"env"`
	RequestID   string            `json:"requestId"`
	FunctionArn string            `json:"functionArn"`
	DeadlineMS  int64             `json:"deadlineMs"`
	PID         int               `json:"pid"`
}

var envKeys = []string{
	"AWS_LAMBDA_FUNCTION_NAME", "AWS_LAMBDA_FUNCTION_VERSION", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE",
	"AWS_REGION", "AWS_DEFAULT_REGION", "_HANDLER", "AWS_LAMBDA_LOG_GROUP_NAME", "AWS_LAMBDA_LOG_STREAM_NAME",
	"TZ", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL",
	"AWS_LAMBDA_RUNTIME_API", "GREETING",
}

func handle(ctx context.Context, ev event) (*response, error) {
	switch ev.Action {
	case "error":
		return nil, errors.New(ev.Message)
	case "panic":
		panic(ev.Message)
	case "exit":
		os.Exit(3)
	case "sleep":
		time.Sleep(time.Duration(ev.SleepMS) * time.Millisecond)
	case "log":
		fmt.Println("stdout: " + ev.Message)
		fmt.Fprintln(os.Stderr, "stderr: "+ev.Message)
	}
	lc, _ := lambdacontext.FromContext(ctx)
	deadline, _ := ctx.Deadline()
	out := &response{Data: ev.Data, Env: map[string]string{}, DeadlineMS: deadline.UnixMilli(), PID: os.Getpid()}
	if lc != nil {
		out.RequestID, out.FunctionArn = lc.AwsRequestID, lc.InvokedFunctionArn
	}
	for _, k := range envKeys {
		out.Env[k] = os.Getenv(k)
	}
	return out, nil
}

func main() {
	if os.Getenv("FAIL_INIT") != "" {
		fmt.Fprintln(os.Stderr, "init failed on purpose")
		os.Exit(1)
	}
	lambda.Start(handle)
}
