// Acceptance tests of outbox_subscription. They run like the pipeline's
// (see pipeline_resource_test.go): each test function on its own local AWS
// stack by default, on real AWS with OUTBOX_ACC_AWS=1. Deliveries are
// awaited with a deadline (acctest.Wait), never a fixed sleep.
package provider

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"

	"github.com/aws/aws-sdk-go-v2/aws"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

const (
	accPlaced    = "outbox_subscription.placed"
	accCancelled = "outbox_subscription.cancelled"
	accSub       = "outbox_subscription.test"
)

// checkSubscriptionsDestroyed proves that nothing of the subscriptions is
// left: the local stack's inventory is back to before; on AWS, the queues
// and rules are gone.
func (e *accEnv) checkSubscriptionsDestroyed(before map[string][]string, then resource.TestCheckFunc, names ...string) resource.TestCheckFunc {
	return func(st *terraform.State) error {
		if then != nil {
			if err := then(st); err != nil {
				return err
			}
		}
		if e.Stack != nil {
			after := e.Inventory()
			if !mapsEqual(before, after) {
				return fmt.Errorf("destroy left resources:\nbefore %v\nafter  %v", before, after)
			}
			return nil
		}
		q := sqs.NewFromConfig(e.Cfg)
		eb := eventbridge.NewFromConfig(e.Cfg)
		for _, name := range names {
			n := subscription.NamesFor(name)
			for _, queue := range []string{n.Queue, n.DeadLetterQueue} {
				if _, err := q.GetQueueUrl(e.Ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(queue)}); err == nil {
					return fmt.Errorf("queue %s still exists", queue)
				}
			}
			if _, err := eb.DescribeRule(e.Ctx, &eventbridge.DescribeRuleInput{Name: aws.String(n.Rule)}); err == nil {
				return fmt.Errorf("rule %s still exists", n.Rule)
			}
		}
		return nil
	}
}

