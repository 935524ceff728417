package localaws_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambdatest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// TestLambdaWiring runs a function in a full stack: the execution role is
// checked by the IAM service and the function's logs reach CloudWatch Logs.
func TestLambdaWiring(t *testing.T) {
	t.Parallel()
	code := lambdatest.Zip(t, "./lambda/testdata/fn", runtime.GOARCH)

	s := localawstest.Start(t)
	cfg := localawstest.Config(s)
	ctx := context.Background()
	iamc := iam.NewFromConfig(cfg)
	lam := lambda.NewFromConfig(cfg, func(o *lambda.Options) { o.RetryMaxAttempts = 1 })
	logs := cloudwatchlogs.NewFromConfig(cfg)

	good, err := iamc.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("fn"), AssumeRolePolicyDocument: aws.String(localawstest.TrustPolicy("lambda.amazonaws.com"))})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := iamc.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String("ec2"), AssumeRolePolicyDocument: aws.String(localawstest.TrustPolicy("ec2.amazonaws.com"))})
	if err != nil {
		t.Fatal(err)
	}
	in := &lambda.CreateFunctionInput{
		FunctionName: aws.String("wired"), Runtime: lambdatypes.RuntimeProvidedal2023, Handler: aws.String("bootstrap"),
		Role: bad.Role.Arn, Code: &lambdatypes.FunctionCode{ZipFile: code},
		Architectures: []lambdatypes.Architecture{lambdatest.HostArchitecture()},
	}
	_, err = lam.CreateFunction(ctx, in)
	var ipv *lambdatypes.InvalidParameterValueException
	if !errors.As(err, &ipv) || ipv.ErrorMessage() != "The role defined for the function cannot be assumed by Lambda." {
		t.Fatalf("CreateFunction with a role Lambda cannot assume: %v", err)
	}
	in.Role = good.Role.Arn
	// IAM changes propagate with a delay, as in AWS: retry like the AWS provider.
	err = localawstest.RetryIAM(func() error {
		_, err := lam.CreateFunction(ctx, in)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	lambdatest.WaitActive(ctx, t, lam, "wired")
	out, err := lam.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("wired"), Payload: []byte(`{"action":"log","message":"via-stack"}`)})
	if err != nil || out.FunctionError != nil {
		t.Fatalf("Invoke = %v, %v", out, err)
	}
	if res := s.Router().Inventory()["lambda"]; len(res) != 1 || !strings.HasSuffix(res[0], ":function:wired") {
		t.Fatalf("inventory = %v", res)
	}
	lambdatest.WaitForLogs(ctx, t, logs, "/aws/lambda/wired", "stdout: via-stack", "START RequestId:", "REPORT RequestId:")
}
