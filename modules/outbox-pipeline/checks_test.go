package outboxpipeline_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/tfrun"
)

// TestAccModuleTargetChecks plans configurations of the module's target
// claim-check and multi-Region settings on a local stack: combinations that the provider or the
// subscriptions would refuse fail at plan with the module's message naming
// the setting and the fix, and FIFO topics and queues plan.
func TestAccModuleTargetChecks(t *testing.T) {
	ctx, tf := startModuleTest(t, 10*time.Minute)
	stack := localawstest.Start(t)
	const (
		topic     = `"arn:aws:sns:us-east-1:123456789012:orders.fifo"`
		queue     = `"arn:aws:sqs:us-east-1:123456789012:orders.fifo"`
		billing   = `{ billing = { sources = ["com.example.orders"] } }`
		byPattern = `{ audit = { event_pattern = jsonencode({ source = ["com.example.orders"] }) } }`
	)
	cases := []struct {
		name, args, want string
	}{
		{"two targets", "topic_arn = " + topic + "\n  queue_arn = " + queue,
			"Set at most one of event_bus, topic_arn and queue_arn (queue_arn, topic_arn are set)"},
		{"bus and topic", `event_bus = "orders"` + "\n  topic_arn = " + topic,
			"Set at most one of event_bus, topic_arn and queue_arn (event_bus, topic_arn are set)"},
		{"queue with subscriptions", "queue_arn = " + queue + "\n  subscriptions = " + billing,
			"with queue_arn, that queue is the pipeline's one consumer. Remove subscriptions"},
		{"topic with an event pattern", "topic_arn = " + topic + "\n  subscriptions = " + byPattern,
			"Subscriptions audit set event_pattern, which only an EventBridge rule matches"},
		{"queue name too long", `queue_arn = "arn:aws:sqs:us-east-1:123456789012:` + strings.Repeat("q", 76) + `.fifo"`,
			"queue_arn must be the ARN of an SQS queue, standard or FIFO, whose name (with .fifo) is at most 80 characters"},
		{"topic as queue", "queue_arn = " + topic, "queue_arn must be the ARN of an SQS queue"},
		{"queue as topic", "topic_arn = " + queue, "topic_arn must be the ARN of an SNS topic, standard or FIFO"},
		{"FIFO topic with subscriptions", "topic_arn = " + topic + "\n  subscriptions = " + billing, "Plan: 2 to add"},
		{"FIFO queue", "queue_arn = " + queue, "Plan: 1 to add"},
		{"longest FIFO queue name", `queue_arn = "arn:aws:sqs:us-east-1:123456789012:` + strings.Repeat("q", 75) + `.fifo"`, "Plan: 1 to add"},
		{"topic unknown at plan", "topic_arn = terraform_data.topic.output\n  subscriptions = " + billing, "Plan: 3 to add"},
		{"claim check adopting no bucket", "claim_check = { existing = true }",
			"claim_check.bucket_name is required with claim_check.existing = true: name the bucket to adopt."},
		{"claim bucket name", `claim_check = { bucket_name = "Invoices_2026" }`,
			"claim_check.bucket_name must be a bucket name: 3 to 63 lowercase letters, digits and hyphens"},
		{"claim bucket name with two hyphens", `claim_check = { bucket_name = "invoices--2026" }`,
			"claim_check.bucket_name must be a bucket name"},
		{"claim check", `claim_check = { bucket_name = "invoices-2026" }`, "Plan: 1 to add"},
		{"one Region", `multi_region = { regions = ["us-east-1"] }`, "multi_region.regions must list at least 2 Regions, each once."},
		{"a Region twice", `multi_region = { regions = ["us-east-1", "us-east-1"] }`, "multi_region.regions must list at least 2 Regions, each once."},
		{"without the own Region", `multi_region = { regions = ["eu-west-1", "ap-south-1"] }`, `multi_region.regions does not have "us-east-1", the Region this pipeline is created in`},
		{"multi-Region", `multi_region = { regions = ["us-east-1", "eu-west-1"] }`, "Plan: 1 to add"},
		{"no takeover delay", `multi_region = { regions = ["us-east-1", "eu-west-1"], takeover_after_seconds = 0 }`,
			"multi_region.takeover_after_seconds must be a whole number of seconds, 1 to 86400"},
		{"a takeover delay past a day", `multi_region = { regions = ["us-east-1", "eu-west-1"], takeover_after_seconds = 86401 }`,
			"multi_region.takeover_after_seconds must be a whole number of seconds, 1 to 86400"},
		{"no settle time", `multi_region = { regions = ["us-east-1", "eu-west-1"], takeover_settle_seconds = 0 }`,
			"multi_region.takeover_settle_seconds must be a whole number of seconds from 1 to below takeover_after_seconds (default 900)"},
		{"part of a second's takeover delay", `multi_region = { regions = ["us-east-1", "eu-west-1"], takeover_after_seconds = 90.5 }`,
			"multi_region.takeover_after_seconds must be a whole number of seconds, 1 to 86400"},
		{"part of a second's settle time", `multi_region = { regions = ["us-east-1", "eu-west-1"], takeover_settle_seconds = 2.5 }`,
			"multi_region.takeover_settle_seconds must be a whole number of seconds from 1 to below takeover_after_seconds (default 900)"},
		{"settle past the takeover", `multi_region = { regions = ["us-east-1", "eu-west-1"], takeover_after_seconds = 60, takeover_settle_seconds = 60 }`,
			"multi_region.takeover_settle_seconds must be a whole number of seconds from 1 to below takeover_after_seconds (default 900)"},
		{"settle past the default takeover", `multi_region = { regions = ["us-east-1", "eu-west-1"], takeover_settle_seconds = 900 }`,
			"multi_region.takeover_settle_seconds must be a whole number of seconds from 1 to below takeover_after_seconds (default 900)"},
		{"multi-Region with a takeover delay", `multi_region = { regions = ["us-east-1", "eu-west-1"], takeover_after_seconds = 60, takeover_settle_seconds = 10 }`, "Plan: 1 to add"},
		{"replicas of an adopted table", `table = { existing = true, name = "orders", replica_regions = ["eu-west-1"] }`,
			"table.replica_regions is not allowed with table.existing = true"},
		{"no replica Region", `table = { replica_regions = [] }`, "table.replica_regions must list at least 1 Region"},
		{"peer Region name", `multi_region = { regions = ["us-east-1", "Ireland"] }`, `multi_region.regions must hold Region names, such as "us-east-1" and "eu-west-1".`},
		{"replica Region name", `table = { replica_regions = ["Ireland"] }`, `table.replica_regions must hold Region names, such as "us-west-2".`},
		{"global table", `table = { replica_regions = ["eu-west-1"] }` + "\n  multi_region = { regions = [\"us-east-1\", \"eu-west-1\"] }", "Plan: 1 to add"},
	}
	// Resources beside the module call, by case: a topic created in the
	// same configuration, such as an aws_sns_topic, is unknown at plan.
	extra := map[string]string{"topic unknown at plan": `resource "terraform_data" "topic" {
  input = "arn:aws:sns:us-east-1:123456789012:created.fifo"
}
`}
	inst, work := stageModules(ctx, t, tf, "checks")
	run := inst.Runner(work, tfrun.AWSEnv(stack.Endpoint(), stack.Options().Region))
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			writeModuleCall(t, work, c.args, extra[c.name])
			if i == 0 {
				if err := run.Init(ctx); err != nil {
					t.Fatal(err)
				}
			}
			res, err := run.Run(ctx, "plan", "-input=false", "-no-color")
			out := flatten(res.Stdout + res.Stderr)
			if !strings.Contains(out, c.want) {
				t.Errorf("plan (err %v) does not say %q:\n%s", err, c.want, out)
			}
			if strings.HasPrefix(c.want, "Plan:") != (err == nil) {
				t.Errorf("plan: %v", err)
			}
		})
	}
}

