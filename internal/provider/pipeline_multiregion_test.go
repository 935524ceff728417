package provider

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
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

// TestAccPipeline_strongConsistencyRefused: adopting a global table with
// multi-Region strong consistency (MRSC) is refused at plan, on
// table.existing, with the reason and what works instead, and nothing is
// created.
func TestAccPipeline_strongConsistencyRefused(t *testing.T) {
	e := newAccEnv(t)
	name, app := e.Name("mrsc"), e.Name("acc-mrsc")
	e.CreateAppTable(app, ddbtypes.StreamViewTypeNewAndOldImages)
	ddb := dynamodb.NewFromConfig(e.Cfg)
	if _, err := ddb.UpdateTable(e.Ctx, localawstest.StrongGlobalTableInput(app, "eu-west-1", "us-west-2")); err != nil {
		t.Fatal(err)
	}
	replicated := e.checkReplicaActive(dynamodb.NewFromConfig(e.RegionConfig("eu-west-1")), app)
	if err := acctest.Wait(e.Ctx, "the MRSC table's replica in eu-west-1", func() error { return replicated(nil) }); err != nil {
		t.Fatal(err)
	}
	before := e.Snapshot()
	config := e.PipelineConfig(name, fastRelay+fmt.Sprintf(`
  table = {
    existing      = true
    name          = %q
    partition_key = "pk"
    sort_key      = "sk"
  }
  multi_region = {
    regions = ["us-east-1", "eu-west-1"]
  }`, app))
	e.run(t, e.CheckDestroy(name, before), []resource.TestStep{{
		Config:   config,
		PlanOnly: true,
		ExpectError: words("table.existing names a global table with multi-Region strong consistency (MRSC), which refuses the transactions " +
			"the outbox's writer commits events with and the TTL that expires published items: adopt a multi-Region eventually consistent (MREC) global table"),
	}})
}

// TestAccPipeline_globalTable: a dedicated table with replica_regions is
// a global table with its replica ACTIVE before apply ends and a
// NEW_AND_OLD_IMAGES stream; the takeover settings plan their defaults
// and reach the relay; a replica removed by hand plans an update that adds
// it back; the pipeline imports with its replicas, and destroy removes
// the replica with the table. Replicas in the table's own Region, on an
// adopted table, or missing for a peer are refused at plan, naming the
// field; so is a settle time not below the takeover delay.
func TestAccPipeline_globalTable(t *testing.T) {
	e := newAccEnv(t)
	name := e.Name("global")
	table := name + "-outbox"
	before := e.Snapshot()
	config := func(replicas, multiRegion string) string {
		return e.PipelineConfig(name, fastRelay+fmt.Sprintf(`
  table = {
    deletion_protection = false
    replica_regions     = %s
  }
  multi_region = {
    regions = ["us-east-1", "eu-west-1"]
%s
  }`, replicas, multiRegion))
	}
	global := config(`["eu-west-1"]`, "")
	replica := dynamodb.NewFromConfig(e.RegionConfig("eu-west-1"))
	replicaGone := func(*terraform.State) error {
		return acctest.Wait(e.Ctx, "the replica in eu-west-1 to be deleted", func() error {
			if _, err := replica.DescribeTable(e.Ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}); err == nil {
				return fmt.Errorf("the table %s is still in eu-west-1", table)
			}
			return nil
		})
	}
	e.run(t, resource.ComposeTestCheckFunc(e.CheckDestroy(name, before), replicaGone), []resource.TestStep{
		{Config: config(`["eu-west-1", "us-east-1"]`, ""), ExpectError: words(`table.replica_regions has "us-east-1", the Region the table is created in: list only the other Regions`)},
		{Config: config(`["ap-south-1"]`, ""), ExpectError: words(`multi_region.regions has "eu-west-1", where the table has no replica: add a replica of the table in "eu-west-1"`)},
		{Config: config(`["eu-west-1"]`, "    takeover_after_seconds = 60\n    takeover_settle_seconds = 60"),
			ExpectError: words("multi_region.takeover_settle_seconds (1m0s) is not below the takeover delay (1m0s): lower it, or raise the takeover delay")},
		{Config: config(`["eu-west-1"]`, "    takeover_after_seconds = 0"), ExpectError: words("multi_region.takeover_after_seconds is 0: use 1 to 86400 seconds")},
		{
			Config: global,
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, attrPath("stream_view_type"), knownvalue.StringExact("NEW_AND_OLD_IMAGES")),
				statecheck.ExpectKnownValue(accResource, attrPath("table.replica_regions"), knownvalue.SetExact([]knownvalue.Check{knownvalue.StringExact("eu-west-1")})),
				statecheck.ExpectKnownValue(accResource, attrPath("multi_region.takeover_after_seconds"), knownvalue.Int64Exact(900)),
				statecheck.ExpectKnownValue(accResource, attrPath("multi_region.takeover_settle_seconds"), knownvalue.Int64Exact(30)),
			},
			Check: resource.ComposeTestCheckFunc(e.checkReplicaActive(replica, table), e.checkRelayEnv(name, map[string]string{"OUTBOX_TAKEOVER_AFTER": "15m0s", "OUTBOX_TAKEOVER_SETTLE": "30s"})),
		},
		emptyPlanStep(global),
		{
			PreConfig: func() { e.removeReplicaByHand(t, table, "eu-west-1") },
			Config:    global,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
			}},
			Check: e.checkReplicaActive(replica, table),
		},
		importStep(global, accResource, name),
		{
			Config: config(`["eu-west-1"]`, "    takeover_after_seconds = 120\n    takeover_settle_seconds = 10"),
			Check:  e.checkRelayEnv(name, map[string]string{"OUTBOX_TAKEOVER_AFTER": "2m0s", "OUTBOX_TAKEOVER_SETTLE": "10s"}),
		},
	})
}

