package lambda_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambda"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambdatest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// checkTags tags and untags the function arn (tagged team).
func (h *harness) checkTags(t *testing.T, arn string) {
	t.Helper()
	ctx := t.Context()
	if _, err := h.client.TagResource(ctx, &awslambda.TagResourceInput{Resource: aws.String(arn), Tags: map[string]string{"x": "y"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.UntagResource(ctx, &awslambda.UntagResourceInput{Resource: aws.String(arn), TagKeys: []string{"team"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := h.client.ListTags(ctx, &awslambda.ListTagsInput{Resource: aws.String(arn)})
	if err != nil || len(tags.Tags) != 1 || tags.Tags["x"] != "y" {
		t.Fatalf("ListTags = %v, %v", tags, err)
	}
}

// checkConcurrency puts, reads and deletes the reserved concurrency of
// the function name.
func (h *harness) checkConcurrency(t *testing.T, name string) {
	t.Helper()
	ctx := t.Context()
	if _, err := h.client.GetFunctionConcurrency(ctx, &awslambda.GetFunctionConcurrencyInput{FunctionName: aws.String(name)}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.PutFunctionConcurrency(ctx, &awslambda.PutFunctionConcurrencyInput{FunctionName: aws.String(name), ReservedConcurrentExecutions: aws.Int32(4)}); err != nil {
		t.Fatal(err)
	}
	gc, err := h.client.GetFunctionConcurrency(ctx, &awslambda.GetFunctionConcurrencyInput{FunctionName: aws.String(name)})
	if err != nil || aws.ToInt32(gc.ReservedConcurrentExecutions) != 4 {
		t.Fatalf("GetFunctionConcurrency = %v, %v", gc, err)
	}
	if g, _ := h.client.GetFunction(ctx, &awslambda.GetFunctionInput{FunctionName: aws.String(name)}); g.Concurrency == nil || aws.ToInt32(g.Concurrency.ReservedConcurrentExecutions) != 4 {
		t.Fatalf("GetFunction Concurrency = %+v", g.Concurrency)
	}
	if _, err := h.client.DeleteFunctionConcurrency(ctx, &awslambda.DeleteFunctionConcurrencyInput{FunctionName: aws.String(name)}); err != nil {
		t.Fatal(err)
	}
}

// checkResourcePolicy adds and removes a permission of the function
// "life" (ARN arn) for EventBridge.
func (h *harness) checkResourcePolicy(t *testing.T, arn string) {
	t.Helper()
	ctx := t.Context()
	if _, err := h.client.GetPolicy(ctx, &awslambda.GetPolicyInput{FunctionName: aws.String("life")}); !isCode(err, "ResourceNotFoundException") {
		t.Fatalf("GetPolicy without policy: %v", err)
	}
	ap, err := h.client.AddPermission(ctx, &awslambda.AddPermissionInput{FunctionName: aws.String("life"), StatementId: aws.String("events"),
		Action: aws.String("lambda:InvokeFunction"), Principal: aws.String("events.amazonaws.com"), SourceArn: aws.String("arn:aws:events:us-east-1:000000000000:rule/r")})
	if err != nil || !strings.Contains(aws.ToString(ap.Statement), `"Service":"events.amazonaws.com"`) {
		t.Fatalf("AddPermission = %v, %v", ap, err)
	}
	if _, err := h.client.AddPermission(ctx, &awslambda.AddPermissionInput{FunctionName: aws.String("life"), StatementId: aws.String("events"),
		Action: aws.String("lambda:InvokeFunction"), Principal: aws.String("events.amazonaws.com")}); !isCode(err, "ResourceConflictException") {
		t.Fatalf("duplicate AddPermission: %v", err)
	}
	pol, err := h.client.GetPolicy(ctx, &awslambda.GetPolicyInput{FunctionName: aws.String("life")})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Statement []struct {
			Sid       string
			Resource  string
			Condition map[string]map[string]string
		}
	}
	if err := json.Unmarshal([]byte(aws.ToString(pol.Policy)), &doc); err != nil || len(doc.Statement) != 1 || doc.Statement[0].Resource != arn ||
		doc.Statement[0].Condition["ArnLike"]["AWS:SourceArn"] != "arn:aws:events:us-east-1:000000000000:rule/r" {
		t.Fatalf("GetPolicy = %s (%v)", aws.ToString(pol.Policy), err)
	}
	if p, ok := h.svc.FunctionPolicy(arn); !ok || p != aws.ToString(pol.Policy) {
		t.Fatalf("FunctionPolicy = %q %v", p, ok)
	}
	if _, err := h.client.RemovePermission(ctx, &awslambda.RemovePermissionInput{FunctionName: aws.String("life"), StatementId: aws.String("events")}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.client.RemovePermission(ctx, &awslambda.RemovePermissionInput{FunctionName: aws.String("life"), StatementId: aws.String("events")}); !isCode(err, "ResourceNotFoundException") {
		t.Fatalf("RemovePermission twice: %v", err)
	}
}

// checkUpdates updates the configuration, then the code (created as code,
// with createdSha), of the function "life": each update refuses the next until
// it is done.
func (h *harness) checkUpdates(t *testing.T, code []byte, createdSha string) {
	t.Helper()
	ctx := t.Context()
	up, err := h.client.UpdateFunctionConfiguration(ctx, &awslambda.UpdateFunctionConfigurationInput{FunctionName: aws.String("life"), Timeout: aws.Int32(7), MemorySize: aws.Int32(256)})
	if err != nil || up.LastUpdateStatus != types.LastUpdateStatusInProgress || aws.ToInt32(up.Timeout) != 7 {
		t.Fatalf("UpdateFunctionConfiguration = %+v, %v", up, err)
	}
	if _, err := h.client.UpdateFunctionCode(ctx, &awslambda.UpdateFunctionCodeInput{FunctionName: aws.String("life"), ZipFile: code}); !isCode(err, "ResourceConflictException") {
		t.Fatalf("update while InProgress: %v", err)
	}
	if err := awslambda.NewFunctionUpdatedV2Waiter(h.client, func(o *awslambda.FunctionUpdatedV2WaiterOptions) {
		o.MinDelay, o.MaxDelay = 50*time.Millisecond, 100*time.Millisecond
	}).Wait(ctx, &awslambda.GetFunctionInput{FunctionName: aws.String("life")}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	code2 := lambdatest.ZipOf(t, map[string][]byte{"bootstrap": []byte("#!/bin/sh\nexit 2\n")})
	uc, err := h.client.UpdateFunctionCode(ctx, &awslambda.UpdateFunctionCodeInput{FunctionName: aws.String("life"), ZipFile: code2})
	if err != nil || aws.ToString(uc.CodeSha256) == createdSha {
		t.Fatalf("UpdateFunctionCode = %+v, %v", uc, err)
	}
	h.waitActive(t, "life")
}

func TestFunctionLifecycle(t *testing.T) {
	t.Parallel()
	// The updates refused while the function is Pending, then while an
	// update is InProgress, must reach the service within that state: the
	// harness's 50 ms is too short a window on a loaded machine, so here
	// each state lasts a second.
	h := newHarness(t, func(o *lambda.Options) { o.StateDelay = time.Second })
	ctx := context.Background()
	code := lambdatest.ZipOf(t, map[string][]byte{"bootstrap": []byte("#!/bin/sh\nexit 1\n")})
	sum := sha256.Sum256(code)

	out, err := h.client.CreateFunction(ctx, &awslambda.CreateFunctionInput{
		FunctionName:  aws.String("life"),
		Runtime:       types.RuntimeProvidedal2023,
		Role:          aws.String(roleArn),
		Handler:       aws.String("bootstrap"),
		Code:          &types.FunctionCode{ZipFile: code},
		Architectures: []types.Architecture{types.ArchitectureArm64},
		Environment:   &types.Environment{Variables: map[string]string{"A": "1"}},
		Tags:          map[string]string{"team": "core"},
		LoggingConfig: &types.LoggingConfig{LogGroup: aws.String("/custom/life")},
		Description:   aws.String("d"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.State != types.StatePending || aws.ToString(out.Version) != "$LATEST" ||
		aws.ToString(out.CodeSha256) != base64.StdEncoding.EncodeToString(sum[:]) || out.CodeSize != int64(len(code)) ||
		aws.ToInt32(out.Timeout) != 3 || aws.ToInt32(out.MemorySize) != 128 || out.Architectures[0] != types.ArchitectureArm64 ||
		aws.ToString(out.LoggingConfig.LogGroup) != "/custom/life" || out.Environment.Variables["A"] != "1" ||
		aws.ToString(out.FunctionArn) != "arn:aws:lambda:us-east-1:000000000000:function:life" {
		t.Fatalf("CreateFunction = %+v", out)
	}
	if _, err := h.client.UpdateFunctionConfiguration(ctx, &awslambda.UpdateFunctionConfigurationInput{FunctionName: aws.String("life"), Timeout: aws.Int32(5)}); !isCode(err, "ResourceConflictException") {
		t.Fatalf("update while Pending: %v", err)
	}
	lambdatest.WaitActive(ctx, t, h.client, "life")
	if _, err := h.client.CreateFunction(ctx, &awslambda.CreateFunctionInput{FunctionName: aws.String("life"), Runtime: types.RuntimeProvidedal2023,
		Role: aws.String(roleArn), Code: &types.FunctionCode{ZipFile: code}}); !isCode(err, "ResourceConflictException") {
		t.Fatalf("duplicate CreateFunction: %v", err)
	}

	h.checkUpdates(t, code, aws.ToString(out.CodeSha256))

	g, err := h.client.GetFunction(ctx, &awslambda.GetFunctionInput{FunctionName: aws.String("arn:aws:lambda:us-east-1:000000000000:function:life")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToInt32(g.Configuration.MemorySize) != 256 || g.Tags["team"] != "core" || g.Code == nil || !strings.HasPrefix(aws.ToString(g.Code.Location), h.url) {
		t.Fatalf("GetFunction = %+v", g)
	}

	arn := aws.ToString(out.FunctionArn)
	h.checkTags(t, arn)
	h.checkConcurrency(t, "life")
	h.checkResourcePolicy(t, arn)

	if a, r, st, ok := h.svc.FunctionInfo("life"); !ok || a != arn || r != roleArn || st != "Active" {
		t.Fatalf("FunctionInfo = %q %q %q %v", a, r, st, ok)
	}
	if inv := h.svc.Inventory(); len(inv) != 1 || inv[0] != arn {
		t.Fatalf("Inventory = %v", inv)
	}
	lf, err := h.client.ListFunctions(ctx, &awslambda.ListFunctionsInput{})
	if err != nil || len(lf.Functions) != 1 || aws.ToString(lf.Functions[0].FunctionName) != "life" {
		t.Fatalf("ListFunctions = %+v, %v", lf, err)
	}

	if _, err := h.client.DeleteFunction(ctx, &awslambda.DeleteFunctionInput{FunctionName: aws.String("life")}); err != nil {
		t.Fatal(err)
	}
	_, err = h.client.GetFunction(ctx, &awslambda.GetFunctionInput{FunctionName: aws.String("life")})
	var rnf *types.ResourceNotFoundException
	if !errors.As(err, &rnf) || !strings.Contains(rnf.ErrorMessage(), "Function not found: "+arn) {
		t.Fatalf("GetFunction after delete: %v", err)
	}
}

func TestCreateFunctionValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	code := lambdatest.ZipOf(t, map[string][]byte{"bootstrap": []byte("x")})
	base := func() *awslambda.CreateFunctionInput {
		return &awslambda.CreateFunctionInput{FunctionName: aws.String("v"), Runtime: types.RuntimeProvidedal2023,
			Role: aws.String(roleArn), Code: &types.FunctionCode{ZipFile: code}}
	}
	cases := map[string]struct {
		mod  func(*awslambda.CreateFunctionInput)
		code string
		msg  string
	}{
		"role not assumable": {func(in *awslambda.CreateFunctionInput) { in.Role = aws.String("arn:aws:iam::000000000000:role/other") },
			"InvalidParameterValueException", "The role defined for the function cannot be assumed by Lambda."},
		"reserved env key": {func(in *awslambda.CreateFunctionInput) {
			in.Environment = &types.Environment{Variables: map[string]string{"AWS_REGION": "x"}}
		}, "InvalidParameterValueException", "Reserved keys used in this request: AWS_REGION"},
		"bad zip":      {func(in *awslambda.CreateFunctionInput) { in.Code.ZipFile = []byte("nope") }, "InvalidParameterValueException", "Could not unzip uploaded file"},
		"timeout":      {func(in *awslambda.CreateFunctionInput) { in.Timeout = aws.Int32(901) }, "ValidationException", "timeout"},
		"runtime":      {func(in *awslambda.CreateFunctionInput) { in.Runtime = types.RuntimePython312 }, "InvalidParameterValueException", "python3.12"},
		"no code":      {func(in *awslambda.CreateFunctionInput) { in.Code = &types.FunctionCode{} }, "InvalidParameterValueException", "provide a source"},
		"bad role arn": {func(in *awslambda.CreateFunctionInput) { in.Role = aws.String("fn-role") }, "ValidationException", "role"},
	}
	for name, c := range cases {
		in := base()
		c.mod(in)
		_, err := h.client.CreateFunction(ctx, in)
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != c.code || !strings.Contains(ae.ErrorMessage(), c.msg) {
			t.Errorf("%s: error = %v, want %s containing %q", name, err, c.code, c.msg)
		}
	}
}

func TestInvokeRequestResponse(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.create(t, "echo", func(in *awslambda.CreateFunctionInput) {
		in.Environment = &types.Environment{Variables: map[string]string{"GREETING": "hello"}}
		in.MemorySize = aws.Int32(256)
	})
	before := time.Now()
	out := h.invoke(t, "echo", map[string]any{"action": "echo", "data": map[string]any{"n": 1, "s": "ü"}})
	if out.StatusCode != 200 || out.FunctionError != nil || aws.ToString(out.ExecutedVersion) != "$LATEST" {
		t.Fatalf("Invoke = %d %v %v", out.StatusCode, aws.ToString(out.FunctionError), aws.ToString(out.ExecutedVersion))
	}
	r := decode[fnResponse](t, out.Payload)
	if string(r.Data) != `{"n":1,"s":"ü"}` {
		t.Fatalf("payload round trip = %s", r.Data)
	}
	arn := "arn:aws:lambda:us-east-1:000000000000:function:echo"
	want := map[string]string{
		"AWS_LAMBDA_FUNCTION_NAME": "echo", "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
		"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1", "_HANDLER": "bootstrap", "TZ": ":UTC",
		"AWS_LAMBDA_LOG_GROUP_NAME": "/aws/lambda/echo", "GREETING": "hello", "AWS_ENDPOINT_URL": h.url,
	}
	for k, v := range want {
		if r.Env[k] != v {
			t.Errorf("%s = %q, want %q", k, r.Env[k], v)
		}
	}
	if !strings.Contains(r.Env["AWS_LAMBDA_LOG_STREAM_NAME"], "/[$LATEST]") {
		t.Errorf("log stream = %q", r.Env["AWS_LAMBDA_LOG_STREAM_NAME"])
	}
	sess, ok := h.env.Credentials.Lookup(r.Env["AWS_ACCESS_KEY_ID"])
	if !ok || sess.RoleArn != roleArn || sess.SecretAccessKey != r.Env["AWS_SECRET_ACCESS_KEY"] || sess.SessionToken != r.Env["AWS_SESSION_TOKEN"] {
		t.Errorf("credentials %q are not a session of %s: %+v", r.Env["AWS_ACCESS_KEY_ID"], roleArn, sess)
	}
	if r.FunctionArn != arn || r.RequestID == "" {
		t.Errorf("context: arn %q, request id %q", r.FunctionArn, r.RequestID)
	}
	if d := time.UnixMilli(r.DeadlineMS).Sub(before); d < 9*time.Second || d > 11*time.Second+5*time.Second {
		t.Errorf("deadline %s after the call, want about the 10s timeout", d)
	}

	// Warm: the same process serves the next invocation.
	r2 := decode[fnResponse](t, h.invoke(t, "echo", map[string]any{"action": "echo"}).Payload)
	if r2.PID != r.PID || r2.RequestID == r.RequestID {
		t.Errorf("second invocation: pid %d (first %d), request id %s", r2.PID, r.PID, r2.RequestID)
	}

	// Tail logs.
	tail, err := h.client.Invoke(context.Background(), &awslambda.InvokeInput{FunctionName: aws.String("echo"), LogType: types.LogTypeTail,
		Payload: []byte(`{"action":"log","message":"tailme"}`)})
	if err != nil {
		t.Fatal(err)
	}
	logs, _ := base64.StdEncoding.DecodeString(aws.ToString(tail.LogResult))
	if !strings.Contains(string(logs), "stdout: tailme") || !strings.Contains(string(logs), "REPORT RequestId: ") {
		t.Errorf("LogResult = %q", logs)
	}

	// DryRun and a bad payload.
	dry, err := h.client.Invoke(context.Background(), &awslambda.InvokeInput{FunctionName: aws.String("echo"), InvocationType: types.InvocationTypeDryRun})
	if err != nil || dry.StatusCode != 204 {
		t.Fatalf("DryRun = %v, %v", dry, err)
	}
	if _, err := h.client.Invoke(context.Background(), &awslambda.InvokeInput{FunctionName: aws.String("echo"), Payload: []byte("{nope")}); !isCode(err, "InvalidRequestContentException") {
		t.Fatalf("bad payload: %v", err)
	}
	if _, err := h.client.Invoke(context.Background(), &awslambda.InvokeInput{FunctionName: aws.String("missing")}); !isCode(err, "ResourceNotFoundException") {
		t.Fatalf("missing function: %v", err)
	}

	// InvokeSync in process.
	b, fe, err := h.svc.InvokeSync(context.Background(), arn, []byte(`{"action":"echo","data":7}`))
	if err != nil || fe != "" || string(decode[fnResponse](t, b).Data) != "7" {
		t.Fatalf("InvokeSync = %s %q %v", b, fe, err)
	}
}

func TestFunctionErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.create(t, "err", func(in *awslambda.CreateFunctionInput) { in.Timeout = aws.Int32(1) })

	out := h.invoke(t, "err", map[string]any{"action": "error", "message": "boom"})
	e := decode[fnError](t, out.Payload)
	if out.StatusCode != 200 || aws.ToString(out.FunctionError) != "Unhandled" || e.ErrorMessage != "boom" || e.ErrorType != "errorString" {
		t.Fatalf("handler error: %d %q %s", out.StatusCode, aws.ToString(out.FunctionError), out.Payload)
	}
	out = h.invoke(t, "err", map[string]any{"action": "panic", "message": "oops"})
	if e := decode[fnError](t, out.Payload); aws.ToString(out.FunctionError) != "Unhandled" || e.ErrorMessage != "oops" {
		t.Fatalf("panic: %q %s", aws.ToString(out.FunctionError), out.Payload)
	}
	// The runtime exits after a panic: the next invocation gets a fresh process.
	if out := h.invoke(t, "err", map[string]any{"action": "echo"}); out.FunctionError != nil {
		t.Fatalf("after panic: %s", out.Payload)
	}

	out = h.invoke(t, "err", map[string]any{"action": "sleep", "sleepMs": 3000})
	e = decode[fnError](t, out.Payload)
	if aws.ToString(out.FunctionError) != "Unhandled" || e.ErrorType != "Sandbox.Timedout" || !strings.Contains(e.ErrorMessage, "Task timed out after 1.00 seconds") {
		t.Fatalf("timeout: %q %s", aws.ToString(out.FunctionError), out.Payload)
	}
	localawstest.Eventually(t, 5*time.Second, "the timeout log line", func() bool { return len(h.logs.matching("Task timed out after 1.00 seconds")) == 1 })

	out = h.invoke(t, "err", map[string]any{"action": "exit"})
	e = decode[fnError](t, out.Payload)
	if aws.ToString(out.FunctionError) != "Unhandled" || e.ErrorType != "Runtime.ExitError" || !strings.Contains(e.ErrorMessage, "exit status 3") {
		t.Fatalf("crash: %q %s", aws.ToString(out.FunctionError), out.Payload)
	}
	if out := h.invoke(t, "err", map[string]any{"action": "echo"}); out.FunctionError != nil {
		t.Fatalf("after crash: %s", out.Payload)
	}
}

func TestInitFailureAndMissingBootstrap(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.create(t, "initfail", func(in *awslambda.CreateFunctionInput) {
		in.Environment = &types.Environment{Variables: map[string]string{"FAIL_INIT": "1"}}
	})
	out := h.invoke(t, "initfail", map[string]any{})
	if e := decode[fnError](t, out.Payload); aws.ToString(out.FunctionError) != "Unhandled" || e.ErrorType != "Runtime.ExitError" {
		t.Fatalf("init failure: %q %s", aws.ToString(out.FunctionError), out.Payload)
	}
	localawstest.Eventually(t, 5*time.Second, "the init failure on the log", func() bool { return len(h.logs.matching("init failed on purpose")) == 1 })

	h.create(t, "nobootstrap", func(in *awslambda.CreateFunctionInput) {
		in.Code = &types.FunctionCode{ZipFile: lambdatest.ZipOf(t, map[string][]byte{"main": []byte("x")})}
	})
	out = h.invoke(t, "nobootstrap", map[string]any{})
	if e := decode[fnError](t, out.Payload); aws.ToString(out.FunctionError) != "Unhandled" || e.ErrorType != "Runtime.InvalidEntrypoint" {
		t.Fatalf("missing bootstrap: %q %s", aws.ToString(out.FunctionError), out.Payload)
	}
}

func TestKillControl(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.create(t, "victim", nil)
	ctx := context.Background()
	first := decode[fnResponse](t, h.invoke(t, "victim", map[string]any{"action": "echo"}).Payload)

	killed, err := h.ctl.KillLambda(ctx, "victim")
	if err != nil || killed {
		t.Fatalf("KillLambda with no invocation = %v, %v", killed, err)
	}
	out := h.invoke(t, "victim", map[string]any{"action": "echo"})
	if e := decode[fnError](t, out.Payload); aws.ToString(out.FunctionError) != "Unhandled" || e.ErrorType != "Runtime.ExitError" || !strings.Contains(e.ErrorMessage, "killed") {
		t.Fatalf("killed invocation: %q %s", aws.ToString(out.FunctionError), out.Payload)
	}
	next := decode[fnResponse](t, h.invoke(t, "victim", map[string]any{"action": "echo"}).Payload)
	if next.PID == first.PID {
		t.Fatalf("the killed process %d served again", first.PID)
	}

	// Kill in the middle of a running invocation.
	done := make(chan *awslambda.InvokeOutput, 1)
	go func() {
		o, _ := h.client.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("victim"), Payload: []byte(`{"action":"sleep","sleepMs":5000}`)})
		done <- o
	}()
	localawstest.Eventually(t, 10*time.Second, "a running invocation", func() bool {
		n, err := h.ctl.LambdaInstances(ctx, "victim")
		return err == nil && n.Running == 1
	})
	now, err := h.ctl.KillLambda(ctx, "victim")
	if err != nil || !now {
		t.Fatalf("KillLambda during an invocation = %v, %v", now, err)
	}
	select {
	case o := <-done:
		if o == nil || aws.ToString(o.FunctionError) != "Unhandled" || !strings.Contains(string(o.Payload), "Runtime.ExitError") {
			t.Fatalf("invocation killed mid-way: %+v", o)
		}
	case <-time.After(4 * time.Second):
		t.Fatalf("invocation not failed by the kill (killed now: %v)", now)
	}
}

func TestConcurrency(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.create(t, "conc", nil)
	ctx := context.Background()
	if _, err := h.client.PutFunctionConcurrency(ctx, &awslambda.PutFunctionConcurrencyInput{FunctionName: aws.String("conc"), ReservedConcurrentExecutions: aws.Int32(0)}); err != nil {
		t.Fatal(err)
	}
	_, err := h.client.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("conc"), Payload: []byte(`{}`)})
	var tmr *types.TooManyRequestsException
	if !errors.As(err, &tmr) || tmr.Reason != types.ThrottleReasonReservedFunctionConcurrentInvocationLimitExceeded {
		t.Fatalf("reserved 0: %v", err)
	}
	if _, err := h.client.PutFunctionConcurrency(ctx, &awslambda.PutFunctionConcurrencyInput{FunctionName: aws.String("conc"), ReservedConcurrentExecutions: aws.Int32(2)}); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var wg sync.WaitGroup
	pids := make([]int, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, err := h.client.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("conc"), Payload: []byte(`{"action":"sleep","sleepMs":1500}`)})
			if err != nil || o.FunctionError != nil {
				t.Errorf("concurrent invocation: %v %v", err, o)
				return
			}
			var r fnResponse
			_ = json.Unmarshal(o.Payload, &r)
			pids[i] = r.PID
		}()
	}
	localawstest.Eventually(t, 10*time.Second, "two busy processes", func() bool {
		n, err := h.ctl.LambdaInstances(ctx, "conc")
		return err == nil && n.Busy == 2
	})
	_, err = h.client.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("conc"), Payload: []byte(`{}`)})
	if !errors.As(err, &tmr) {
		t.Errorf("third concurrent invocation: %v, want TooManyRequestsException", err)
	}
	close(release)
	wg.Wait()
	if pids[0] == 0 || pids[0] == pids[1] {
		t.Fatalf("concurrent invocations ran in processes %v, want two", pids)
	}
	n, _ := h.ctl.LambdaInstances(ctx, "conc")
	if n.Started != 2 || n.Live != 2 {
		t.Fatalf("instances = %+v", n)
	}
	// Stopping forces a cold start.
	if stopped, err := h.ctl.StopLambda(ctx, "conc"); err != nil || stopped != 2 {
		t.Fatalf("StopLambda = %d, %v", stopped, err)
	}
	h.invoke(t, "conc", map[string]any{"action": "echo"})
	if n, _ := h.ctl.LambdaInstances(ctx, "conc"); n.Started != 3 {
		t.Fatalf("after stop: %+v", n)
	}
}

func TestEventInvocation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.create(t, "async", func(in *awslambda.CreateFunctionInput) {
		in.LoggingConfig = &types.LoggingConfig{LogGroup: aws.String("/custom/async")}
	})
	ctx := context.Background()
	out, err := h.client.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("async"), InvocationType: types.InvocationTypeEvent,
		Payload: []byte(`{"action":"log","message":"event-ok"}`)})
	if err != nil || out.StatusCode != 202 || len(out.Payload) != 0 {
		t.Fatalf("Event invoke = %+v, %v", out, err)
	}
	localawstest.Eventually(t, 10*time.Second, "the event's log lines", func() bool {
		return len(h.logs.matching("stdout: event-ok")) == 1 && len(h.logs.matching("stderr: event-ok")) == 1 &&
			len(h.logs.matching("REPORT RequestId: ")) == 1
	})
	for _, l := range h.logs.matching("event-ok") {
		if l.group != "/custom/async" || !strings.Contains(l.stream, "/[$LATEST]") {
			t.Fatalf("log line %+v", l)
		}
	}
	if len(h.logs.matching("START RequestId: ")) == 0 || len(h.logs.matching("END RequestId: ")) == 0 {
		t.Fatalf("no START/END lines: %+v", h.logs.lines)
	}

	// A failing event is tried three times in all.
	if err := h.svc.InvokeAsync(ctx, "async", []byte(`{"action":"error","message":"retry-me"}`)); err != nil {
		t.Fatal(err)
	}
	localawstest.Eventually(t, 10*time.Second, "three attempts", func() bool { return len(h.logs.matching(`"errorMessage":"retry-me"`)) == 3 })
	var ae *awsapi.Error
	if err := h.svc.InvokeAsync(ctx, "missing", nil); !errors.As(err, &ae) || ae.Code != "ResourceNotFoundException" {
		t.Fatalf("InvokeAsync missing function: %v", err)
	}
}