func mapsEqual(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func resourceAttr(s *terraform.State, res, name string) string {
	if r, ok := s.RootModule().Resources[res]; ok {
		return r.Primary.Attributes[name]
	}
	return ""
}

// writeEvents writes one order per detail type, each in a transaction with
// its event, and returns the records by detail type.
func (e *accEnv) writeEvents(table outbox.Table, ordersTable string, from int, detailTypes ...string) (map[string][]outbox.Record, error) {
	w := e.Writer(table)
	out := map[string][]outbox.Record{}
	for i, dt := range detailTypes {
		n := from + i
		ev := outbox.Event{Source: "com.example.orders", DetailType: dt, Detail: json.RawMessage(fmt.Sprintf(`{"orderId":"%d","total":%d}`, n, 10*n))}
		rs, err := w.Write(e.Ctx, []ddbtypes.TransactWriteItem{acctest.OrderItem(ordersTable, fmt.Sprintf("ORDER#%d", n), "ORDER", n)}, ev)
		if err != nil {
			return nil, err
		}
		out[dt] = append(out[dt], rs...)
	}
	return out, nil
}

// receiveExactly waits until the queue has delivered every record of want,
// with the outbox envelope, and fails on any other event.
func (e *accEnv) receiveExactly(queueURL string, want []outbox.Record) error {
	got, err := acctest.Sink{Env: e.Env, QueueURL: queueURL}.Receive(want)
	if err != nil {
		return err
	}
	for id, ev := range got {
		if !slices.ContainsFunc(want, func(r outbox.Record) bool { return r.EventID == id }) {
			return fmt.Errorf("the queue received the event %s (%s), which is not its own", id, ev.DetailType)
		}
	}
	return acctest.CheckEvents(want, got)
}

// deliverTo writes one event per detail type and checks that each queue
// receives exactly the events of its detail types.
func (e *accEnv) deliverTo(table outbox.Table, ordersTable string, from int, queues map[string][]string) resource.TestCheckFunc {
	return func(st *terraform.State) error {
		var all []string
		for _, dts := range queues {
			all = append(all, dts...)
		}
		all = append(all, "OrderIgnored")
		records, err := e.writeEvents(table, ordersTable, from, all...)
		if err != nil {
			return err
		}
		for res, dts := range queues {
			var want []outbox.Record
			for _, dt := range dts {
				want = append(want, records[dt]...)
			}
			if err := e.receiveExactly(resourceAttr(st, res, "queue_url"), want); err != nil {
				return fmt.Errorf("%s: %w", res, err)
			}
		}
		// Everything was delivered by now: a last look at each queue finds
		// nothing of another subscription (duplicates of its own events
		// are allowed: delivery is at least once).
		for res, dts := range queues {
			out, err := sqs.NewFromConfig(e.Cfg).ReceiveMessage(e.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(resourceAttr(st, res, "queue_url")), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
			if err != nil {
				return err
			}
			for _, m := range out.Messages {
				var ev acctest.Event
				if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &ev); err != nil || !slices.Contains(dts, ev.DetailType) {
					return fmt.Errorf("%s received a %q event, which is not its own: %s", res, ev.DetailType, aws.ToString(m.Body))
				}
			}
		}
		return nil
	}
}

func (e *accEnv) subscriptionsConfig(name, placed, cancelled string) string {
	config := e.PipelineConfig(name, fastRelay)
	for _, sub := range []struct{ res, body string }{{"placed", placed}, {"cancelled", cancelled}} {
		config += fmt.Sprintf(`
resource "outbox_subscription" %[2]q {
  name      = "%[1]s-%[2]s"
  event_bus = outbox_pipeline.test.target_arn
%[3]s
}
`, name, sub.res, sub.body)
	}
	return config
}

// The subscriptions of TestAccSubscription_pipeline: by detail type, and
// by a full pattern with queue settings.
const (
	placedBody = `
  sources      = ["com.example.orders"]
  detail_types = ["OrderPlaced"]
  tags         = { team = "billing" }`
	cancelledBody = `
  sources      = ["com.example.orders"]
  detail_types = ["OrderCancelled"]`
	cancelledPatternBody = `
  event_pattern = jsonencode({
    source        = ["com.example.orders"]
    "detail-type" = ["OrderCancelled", "OrderRefunded"]
  })
  queue = {
    visibility_timeout_seconds = 60
    max_receive_count          = 3
  }`
)

// TestAccSubscription_pipeline: two subscriptions to one pipeline, each
// receiving exactly the events of its detail types; the pattern and queue
// settings change in place; a rule deleted out of band is repaired; import
// by name gives an empty plan.
func TestAccSubscription_pipeline(t *testing.T) {
	e := newAccEnv(t)
	f := e.newFixture("subs")
	before := e.Snapshot()
	name, orders, table := f.name, f.orders, f.table
	config1 := e.subscriptionsConfig(name, placedBody, cancelledBody)
	config2 := e.subscriptionsConfig(name, placedBody, cancelledPatternBody)
	ruleKept := statecheck.CompareValue(compare.ValuesSame())
	e.run(t, e.checkSubscriptionsDestroyed(before, e.CheckDestroy(name, before), name+"-placed", name+"-cancelled"), []resource.TestStep{
		{
			Config:            config1,
			ConfigStateChecks: append(placedNames(name+"-placed"), ruleKept.AddStateValue(accCancelled, attrPath("rule_arn"))),
			Check: resource.ComposeTestCheckFunc(
				func(st *terraform.State) error { return e.checkSubscriptionQueues(st, accPlaced, 30, 5) },
				e.deliverTo(table, orders, 1, map[string][]string{accPlaced: {"OrderPlaced"}, accCancelled: {"OrderCancelled"}}),
			),
		},
		{
			// The pattern and the queue change in place.
			Config: config2,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accCancelled, plancheck.ResourceActionUpdate),
				plancheck.ExpectResourceAction(accPlaced, plancheck.ResourceActionNoop),
			}},
			ConfigStateChecks: []statecheck.StateCheck{ruleKept.AddStateValue(accCancelled, attrPath("rule_arn"))},
			Check: resource.ComposeTestCheckFunc(
				func(st *terraform.State) error { return e.checkSubscriptionQueues(st, accCancelled, 60, 3) },
				e.deliverTo(table, orders, 10, map[string][]string{accPlaced: {"OrderPlaced"}, accCancelled: {"OrderCancelled", "OrderRefunded"}}),
			),
		},
		{
			// The rule deleted out of band: the plan repairs it.
			PreConfig: func() { deleteRule(t, e, name+"-placed") },
			Config:    config2,
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectNonEmptyPlan(),
				plancheck.ExpectResourceAction(accPlaced, plancheck.ResourceActionUpdate),
				plancheck.ExpectUnknownValue(accPlaced, attrPath("rule_arn")),
			}},
			Check: e.deliverTo(table, orders, 20, map[string][]string{accPlaced: {"OrderPlaced"}, accCancelled: {"OrderCancelled"}}),
		},
		{Config: config2, ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()}}},
		// Imported as the bus's name; the configuration gives its ARN,
		// the same bus (the plan below is empty).
		importStep(config2, accCancelled, name+"-cancelled", "event_bus"),
		importBlockStep(config2, accCancelled, name+"-cancelled"),
		importBlockStep(config2, accPlaced, name+"-placed"),
	})
}