// checkReplicaActive checks that the table's replica, read in its own
// Region, is there.
func (e *accEnv) checkReplicaActive(replica *dynamodb.Client, table string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		d, err := replica.DescribeTable(e.Ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			return fmt.Errorf("the replica of %s: %w", table, err)
		}
		if d.Table.StreamSpecification == nil || d.Table.StreamSpecification.StreamViewType != ddbtypes.StreamViewTypeNewAndOldImages {
			return fmt.Errorf("the replica's stream is %+v, want NEW_AND_OLD_IMAGES", d.Table.StreamSpecification)
		}
		return nil
	}
}

// removeReplicaByHand removes the table's replica in region, as a person
// would in the console, and waits until it is gone.
func (e *accEnv) removeReplicaByHand(t *testing.T, table, region string) {
	t.Helper()
	ddb := dynamodb.NewFromConfig(e.Cfg)
	_, err := ddb.UpdateTable(e.Ctx, &dynamodb.UpdateTableInput{TableName: aws.String(table),
		ReplicaUpdates: []ddbtypes.ReplicationGroupUpdate{{Delete: &ddbtypes.DeleteReplicationGroupMemberAction{RegionName: aws.String(region)}}}})
	if err != nil {
		t.Fatalf("removing the replica in %s: %v", region, err)
	}
	if err := acctest.Wait(e.Ctx, "the replica in "+region+" to be removed", func() error {
		d, err := ddb.DescribeTable(e.Ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			return err
		}
		if len(d.Table.Replicas) > 0 || d.Table.TableStatus != ddbtypes.TableStatusActive {
			return fmt.Errorf("the table has replicas %+v, status %s", d.Table.Replicas, d.Table.TableStatus)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// checkRelayEnv checks that the pipeline's relay function has the
// variables of want.
func (e *accEnv) checkRelayEnv(name string, want map[string]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		out, err := lambda.NewFromConfig(e.Cfg).GetFunctionConfiguration(e.Ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(name + "-relay")})
		if err != nil {
			return err
		}
		for k, v := range want {
			if got := out.Environment.Variables[k]; got != v {
				return fmt.Errorf("the relay's %s = %q, want %q", k, got, v)
			}
		}
		return nil
	}
}
