package provider

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// TestAccPipeline_deadLetterKMS: with dead_letter.kms_master_key_id, the
// dead-letter queue is encrypted with a customer managed key, given here by
// alias, and SQS asks its sender for kms:GenerateDataKey and kms:Decrypt on
// it. Lambda sends a failed batch's metadata with the relay's execution
// role, so the batch the mapping gives up on reaches the queue only if
// that role may use the key.
func TestAccPipeline_deadLetterKMS(t *testing.T) {
	e := newAccEnv(t)
	e.needsFaults()
	d := e.newDelivery("dlq-kms")
	// The dead-lettered events stay pending: the test does not deliver them.
	config := e.PipelineConfig(d.name, `
  force_destroy = true
  relay = {
    architecture            = "x86_64"
    batch_size              = 10
    batching_window_seconds = 0
    maximum_retry_attempts  = 0
    bisect_on_error         = false
  }
  dead_letter = {
    kms_master_key_id = "alias/orders-dlq"
  }`)
	e.run(t, e.CheckDestroy(d.name, d.before), []resource.TestStep{{
		Config: config,
		Check: func(*terraform.State) error {
			_, err := e.deadLetter(d)
			return err
		},
	}})
}