func TestInvokeAuthorization(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.create(t, "guarded", nil)
	h.env.SetAuthorizer(localawstest.AdminsOnly{})
	akid, secret, token := h.env.Credentials.IssueRoleCredentials("arn:aws:iam::000000000000:role/caller")
	caller := clientFor(h.url, akid, secret, token)
	ctx := context.Background()
	_, err := caller.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("guarded"), Payload: []byte(`{}`)})
	if !isCode(err, "AccessDeniedException") {
		t.Fatalf("role without permission: %v", err)
	}
	if _, err := h.client.AddPermission(ctx, &awslambda.AddPermissionInput{FunctionName: aws.String("guarded"), StatementId: aws.String("caller"),
		Action: aws.String("lambda:InvokeFunction"), Principal: aws.String("arn:aws:iam::000000000000:role/caller")}); err != nil {
		t.Fatal(err)
	}
	out, err := caller.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String("guarded"), Payload: []byte(`{"action":"echo"}`)})
	if err != nil || out.FunctionError != nil {
		t.Fatalf("role allowed by the function policy: %v", err)
	}
}

func TestArm64UnderEmulation(t *testing.T) {
	t.Parallel()
	if runtime.GOARCH != "amd64" {
		t.Skip("arm64 runs natively here")
	}
	if _, err := exec.LookPath("qemu-aarch64"); err != nil {
		t.Skip("qemu-aarch64 is not installed (Debian package qemu-user)")
	}
	h := newHarness(t)
	h.create(t, "arm", func(in *awslambda.CreateFunctionInput) {
		in.Architectures = []types.Architecture{types.ArchitectureArm64}
		in.Code = &types.FunctionCode{ZipFile: bootstrapZip(t, "arm64")}
	})
	out := h.invoke(t, "arm", map[string]any{"action": "echo", "data": "arm"})
	if r := decode[fnResponse](t, out.Payload); out.FunctionError != nil || string(r.Data) != `"arm"` {
		t.Fatalf("arm64 invoke: %s", out.Payload)
	}
}

func isCode(err error, code string) bool { return localawstest.ErrorCode(err) == code }