// writeModuleCall writes, as work's main.tf, a call of the module with the
// given arguments, followed by extra.
func writeModuleCall(t *testing.T, work, args, extra string) {
	t.Helper()
	src := requiredOutbox + `
module "p" {
  source = "../modules/outbox-pipeline"
  name   = "checks"
  alarms = null
  ` + args + `
}
` + extra
	writeFile(t, work, "main.tf", src)
}

// flatten is Terraform's output on one line, without the frame of its
// diagnostics, whose text it wraps.
func flatten(s string) string {
	return strings.Join(strings.Fields(strings.NewReplacer("│", " ", "╷", " ", "╵", " ").Replace(s)), " ")
}

// TestAccModuleExamplesValidate initialises and validates every example of
// the module.
func TestAccModuleExamplesValidate(t *testing.T) {
	ctx, tf := startModuleTest(t, 10*time.Minute)
	inst, staged := stageModules(ctx, t, tf, ".")
	examples, err := filepath.Glob(filepath.Join(staged, "modules", "outbox-pipeline", "examples", "*", "main.tf"))
	if err != nil || len(examples) < 2 {
		t.Fatalf("examples: %v (%v)", examples, err)
	}
	for _, main := range examples {
		dir := filepath.Dir(main)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			run := initRunner(ctx, t, inst, dir, nil)
			if err := run.Validate(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
