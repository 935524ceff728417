package perfreport

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relaypackage"
	"github.com/outboxkit/terraform-provider-outbox/internal/tfrun"
)

var initDuration = regexp.MustCompile(`Init Duration: ([0-9.]+) ms`)

// measureColdStarts creates fresh relay functions of each architecture
// that runs here (arm64 under qemu-aarch64 on x86_64 hosts) and invokes
// each twice with an empty stream batch.
func measureColdStarts(ctx context.Context, cfg aws.Config, o Options) ([]ColdStart, error) {
	lc := lambda.NewFromConfig(cfg)
	ic := iam.NewFromConfig(cfg)
	role, err := ic.CreateRole(ctx, &iam.CreateRoleInput{
		RoleName:                 aws.String("bench-cold-start"),
		AssumeRolePolicyDocument: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`),
	})
	if err != nil {
		return nil, err
	}
	env := provision.Spec{Name: "bench-cold"}.Environment("")
	var out []ColdStart
	for _, arch := range []provision.Architecture{provision.ArchX86_64, provision.ArchARM64} {
		emulated := arch != nativeArch()
		if emulated && !lookPath("qemu-aarch64") && !lookPath("qemu-x86_64") {
			continue
		}
		zip, err := relaypackage.Zip(string(arch))
		if err != nil {
			return nil, err
		}
		cs := ColdStart{Arch: string(arch), Emulated: emulated}
		for i := range o.ColdStarts {
			name := fmt.Sprintf("bench-cold-%s-%d", arch, i)
			if _, err := lc.CreateFunction(ctx, &lambda.CreateFunctionInput{
				FunctionName:  aws.String(name),
				Role:          role.Role.Arn,
				Runtime:       lambdatypes.Runtime(provision.Runtime),
				Handler:       aws.String(provision.Handler),
				Architectures: []lambdatypes.Architecture{lambdatypes.Architecture(arch)},
				MemorySize:    aws.Int32(provision.DefaultRelayMemory),
				Timeout:       aws.Int32(provision.DefaultRelayTimeout),
				Code:          &lambdatypes.FunctionCode{ZipFile: zip},
				Environment:   &lambdatypes.Environment{Variables: env},
			}); err != nil {
				return nil, fmt.Errorf("creating %s: %w", name, err)
			}
			w := lambda.NewFunctionActiveV2Waiter(lc, func(o *lambda.FunctionActiveV2WaiterOptions) {
				o.MinDelay = 100 * time.Millisecond
				o.MaxDelay = time.Second
			})
			if err := w.Wait(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(name)}, time.Minute); err != nil {
				return nil, err
			}
			first, logs, err := invoke(ctx, lc, name)
			if err != nil {
				return nil, err
			}
			warm, _, err := invoke(ctx, lc, name)
			if err != nil {
				return nil, err
			}
			cs.First = append(cs.First, first)
			cs.Warm = append(cs.Warm, warm)
			if m := initDuration.FindStringSubmatch(logs); m != nil {
				ms, _ := strconv.ParseFloat(m[1], 64)
				cs.Init = append(cs.Init, time.Duration(ms*float64(time.Millisecond)))
			}
			if _, err := lc.DeleteFunction(ctx, &lambda.DeleteFunctionInput{FunctionName: aws.String(name)}); err != nil {
				return nil, err
			}
		}
		out = append(out, cs)
	}
	return out, nil
}

// invoke invokes a function with an empty stream batch and returns the
// time the call took and the log tail.
func invoke(ctx context.Context, lc *lambda.Client, name string) (time.Duration, string, error) {
	start := time.Now()
	out, err := lc.Invoke(ctx, &lambda.InvokeInput{
		FunctionName: aws.String(name),
		Payload:      []byte(`{"Records":[]}`),
		LogType:      lambdatypes.LogTypeTail,
	})
	d := time.Since(start)
	if err != nil {
		return 0, "", fmt.Errorf("invoking %s: %w", name, err)
	}
	if out.FunctionError != nil {
		return 0, "", fmt.Errorf("invoking %s: %s: %s", name, aws.ToString(out.FunctionError), out.Payload)
	}
	logs, _ := base64.StdEncoding.DecodeString(aws.ToString(out.LogResult))
	return d, string(logs), nil
}

// ApplyResult is the time to create a pipeline.
type ApplyResult struct {
	// Terraform is `terraform apply` of one outbox_pipeline with defaults
	// (empty when no CLI was given); Destroy the matching destroys.
	Terraform, Destroy []time.Duration
	// TerraformVersion is the CLI's version line.
	TerraformVersion string
	// TerraformSkipped says why Terraform was not timed.
	TerraformSkipped string
	// Create is provision.Create of the same Spec, without Terraform.
	Create []time.Duration
}

const applyConfig = `terraform {
  required_providers {
    outbox = {
      source = "outboxkit/outbox"
    }
  }
}

provider "outbox" {}

variable "name" {
  type = string
}

resource "outbox_pipeline" "bench" {
  name = var.name
}
`

// measureApply times `terraform apply` (and destroy) of a default
// pipeline through internal/tfrun, then provision.Create of the same Spec.
func measureApply(ctx context.Context, o Options, stack *localaws.Stack, cfg aws.Config, say func(string, ...any)) (ApplyResult, error) {
	var res ApplyResult
	tf, err := terraformCLI(o.Terraform)
	if err != nil {
		res.TerraformSkipped = err.Error()
	} else {
		dir, err := os.MkdirTemp("", "outbox-bench-")
		if err != nil {
			return res, err
		}
		defer func() { _ = os.RemoveAll(dir) }()
		say("  building the provider for Terraform...")
		inst, err := tfrun.Setup(ctx, tfrun.Options{Terraform: tf, Module: o.Root, Dir: filepath.Join(dir, "tf")})
		if err != nil {
			return res, err
		}
		work := filepath.Join(dir, "config")
		if err := os.MkdirAll(work, 0o755); err != nil {
			return res, err
		}
		if err := os.WriteFile(filepath.Join(work, "main.tf"), []byte(applyConfig), 0o644); err != nil {
			return res, err
		}
		run := inst.Runner(work, tfrun.AWSEnv(stack.Endpoint(), stack.Options().Region))
		if v, err := run.Run(ctx, "version"); err == nil {
			res.TerraformVersion = trimLines(v.Stdout, 1)
		}
		if err := run.Init(ctx); err != nil {
			return res, err
		}
		for i := range o.Applies {
			// A fresh name each time: SQS refuses to re-create a queue
			// within 60 s of deleting one of the same name, and the
			// pipeline would wait that out.
			name := tfrun.Var{Name: "name", Value: fmt.Sprintf("bench-apply-%d", i)}
			start := time.Now()
			if err := run.Apply(ctx, name); err != nil {
				return res, err
			}
			res.Terraform = append(res.Terraform, time.Since(start))
			start = time.Now()
			if err := run.Destroy(ctx, name); err != nil {
				return res, err
			}
			res.Destroy = append(res.Destroy, time.Since(start))
			say("  terraform apply %d: %s (destroy %s)", i+1, res.Terraform[i].Round(10*time.Millisecond), res.Destroy[i].Round(10*time.Millisecond))
		}
	}
	pc := provision.New(cfg, relayCode())
	for i := range o.Applies {
		start := time.Now()
		st, err := pc.Create(ctx, provision.Spec{Name: fmt.Sprintf("bench-create-%d", i)})
		if err != nil {
			return res, err
		}
		res.Create = append(res.Create, time.Since(start))
		if _, err := pc.Delete(ctx, st); err != nil {
			return res, err
		}
		say("  provision.Create %d: %s", i+1, res.Create[i].Round(10*time.Millisecond))
	}
	return res, nil
}