// placedNames checks the id, the names in the ARNs and URLs, and the tags
// of the subscription called name.
func placedNames(name string) []statecheck.StateCheck {
	return []statecheck.StateCheck{
		statecheck.ExpectKnownValue(accPlaced, attrPath("id"), knownvalue.StringExact(name)),
		statecheck.ExpectKnownValue(accPlaced, attrPath("rule_arn"), knownvalue.StringRegexp(regexp.MustCompile(`:rule/`+name+`$`))),
		statecheck.ExpectKnownValue(accPlaced, attrPath("queue_url"), knownvalue.StringRegexp(regexp.MustCompile(`/`+name+`$`))),
		statecheck.ExpectKnownValue(accPlaced, attrPath("dead_letter_queue_arn"), knownvalue.StringRegexp(regexp.MustCompile(`:`+name+`-dlq$`))),
		statecheck.ExpectKnownValue(accPlaced, attrPath("tags_all"), knownvalue.MapExact(map[string]knownvalue.Check{"team": knownvalue.StringExact("billing")})),
	}
}

// deleteRule deletes a subscription's rule, with its target, out of band.
func deleteRule(t *testing.T, e *accEnv, rule string) {
	t.Helper()
	eb := eventbridge.NewFromConfig(e.Cfg)
	if _, err := eb.RemoveTargets(e.Ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String(rule), Ids: []string{subscription.TargetID}}); err != nil {
		t.Fatalf("removing the rule's target out of band: %v", err)
	}
	if _, err := eb.DeleteRule(e.Ctx, &eventbridge.DeleteRuleInput{Name: aws.String(rule)}); err != nil {
		t.Fatalf("deleting the rule out of band: %v", err)
	}
}

// deleteSubscription deletes every component of a subscription out of
// band.
func deleteSubscription(t *testing.T, e *accEnv, name string) {
	t.Helper()
	c := subscription.New(e.Cfg)
	_, st, err := c.Lookup(e.Ctx, name)
	if err != nil {
		t.Fatalf("finding the subscription: %v", err)
	}
	if _, err := c.Delete(e.Ctx, st); err != nil {
		t.Fatalf("deleting the subscription out of band: %v", err)
	}
}

// checkSubscriptionQueues checks the queue's settings and its redrive to the
// dead-letter queue.
func (e *accEnv) checkSubscriptionQueues(st *terraform.State, res string, visibility, maxReceive int) error {
	out, err := sqs.NewFromConfig(e.Cfg).GetQueueAttributes(e.Ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(resourceAttr(st, res, "queue_url")), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll},
	})
	if err != nil {
		return err
	}
	a := out.Attributes
	if a["VisibilityTimeout"] != fmt.Sprint(visibility) {
		return fmt.Errorf("%s: VisibilityTimeout %s, want %d", res, a["VisibilityTimeout"], visibility)
	}
	var rp struct {
		DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		MaxReceiveCount     any    `json:"maxReceiveCount"`
	}
	if err := json.Unmarshal([]byte(a["RedrivePolicy"]), &rp); err != nil || rp.DeadLetterTargetArn != resourceAttr(st, res, "dead_letter_queue_arn") || fmt.Sprint(rp.MaxReceiveCount) != fmt.Sprint(maxReceive) {
		return fmt.Errorf("%s: redrive policy %s, want the dead-letter queue after %d receives", res, a["RedrivePolicy"], maxReceive)
	}
	if got := subscription.RuleARNOfPolicy(a["Policy"]); got != resourceAttr(st, res, "rule_arn") {
		return fmt.Errorf("%s: the queue policy lets %q send, want only the rule", res, got)
	}
	return nil
}

// TestAccSubscription_import: a subscription on the default bus with a
// full event pattern and default tags. A reformatted pattern is not a
// change; import by name matches the state and plans nothing; a
// subscription deleted out of band is planned for creation.
func TestAccSubscription_import(t *testing.T) {
	e := newAccEnv(t)
	name := e.Name("audit")
	before := e.Snapshot()
	provider := strings.Replace(e.ProviderConfig(), "provider \"outbox\" {\n", "provider \"outbox\" {\n  default_tags {\n    tags = { env = \"test\", team = \"platform\" }\n  }\n", 1)
	config := func(pattern string) string {
		return provider + fmt.Sprintf(`
resource "outbox_subscription" "test" {
  name          = %q
  event_pattern = <<-EOT
%s
  EOT
  queue = {
    message_retention_seconds = 86400
    receive_wait_time_seconds = 20
  }
  dead_letter = {
    message_retention_seconds = 172800
  }
  tags = { team = "audit" }
}
`, name, pattern)
	}
	pattern := `{"source": ["com.example.orders"], "detail": {"data": {"total": [{"numeric": [">", 100]}]}}}`
	reformatted := `{
  "detail": { "data": { "total": [ { "numeric": [">", 100] } ] } },
  "source": [ "com.example.orders" ]
}`
	e.run(t, e.checkSubscriptionsDestroyed(before, nil, name), []resource.TestStep{
		{
			Config: config(pattern),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accSub, attrPath("event_bus"), knownvalue.StringExact("default")),
				statecheck.ExpectKnownValue(accSub, attrPath("rule_arn"), knownvalue.StringRegexp(regexp.MustCompile(`:rule/`+name+`$`))),
				statecheck.ExpectKnownValue(accSub, attrPath("tags_all"), knownvalue.MapExact(map[string]knownvalue.Check{
					"env": knownvalue.StringExact("test"), "team": knownvalue.StringExact("audit"),
				})),
			},
		},
		emptyPlanStep(config(reformatted)),
		importStep(config(pattern), accSub, name),
		importBlockStep(config(reformatted), accSub, name),
		{
			// Deleted out of band entirely: removed from the state and
			// created again (under new queue names' 60-second rule).
			PreConfig: func() { deleteSubscription(t, e, name) },
			Config:    config(pattern),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
				plancheck.ExpectResourceAction(accSub, plancheck.ResourceActionCreate),
			}},
		},
	})
}

