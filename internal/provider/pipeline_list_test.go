package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck/queryfilter"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/tfrun"
)

// identityOf is the identity check of the resource called name in the
// test's Region: any twelve-digit account.
func (e *accEnv) identityOf(name string) map[string]knownvalue.Check {
	return map[string]knownvalue.Check{
		"account_id": knownvalue.StringRegexp(regexp.MustCompile(`^\d{12}$`)),
		"region":     knownvalue.StringExact(e.Cfg.Region),
		"name":       knownvalue.StringExact(name),
	}
}

// identitySteps are the steps that import res (called name, applied by
// config in the step before) by its identity: with config, and with
// configuration generated from the import, each planning no change.
func (e *accEnv) identitySteps(config, res string) []resource.TestStep {
	return []resource.TestStep{
		{Config: config, ResourceName: res, ImportState: true, ImportStateKind: resource.ImportBlockWithResourceIdentity},
		{Config: e.ProviderConfig(), ResourceName: res, ImportState: true, ImportStateKind: resource.ImportBlockWithResourceIdentity, GenerateConfig: true},
	}
}

// TestAccPipeline_identity: a pipeline's identity is its account, Region
// and name; an import block by identity imports it with no change, with
// its configuration or with one generated from the import; an identity in
// another Region is refused, naming the attribute.
func TestAccPipeline_identity(t *testing.T) {
	e := newAccEnv(t)
	name := e.Name("ident")
	before := e.Snapshot()
	config := e.PipelineConfig(name, `
  reconciler = {
    enabled = false
  }
  tags = { team = "imports" }`)
	otherRegion := config + fmt.Sprintf(`
resource "outbox_pipeline" "other" {
  name = %[1]q
}

import {
  to       = outbox_pipeline.other
  identity = { name = %[1]q, region = "eu-north-1" }
}
`, name)
	steps := []resource.TestStep{{
		Config:            config,
		ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectIdentity(accResource, e.identityOf(name))},
	}}
	steps = append(steps, e.identitySteps(config, accResource)...)
	steps = append(steps, resource.TestStep{
		Config: otherRegion, PlanOnly: true,
		ExpectError: regexp.MustCompile(`identity\.region eu-north-1 is not the provider's`),
	})
	resource.Test(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		ProtoV6ProviderFactories: e.factories(),
		CheckDestroy:             e.CheckDestroy(name, before),
		Steps:                    steps,
	})
}

// TestAccPipeline_query: `terraform query` finds two pipelines and a
// subscription of the Region, each with its identity and the object an
// import reads (the configuration `-generate-config-out` writes), and
// only those whose name starts with name_prefix.
func TestAccPipeline_query(t *testing.T) {
	e := newAccEnv(t)
	prefix := e.Name("qry")
	a, b, sub := prefix+"-a", prefix+"-b", prefix+"-sub"
	before := e.Snapshot()
	config := e.ProviderConfig() + fmt.Sprintf(`
resource "outbox_pipeline" "a" {
  name       = %[1]q
  reconciler = { enabled = false }
}

resource "outbox_pipeline" "b" {
  name       = %[2]q
  reconciler = { enabled = false }
  published  = { action = "delete" }
  tags       = { team = "b" }
}

resource "outbox_subscription" "s" {
  name         = %[3]q
  event_bus    = outbox_pipeline.a.target_arn
  sources      = ["com.example.orders"]
  detail_types = ["OrderPlaced"]
}
`, a, b, sub)
	query := fmt.Sprintf(`
list "outbox_pipeline" "all" {
  provider         = outbox
  include_resource = true
  config {
    name_prefix = %[1]q
  }
}

list "outbox_pipeline" "b" {
  provider = outbox
  config {
    name_prefix = %[2]q
  }
}

list "outbox_subscription" "all" {
  provider         = outbox
  include_resource = true
  config {
    name_prefix = %[1]q
  }
}
`, prefix, b)
	byName := func(name string) queryfilter.QueryFilter { return queryfilter.ByResourceIdentity(e.identityOf(name)) }
	resource.Test(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0), acctest.SkipOpenTofu},
		ProtoV6ProviderFactories: e.factories(),
		CheckDestroy:             e.checkSubscriptionsDestroyed(before, resource.ComposeTestCheckFunc(e.CheckDestroy(a, before), e.CheckDestroy(b, before)), sub),
		Steps: []resource.TestStep{
			{Config: config},
			{
				Query:  true,
				Config: query,
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength("outbox_pipeline.all", 2),
					querycheck.ExpectIdentity("outbox_pipeline.all", e.identityOf(a)),
					querycheck.ExpectIdentity("outbox_pipeline.all", e.identityOf(b)),
					querycheck.ExpectResourceDisplayName("outbox_pipeline.all", byName(b), knownvalue.StringExact(b)),
					querycheck.ExpectResourceKnownValues("outbox_pipeline.all", byName(b), []querycheck.KnownValueCheck{
						{Path: tfjsonpath.New("name"), KnownValue: knownvalue.StringExact(b)},
						{Path: tfjsonpath.New("published").AtMapKey("action"), KnownValue: knownvalue.StringExact("delete")},
						{Path: tfjsonpath.New("reconciler").AtMapKey("enabled"), KnownValue: knownvalue.Bool(false)},
						{Path: tfjsonpath.New("tags"), KnownValue: knownvalue.MapExact(map[string]knownvalue.Check{"team": knownvalue.StringExact("b")})},
						{Path: tfjsonpath.New("table_name"), KnownValue: knownvalue.StringExact(b + "-outbox")},
					}),
					querycheck.ExpectLength("outbox_pipeline.b", 1),
					querycheck.ExpectIdentity("outbox_pipeline.b", e.identityOf(b)),
					querycheck.ExpectLength("outbox_subscription.all", 1),
					querycheck.ExpectIdentity("outbox_subscription.all", e.identityOf(sub)),
					querycheck.ExpectResourceKnownValues("outbox_subscription.all", byName(sub), []querycheck.KnownValueCheck{
						{Path: tfjsonpath.New("detail_types"), KnownValue: knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("OrderPlaced")})},
					}),
				},
			},
		},
	})
}

