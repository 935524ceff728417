// Package acctest is the harness of the provider's acceptance tests: the
// environment each test function runs in, and the fixtures and checks that
// they share (sinks that receive the published events, an application
// table, writers, waits).
//
// The tests run with TF_ACC=1 and the Terraform CLI given by TF_ACC_TERRAFORM_PATH
// (CHECKPOINT_DISABLE=1 and TF_CLI_CONFIG_FILE=/dev/null keep it offline; see
// the GNUmakefile's testacc target). Where they run is chosen by one
// variable:
//
//   - OUTBOX_ACC_AWS unset (the default): every test function starts its own
//     local AWS stack (internal/localaws) in-process, on a free port of
//     127.0.0.1. The provider block points endpoint_url at it, with region
//     us-east-1; the static test credentials come from the environment
//     (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, set by TestMain).
//   - OUTBOX_ACC_AWS=1: the same tests run against real AWS, with the
//     standard AWS environment (AWS_PROFILE or AWS_ACCESS_KEY_ID...,
//     AWS_REGION, default us-east-1). Names get a random suffix. Steps that
//     need the local stack's control API (fault injection, event source
//     mapping counters) are skipped there, and CheckDestroy proves the
//     destruction with describe calls instead of the stack's inventory.
//
// Tests of asynchronous delivery wait for their condition with a deadline
// (Wait), never a fixed sleep.
package acctest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	tfacctest "github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
)

const (
	// EnvAWS, set to any value, runs the tests against real AWS.
	EnvAWS = "OUTBOX_ACC_AWS"
	// Deadline of each asynchronous condition: generous for a loaded
	// 2-core machine running arm64 functions through qemu.
	Deadline = 3 * time.Minute
)

// OnAWS reports whether the tests run against real AWS.
func OnAWS() bool { return os.Getenv(EnvAWS) != "" }

// Main runs a test binary's tests (call it from TestMain). On the local
// stack it first sets the static test credentials, which the provider reads
// from the environment like hashicorp/aws does.
func Main(m *testing.M) {
	if !OnAWS() {
		// The local stack takes any key; the provider reads these like
		// hashicorp/aws does, from the environment.
		for k, v := range map[string]string{
			"AWS_ACCESS_KEY_ID": "AKIDACCTEST", "AWS_SECRET_ACCESS_KEY": "acctestsecret",
			"AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_EC2_METADATA_DISABLED": "true",
		} {
			err := os.Unsetenv(k)
			if v != "" {
				err = os.Setenv(k, v)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "setting %s: %v\n", k, err)
				os.Exit(1)
			}
		}
	}
	os.Exit(m.Run())
}

// TerraformCLI skips t unless TF_ACC is set, and returns the Terraform CLI
// that tests running the real CLI use: TF_ACC_TERRAFORM_PATH, or bin/terraform
// below root, the module's root directory.
func TerraformCLI(t *testing.T, root string) string {
	t.Helper()
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance tests run with %s=1", resource.EnvTfAcc)
	}
	tf := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if tf == "" {
		tf = filepath.Join(root, "bin", "terraform")
	}
	if _, err := os.Stat(tf); err != nil {
		t.Fatalf("the Terraform CLI: %v (make tools builds it)", err)
	}
	return tf
}

// TestLog is a writer that sends what is written to it, such as
// Terraform's output, to the log of t.
func TestLog(t *testing.T) io.Writer { return testLog{t} }

type testLog struct{ t *testing.T }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Env is where one acceptance test function runs: its own local stack,
// or real AWS.
type Env struct {
	T     *testing.T
	Stack *localaws.Stack // nil on AWS
	Ctl   *control.Client // nil on AWS
	Cfg   aws.Config
	// Ctx is cancelled when the test ends, or after 20 minutes.
	Ctx context.Context
	// suffix makes names unique on AWS.
	suffix string
}

// New returns the environment of the test t, which it marks parallel: a
// local stack of its own, or real AWS. It skips t unless TF_ACC is set.
func New(t *testing.T) *Env {
	t.Helper()
	if os.Getenv(resource.EnvTfAcc) == "" {
		// resource.Test skips too; fail nothing and start nothing.
		t.Skipf("acceptance tests run with %s=1", resource.EnvTfAcc)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	t.Cleanup(cancel)
	// Each test function has its own stack (or unique names on AWS), so
	// they run in parallel; much of their time is waiting.
	t.Parallel()
	e := &Env{T: t, Ctx: ctx}
	if OnAWS() {
		cfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			t.Fatalf("loading the AWS configuration: %v", err)
		}
		if cfg.Region == "" {
			cfg.Region = "us-east-1"
		}
		e.Cfg = cfg
		e.suffix = "-" + tfacctest.RandString(6)
		return e
	}
	e.Stack = localawstest.Start(t)
	e.Ctl = localawstest.Control(e.Stack)
	e.Cfg = localawstest.Config(e.Stack)
	return e
}

