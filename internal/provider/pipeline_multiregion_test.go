package provider

import (
	"fmt"
	"testing"

	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

// TestAccPipeline_multiRegion: multi_region's peers are checked at plan
// (too few, twice, not a Region name, or without the provider's own
// Region, each on multi_region.regions with the fix); a pipeline of the
// peers adopts a NEW_AND_OLD_IMAGES table, as a global table's stream is,
// plans nothing more, and imports with its peers.
func TestAccPipeline_multiRegion(t *testing.T) {
	e := newAccEnv(t)
	name, app := e.Name("multiregion"), e.Name("acc-multiregion")
	e.CreateAppTable(app, ddbtypes.StreamViewTypeNewAndOldImages)
	before := e.Snapshot()
	config := func(regions string) string {
		return e.PipelineConfig(name, fastRelay+fmt.Sprintf(`
  table = {
    existing      = true
    name          = %q
    partition_key = "pk"
    sort_key      = "sk"
  }
  multi_region = {
    regions = %s
  }`, app, regions))
	}
	peers := config(`["us-east-1", "eu-west-1"]`)
	e.run(t, e.CheckDestroy(name, before), []resource.TestStep{
		{Config: config(`["us-east-1"]`), ExpectError: words("multi_region.regions has 1 Region(s), but a multi-Region pipeline needs at least 2")},
		{Config: config(`["us-east-1", "eu-west-1", "us-east-1"]`), ExpectError: words(`multi_region.regions has "us-east-1" twice`)},
		{Config: config(`["us-east-1", "Ireland"]`), ExpectError: words(`multi_region.regions has "Ireland", which is not an AWS Region name`)},
		{Config: config(`["eu-west-1", "ap-south-1"]`), ExpectError: words(`multi_region.regions does not have "us-east-1", the Region this pipeline is created in: add "us-east-1"`)},
		{
			Config: peers,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("multi_region.regions"), knownvalue.ListExact([]knownvalue.Check{knownvalue.StringExact("us-east-1"), knownvalue.StringExact("eu-west-1")})),
				statecheck.ExpectKnownValue(accResource, attrPath("stream_view_type"), knownvalue.StringExact("NEW_AND_OLD_IMAGES")),
			},
		},
		emptyPlanStep(peers),
		// An adopted table's protection is its owner's: import reads the
		// table's own, where the configuration planned the defaults.
		importStep(peers, accResource, name, "table.deletion_protection", "table.point_in_time_recovery"),
	})
}
