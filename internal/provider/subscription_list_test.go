package provider

import (
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

// TestAccSubscription_identity: a subscription's identity is its account,
// Region and name; an import block by identity imports it with no change,
// with its configuration or with one generated from the import.
func TestAccSubscription_identity(t *testing.T) {
	e := newAccEnv(t)
	name := e.Name("ident-sub")
	before := e.Snapshot()
	config := e.ProviderConfig() + fmt.Sprintf(`
resource "outbox_subscription" "test" {
  name         = %q
  sources      = ["com.example.orders"]
  detail_types = ["OrderPlaced"]
  queue = {
    visibility_timeout_seconds = 60
  }
}
`, name)
	steps := []resource.TestStep{{
		Config:            config,
		ConfigStateChecks: []statecheck.StateCheck{statecheck.ExpectIdentity(accSub, e.identityOf(name))},
	}}
	resource.Test(t, resource.TestCase{
		TerraformVersionChecks:   []tfversion.TerraformVersionCheck{tfversion.SkipBelow(tfversion.Version1_12_0)},
		ProtoV6ProviderFactories: e.factories(),
		CheckDestroy:             e.checkSubscriptionsDestroyed(before, nil, name),
		Steps:                    append(steps, e.identitySteps(config, accSub)...),
	})
}