// TestAccPipeline_queryGeneratesConfig runs the Terraform CLI itself (1.14
// or later, with the provider built from this checkout): `terraform query
// -generate-config-out` over two pipelines and a subscription writes an
// import block by identity and a resource block for each, and a plan of
// that configuration imports the three with no change.
func TestAccPipeline_queryGeneratesConfig(t *testing.T) {
	tf := acctest.TerraformCLI(t, filepath.Join("..", ".."))
	e := newAccEnv(t)
	ctx, cancel := context.WithTimeout(e.Ctx, 15*time.Minute)
	defer cancel()
	skipBelowQuery(ctx, t, tf)
	inst, err := tfrun.Setup(ctx, tfrun.Options{Terraform: tf, Module: filepath.Join("..", ".."), Dir: t.TempDir(), Log: acctest.TestLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]string
	if e.Stack != nil {
		env = tfrun.AWSEnv(e.Stack.Endpoint(), e.Cfg.Region)
	}
	prefix := e.Name("gen")
	provider := fmt.Sprintf("terraform {\n  required_providers {\n    outbox = { source = %q }\n  }\n}\n", tfrun.ProviderSource) + e.ProviderConfig()
	apply := runIn(ctx, t, inst, env, provider+fmt.Sprintf(`
resource "outbox_pipeline" "a" {
  name       = "%[1]s-a"
  relay      = { architecture = "x86_64" }
  reconciler = { enabled = false }
}

resource "outbox_pipeline" "b" {
  name       = "%[1]s-b"
  relay      = { architecture = "x86_64" }
  reconciler = { enabled = false }
  published  = { action = "delete" }
  tags       = { team = "b" }
}

resource "outbox_subscription" "s" {
  name         = "%[1]s-sub"
  event_bus    = outbox_pipeline.a.target_arn
  sources      = ["com.example.orders"]
  detail_types = ["OrderPlaced"]
}
`, prefix), "")
	if err := apply.Apply(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := apply.Destroy(context.Background()); err != nil {
			t.Error(err)
		}
	})
	query := runIn(ctx, t, inst, env, provider, fmt.Sprintf(`
list "outbox_pipeline" "found" {
  provider         = outbox
  include_resource = true
  config {
    name_prefix = %[1]q
  }
}

list "outbox_subscription" "found" {
  provider         = outbox
  include_resource = true
  config {
    name_prefix = %[1]q
  }
}
`, prefix))
	if _, err := query.Run(ctx, "query", "-no-color", "-generate-config-out=generated.tf"); err != nil {
		t.Fatal(err)
	}
	generated, err := os.ReadFile(filepath.Join(query.Dir, "generated.tf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{prefix + "-a", prefix + "-b", prefix + "-sub"} {
		if !regexp.MustCompile(`(?s)import \{.*identity = \{[^}]*name\s+= "` + name + `"`).Match(generated) {
			t.Errorf("the generated configuration has no import of %s by identity:\n%s", name, generated)
		}
	}
	plan, err := query.Run(ctx, "plan", "-no-color", "-input=false")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.Stdout, "Plan: 3 to import, 0 to add, 0 to change, 0 to destroy.") {
		t.Errorf("the generated configuration does not import the three with no change:\n%s", plan.Stdout)
	}
}

// skipBelowQuery skips a test of `terraform query` on a CLI (tf) before
// 1.14.
func skipBelowQuery(_ context.Context, t *testing.T, tf string) {
	t.Helper()
	v, err := acctest.CLIVersion(tf)
	if err != nil {
		t.Fatalf("%s version: %v", tf, err)
	}
	if v.LessThan(tfversion.Version1_14_0) {
		t.Skipf("Terraform CLI version %s has no terraform query (1.14 and later)", v)
	}
}

// runIn writes config (and query, a .tfquery.hcl file, unless empty) to a
// new directory and returns a runner of inst there with env, once it has
// run init.
func runIn(ctx context.Context, t *testing.T, inst *tfrun.Installation, env map[string]string, config, query string) *tfrun.Runner {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"main.tf": config, "main.tfquery.hcl": query}
	for name, body := range files {
		if body == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := inst.Runner(dir, env)
	run.Log = acctest.TestLog(t)
	if err := run.Init(ctx); err != nil {
		t.Fatal(err)
	}
	return run
}
