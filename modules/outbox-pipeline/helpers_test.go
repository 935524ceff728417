package outboxpipeline_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/tfrun"
)

// requiredOutbox is the terraform block of the tests' configurations: the
// provider the installation serves.
const requiredOutbox = `terraform {
  required_providers {
    outbox = { source = "outboxkit/outbox" }
  }
}
`

// fastRelay is the relay setting of the tests that wait for events:
// x86_64 functions (no emulation) and a mapping that sends each record at
// once.
const fastRelay = `relay = {
    architecture            = "x86_64"
    batch_size              = 10
    batching_window_seconds = 0
  }`

// startModuleTest starts an acceptance test of the module: it returns a
// context that ends within timeout, or with the test, and the Terraform
// CLI (the test is skipped without TF_ACC).
func startModuleTest(t *testing.T, timeout time.Duration) (context.Context, string) {
	t.Helper()
	tf := acctest.TerraformCLI(t, root)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx, tf
}

// stageModules installs the provider built from this checkout for the
// Terraform CLI tf and stages the repository's modules in a directory of
// the test's own: it returns the installation and the directory dir of the
// staged tree (relative to its root, beside the modules directory), which
// it creates, for the test's configuration.
func stageModules(ctx context.Context, t *testing.T, tf, dir string) (*tfrun.Installation, string) {
	t.Helper()
	inst, err := tfrun.Setup(ctx, tfrun.Options{Terraform: tf, Module: root, Dir: t.TempDir(), Log: acctest.TestLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	staged, err := tfrun.Stage(root, t.TempDir(), "modules")
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(staged, dir)
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	return inst, work
}

// initRunner returns a runner of inst for the configuration in work, with
// env added to its environment and its output in the test's log, once it
// has run init.
func initRunner(ctx context.Context, t *testing.T, inst *tfrun.Installation, work string, env map[string]string) *tfrun.Runner {
	t.Helper()
	run := inst.Runner(work, env)
	run.Log = acctest.TestLog(t)
	if err := run.Init(ctx); err != nil {
		t.Fatal(err)
	}
	return run
}

// initAndApply runs init and apply in work, the configuration of inst's
// staged tree, with env added to the runner's environment, and destroys
// what it applied when the test ends.
func initAndApply(ctx context.Context, t *testing.T, inst *tfrun.Installation, work string, env map[string]string) *tfrun.Runner {
	t.Helper()
	run := initRunner(ctx, t, inst, work, env)
	if err := run.Apply(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := run.Destroy(context.Background()); err != nil {
			t.Errorf("destroying: %v", err)
		}
	})
	return run
}

// checkEmptyPlan fails the test unless a plan, after what the test did
// last (after), changes nothing.
func checkEmptyPlan(ctx context.Context, t *testing.T, run *tfrun.Runner, after string) {
	t.Helper()
	res, err := run.Run(ctx, "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if err != nil {
		t.Fatalf("the plan after %s is not empty: %v\n%s", after, err, res.Stdout)
	}
}

// writeFile writes src as the file name of dir.
func writeFile(t *testing.T, dir, name, src string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}
