package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
)

// TestAccPipelineDataSource: the data source finds a pipeline by name and
// reports the writer settings and the ARNs that the resource has.
func TestAccPipelineDataSource(t *testing.T) {
	e := newAccEnv(t)
	name := e.Name("ds")
	config := e.PipelineConfig(name, fastRelay+`
  table = {
    sort_key_prefix = "EVT#"
  }
  pending_index = {
    shards = 4
  }`) + `
data "outbox_pipeline" "test" {
  name       = outbox_pipeline.test.name
  depends_on = [outbox_pipeline.test]
}
`
	const ds = "data.outbox_pipeline.test"
	same := func(attr string) statecheck.StateCheck {
		return statecheck.CompareValuePairs(accResource, attrPath(attr), ds, attrPath(attr), compare.ValuesSame())
	}
	e.run(t, nil, []resource.TestStep{{
		Config: config,
		ConfigStateChecks: []statecheck.StateCheck{
			statecheck.ExpectKnownValue(ds, attrPath("writer.sort_key_prefix"), knownvalue.StringExact("EVT#")),
			statecheck.ExpectKnownValue(ds, attrPath("writer.pending_index_shards"), knownvalue.Int64Exact(4)),
			same("writer"), same("id"), same("table_arn"), same("stream_arn"), same("pending_index_arn"), same("target_arn"),
			same("dead_letter_queue_url"), same("dead_letter_queue_arn"), same("relay_function_arn"), same("relay_role_arn"),
			same("relay_log_group"), same("event_source_mapping_uuid"), same("reconciler_function_arn"),
		},
	}})
}
