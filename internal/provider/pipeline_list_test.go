package provider

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck/queryfilter"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
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
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_14_0)},
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