// TestAccSubscription_invalid: bad configurations fail at plan, each with a
// message naming the attribute and the fix.
func TestAccSubscription_invalid(t *testing.T) {
	e := newAccEnv(t)
	// orderPlacedAnd is a valid match on detail types, and setting.
	orderPlacedAnd := func(setting string) string { return "\n  detail_types = [\"OrderPlaced\"]\n  " + setting }
	cases := []struct{ name, body, want string }{
		{"bad name!", `detail_types = ["OrderPlaced"]`, `name "bad name!" has characters that EventBridge rule and SQS queue names do not allow: use letters, digits, hyphens and underscores`},
		{strings.Repeat("n", 65), `detail_types = ["OrderPlaced"]`, `name is 65 characters long: use at most 64 characters`},
		{"s", ``, `sources, detail_types and event_pattern are all unset: set sources and/or detail_types`},
		{"s", `sources = []`, `sources is an empty set, which would match nothing: list at least one value`},
		{"s", `detail_types = [" "]`, `detail_types has the value " ": use non-blank values`},
		{"s", `event_pattern = "not json"`, `event_pattern is not valid JSON`},
		{"s", `event_pattern = jsonencode(["a"])`, `event_pattern is not a JSON object: use a JSON object`},
		{"s", `event_pattern = jsonencode({ source = "com.example.orders" })`, `event_pattern has the value "com.example.orders" at source, which is not an array: put the value in an array`},
		{"s", `event_pattern = ""`, `event_pattern is empty: remove it and set sources or detail_types`},
		{"s", `
  sources       = ["com.example.orders"]
  event_pattern = jsonencode({ source = ["com.example.orders"] })`, `Attribute "sources" cannot be specified when "event_pattern" is specified`},
		{"s", orderPlacedAnd(`event_bus = "bad bus"`), `event_bus is "bad bus": use a bus name such as "default" or an event bus ARN`},
		{"s", orderPlacedAnd(`queue = { receive_wait_time_seconds = 21 }`), `queue.receive_wait_time_seconds is 21: use 0 to 20 seconds`},
		{"s", orderPlacedAnd(`queue = { visibility_timeout_seconds = 43201 }`), `queue.visibility_timeout_seconds is 43201: use 0 to 43200 seconds`},
		{"s", orderPlacedAnd(`queue = { max_receive_count = 0 }`), `queue.max_receive_count is 0: use 1 to 1000 receives`},
		{"s", orderPlacedAnd(`queue = { message_retention_seconds = 30 }`), `queue.message_retention_seconds is 30: use 60 to 1209600 seconds`},
		{"s", orderPlacedAnd(`queue = { kms_master_key_id = "" }`), `queue.kms_master_key_id is empty: remove it to use SQS-managed encryption`},
		{"s", orderPlacedAnd(`dead_letter = { message_retention_seconds = 3600 }`), `dead_letter.message_retention_seconds is 3600: use at least the queue's message_retention_seconds (345600)`},
		{"s", orderPlacedAnd(`tags = { "aws:owner" = "me" }`), `tags has the key "aws:owner": remove the key: the "aws:" prefix is reserved by AWS`},
	}
	var steps []resource.TestStep
	for _, c := range cases {
		steps = append(steps, resource.TestStep{
			Config: e.ProviderConfig() + fmt.Sprintf(`
resource "outbox_subscription" "test" {
  name = %q
  %s
}
`, c.name, c.body),
			PlanOnly:    true,
			ExpectError: words(c.want),
		})
	}
	e.run(t, nil, steps)
}
