// Package outboxpipeline_test tests the outbox-pipeline module with the real
// Terraform CLI and the provider built from this checkout, on the local AWS
// stack.
package outboxpipeline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/tfrun"
)

const root = "../.."

// TestAccModuleImport: the module's pipeline, removed from the state and
// imported with an import block, plans no change, and its writer_table
// output holds.
func TestAccModuleImport(t *testing.T) {
	ctx, tf := startModuleTest(t, 15*time.Minute)
	run, write := applyModule(ctx, t, tf)
	if _, err := run.Run(ctx, "state", "rm", "module.p.outbox_pipeline.this"); err != nil {
		t.Fatal(err)
	}
	write("import.tf", "import {\n  to = module.p.outbox_pipeline.this\n  id = \"imp\"\n}\n")
	res, err := run.Run(ctx, "plan", "-input=false", "-no-color")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stdout, "Plan: 1 to import, 0 to add, 0 to change, 0 to destroy.") {
		t.Fatalf("the import plans more than the import:\n%s", res.Stdout)
	}
	if err := run.Apply(ctx); err != nil {
		t.Fatal(err)
	}
	var w struct {
		Name          string `json:"name"`
		SortKeyPrefix string `json:"sort_key_prefix"`
		PendingShards int    `json:"pending_shards"`
	}
	if err := run.OutputInto(ctx, "writer_table", &w); err != nil {
		t.Fatal(err)
	}
	if w.Name != "imp-outbox" || w.SortKeyPrefix != "OUTBOX#" || w.PendingShards != 16 {
		t.Errorf("writer_table = %+v", w)
	}
	checkEmptyPlan(ctx, t, run, "the import")
}

// applyModule applies, on a local stack of its own, a configuration of the
// module (the directory imported beside the staged module) whose pipeline
// is "imp", and destroys it when the test ends. write adds a file to that
// configuration.
func applyModule(ctx context.Context, t *testing.T, tf string) (*tfrun.Runner, func(name, src string)) {
	t.Helper()
	stack := localawstest.Start(t)
	inst, work := stageModules(ctx, t, tf, "imported")
	write := func(name, src string) {
		t.Helper()
		writeFile(t, work, name, src)
	}
	write("main.tf", requiredOutbox+`
module "p" {
  source = "../modules/outbox-pipeline"
  name   = "imp"
  relay  = { architecture = "x86_64" }
  alarms = {}
}

output "writer_table" {
  value = module.p.writer_table
}
`)
	run := initAndApply(ctx, t, inst, work, tfrun.AWSEnv(stack.Endpoint(), stack.Options().Region))
	return run, write
}