// Name returns a component name, unique on AWS.
func (e *Env) Name(base string) string { return base + e.suffix }

// ProviderConfig is the provider block for the environment.
func (e *Env) ProviderConfig() string {
	if e.Stack == nil {
		return fmt.Sprintf("provider \"outbox\" {\n  region = %q\n}\n", e.Cfg.Region)
	}
	return fmt.Sprintf("provider \"outbox\" {\n  region       = \"us-east-1\"\n  endpoint_url = %q\n}\n", e.Stack.Endpoint())
}

// Inventory returns the local stack's resources (streams aside: AWS keeps a
// stream readable for 24 hours after its table or its disabling).
func (e *Env) Inventory() map[string][]string {
	e.T.Helper()
	return localawstest.Inventory(e.Ctx, e.T, e.Ctl)
}

// Snapshot is the local stack's inventory, taken after a test's fixtures
// are created, for CheckDestroy; nil on AWS, where CheckDestroy asks each
// component instead.
func (e *Env) Snapshot() map[string][]string {
	if e.Stack == nil {
		return nil
	}
	return e.Inventory()
}

// CheckDestroy proves that nothing of the pipeline is left: on the local
// stack, the inventory is back to before (taken after the test's own
// fixtures were created); on AWS, each component's describe call reports it
// missing.
func (e *Env) CheckDestroy(name string, before map[string][]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if e.Stack != nil {
			after := e.Inventory()
			if !localawstest.SameInventory(before, after) {
				return fmt.Errorf("destroy left resources:\nbefore %v\nafter  %v", before, after)
			}
			return nil
		}
		n := provision.NamesFor(name)
		lc := lambda.NewFromConfig(e.Cfg)
		for _, fn := range []string{n.RelayFunction, n.ReconcilerFunction} {
			if _, err := lc.GetFunction(e.Ctx, &lambda.GetFunctionInput{FunctionName: aws.String(fn)}); err == nil {
				return fmt.Errorf("function %s still exists", fn)
			}
		}
		ic := iam.NewFromConfig(e.Cfg)
		for _, role := range []string{n.RelayRole, n.ReconcilerRole, n.SchedulerRole} {
			if _, err := ic.GetRole(e.Ctx, &iam.GetRoleInput{RoleName: aws.String(role)}); err == nil {
				return fmt.Errorf("role %s still exists", role)
			}
		}
		alarms, err := cloudwatch.NewFromConfig(e.Cfg).DescribeAlarms(e.Ctx, &cloudwatch.DescribeAlarmsInput{AlarmNames: []string{
			n.AlarmDLQNotEmpty, n.AlarmRelayErrors, n.AlarmIteratorAge, n.AlarmOldestPendingAge,
		}})
		if err != nil {
			return fmt.Errorf("describing the alarms of %s: %w", name, err)
		}
		if len(alarms.MetricAlarms) > 0 {
			return fmt.Errorf("%d alarms of %s remain", len(alarms.MetricAlarms), name)
		}
		if _, err := sqs.NewFromConfig(e.Cfg).GetQueueUrl(e.Ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(n.DeadLetterQueue)}); err == nil {
			return fmt.Errorf("queue %s still exists", n.DeadLetterQueue)
		}
		if out, err := dynamodb.NewFromConfig(e.Cfg).DescribeTable(e.Ctx, &dynamodb.DescribeTableInput{TableName: aws.String(n.Table)}); err == nil && out.Table.TableStatus != ddbtypes.TableStatusDeleting {
			return fmt.Errorf("table %s still exists", n.Table)
		}
		return nil
	}
}

// Wait polls cond until it returns nil or the deadline passes, and then
// fails with cond's last error.
func Wait(ctx context.Context, what string, cond func() error) error {
	deadline := time.Now().Add(Deadline)
	delay := 50 * time.Millisecond
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s: not reached within %s: %w", what, Deadline, err)
		}
		time.Sleep(delay)
		delay = min(delay*2, time.Second)
	}
}

// RegionConfig is Cfg for another Region: the SDK signs its requests for
// region, which the local stack serves there as AWS does.
func (e *Env) RegionConfig(region string) aws.Config {
	cfg := e.Cfg.Copy()
	cfg.Region = region
	return cfg
}

// PipelineConfig is the provider block and one outbox_pipeline with the
// test settings: fast mapping, short reconciler age, x86_64 functions
// unless the body sets an architecture.
func (e *Env) PipelineConfig(name, body string) string {
	return e.ProviderConfig() + fmt.Sprintf(`
resource "outbox_pipeline" "test" {
  name = %q
%s
}
`, name, body)
}
