package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

func (e *accEnv) inboxConfig(name, inbox string) string {
	return e.PipelineConfig(name, fastRelay) + fmt.Sprintf(`
resource "outbox_subscription" "test" {
  name         = "%[1]s-payments"
  event_bus    = outbox_pipeline.test.target_arn
  sources      = ["com.example.orders"]
  detail_types = ["OrderPlaced"]
  tags         = { team = "payments" }
%[2]s
}
`, name, inbox)
}

// TestAccSubscription_inbox: a subscription with an inbox delivers events
// that the kit applies once with the table it created; PITR and TTL turned
// off by hand show in the plan with their values and are repaired; import
// finds the inbox; destroy refuses while the table is protected, and
// succeeds once the protection is off.
func TestAccSubscription_inbox(t *testing.T) {
	e := newAccEnv(t)
	f := e.newFixture("inbox")
	before := e.Snapshot()
	name, sub, inboxTable := f.name, f.name+"-payments", f.name+"-payments-inbox"
	protected := e.inboxConfig(name, "  inbox = {}")
	unprotected := e.inboxConfig(name, "  inbox = { deletion_protection = false }")
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		CheckDestroy:             e.checkSubscriptionsDestroyed(before, e.CheckDestroy(name, before), sub),
		Steps: []resource.TestStep{
			{
				Config: protected,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(accSub, tfjsonpath.New("inbox").AtMapKey("table_name"), knownvalue.StringExact(inboxTable)),
					statecheck.ExpectKnownValue(accSub, tfjsonpath.New("inbox").AtMapKey("ttl_attribute"), knownvalue.StringExact(consumer.AttrExpiresAt)),
					statecheck.ExpectKnownValue(accSub, tfjsonpath.New("inbox").AtMapKey("deletion_protection"), knownvalue.Bool(true)),
					statecheck.ExpectKnownValue(accSub, tfjsonpath.New("inbox").AtMapKey("point_in_time_recovery"), knownvalue.Bool(true)),
				},
				Check: resource.ComposeTestCheckFunc(
					e.checkTableProtection(inboxTable, true, true),
					checkConsumerPolicy,
					e.applyOnce(f.table, f.orders),
				),
			},
			{
				// PITR and TTL turned off by hand: the plan shows them with
				// the values observed, and apply turns them on again.
				PreConfig: func() { e.turnOffInboxSettings(t, inboxTable) },
				Config:    protected,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(accSub, plancheck.ResourceActionUpdate),
					inboxChange{"point_in_time_recovery", false, true},
					inboxChange{"ttl_attribute", nil, consumer.AttrExpiresAt},
				}},
				Check: resource.ComposeTestCheckFunc(e.checkTableProtection(inboxTable, true, true), e.checkInboxTTL(inboxTable)),
			},
			emptyPlanStep(protected),
			// Imported as the bus's name; the configuration gives its ARN.
			importStep(protected, accSub, sub, "event_bus"),
			{
				Config:      protected,
				Destroy:     true,
				ExpectError: regexp.MustCompile(`inbox table\s+` + inboxTable + `(.|\s)*deletion\s+protection\s+is\s+on(.|\s)*inbox.deletion_protection\s+=\s+false`),
			},
			// Nothing was deleted: the subscription is as it was.
			emptyPlanStep(protected),
			{Config: unprotected, Check: e.checkTableProtection(inboxTable, false, true)},
		},
	})
}

// inboxChange checks that the plan changes an attribute of the
// subscription's inbox from before (nil: null) to after.
type inboxChange struct {
	attr          string
	before, after any
}

func (c inboxChange) CheckPlan(_ context.Context, req plancheck.CheckPlanRequest, resp *plancheck.CheckPlanResponse) {
	for _, rc := range req.Plan.ResourceChanges {
		if rc.Address != accSub {
			continue
		}
		before, _ := rc.Change.Before.(map[string]any)["inbox"].(map[string]any)
		after, _ := rc.Change.After.(map[string]any)["inbox"].(map[string]any)
		if before[c.attr] != c.before || after[c.attr] != c.after {
			resp.Error = fmt.Errorf("inbox.%s: planned %v -> %v, want %v -> %v", c.attr, before[c.attr], after[c.attr], c.before, c.after)
		}
		return
	}
	resp.Error = fmt.Errorf("%s is not in the plan", accSub)
}

// turnOffInboxSettings turns the table's PITR and TTL off, out of band.
func (e *accEnv) turnOffInboxSettings(t *testing.T, table string) {
	t.Helper()
	c := dynamodb.NewFromConfig(e.Cfg)
	if _, err := c.UpdateContinuousBackups(e.Ctx, &dynamodb.UpdateContinuousBackupsInput{
		TableName: aws.String(table), PointInTimeRecoverySpecification: &ddbtypes.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(false)},
	}); err != nil {
		t.Fatalf("turning PITR off: %v", err)
	}
	if _, err := c.UpdateTimeToLive(e.Ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(table), TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String(consumer.AttrExpiresAt), Enabled: aws.Bool(false)},
	}); err != nil {
		t.Fatalf("turning TTL off: %v", err)
	}
}

func (e *accEnv) checkInboxTTL(table string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		out, err := dynamodb.NewFromConfig(e.Cfg).DescribeTimeToLive(e.Ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
		if err != nil {
			return err
		}
		if d := out.TimeToLiveDescription; aws.ToString(d.AttributeName) != consumer.AttrExpiresAt || d.TimeToLiveStatus == ddbtypes.TimeToLiveStatusDisabled {
			return fmt.Errorf("TTL of %s: %+v, want enabled on %s", table, d, consumer.AttrExpiresAt)
		}
		return nil
	}
}

// checkConsumerPolicy checks that the consumer policy grants the kit's
// actions on the inbox table and the queue's on the queue, and nothing
// else.
func checkConsumerPolicy(st *terraform.State) error {
	var doc struct {
		Statement []struct {
			Action   []string
			Resource []string
		}
	}
	if err := json.Unmarshal([]byte(resourceAttr(st, accSub, "inbox.consumer_policy_json")), &doc); err != nil {
		return fmt.Errorf("inbox.consumer_policy_json: %w", err)
	}
	got := map[string][]string{}
	for _, s := range doc.Statement {
		for _, r := range s.Resource {
			got[r] = append(got[r], s.Action...)
		}
	}
	want := map[string][]string{
		resourceAttr(st, accSub, "queue_arn"):       {"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"},
		resourceAttr(st, accSub, "inbox.table_arn"): {"dynamodb:PutItem", "dynamodb:UpdateItem"},
	}
	if len(got) != len(want) {
		return fmt.Errorf("consumer policy grants %v, want %v", got, want)
	}
	for r, actions := range want {
		if !slices.Equal(got[r], actions) {
			return fmt.Errorf("consumer policy grants %v on %s, want %v", got[r], r, actions)
		}
	}
	return nil
}

// applyOnce writes an event, receives its message from the subscription's
// queue and hands it to a consumer built with the kit on the inbox table
// twice, as a redelivery would: the handler's effect, a counter in the
// orders table updated in the completing transaction, happens once, and the
// inbox entry is COMPLETED.
func (e *accEnv) applyOnce(table outbox.Table, orders string) resource.TestCheckFunc {
	return func(st *terraform.State) error {
		ddb := dynamodb.NewFromConfig(e.Cfg)
		inbox, err := consumer.NewInbox(ddb, resourceAttr(st, accSub, "inbox.table_name"))
		if err != nil {
			return err
		}
		c, err := consumer.New(inbox, countInto(orders), consumer.WithMetricsWriter(io.Discard))
		if err != nil {
			return err
		}
		records, err := e.writeEvents(table, orders, 1, "OrderPlaced")
		if err != nil {
			return err
		}
		msg, err := e.receiveOne(resourceAttr(st, accSub, "queue_url"), resourceAttr(st, accSub, "queue_arn"))
		if err != nil {
			return err
		}
		for range 2 {
			resp, err := c.HandleSQS(e.Ctx, events.SQSEvent{Records: []events.SQSMessage{msg}})
			if err != nil || len(resp.BatchItemFailures) != 0 {
				return fmt.Errorf("handling the message: %w, failures %v", err, resp.BatchItemFailures)
			}
		}
		if n := counter(e.Ctx, ddb, orders); n != "1" {
			return fmt.Errorf("the counter is %q after a delivery and its duplicate, want 1", n)
		}
		item, err := ddb.GetItem(e.Ctx, &dynamodb.GetItemInput{
			TableName: aws.String(resourceAttr(st, accSub, "inbox.table_name")), ConsistentRead: aws.Bool(true),
			Key: map[string]ddbtypes.AttributeValue{consumer.AttrEventID: &ddbtypes.AttributeValueMemberS{Value: records["OrderPlaced"][0].EventID}},
		})
		if err != nil || acctest.AttrS(item.Item, consumer.AttrStatus) != consumer.StatusCompleted {
			return fmt.Errorf("the inbox entry of the event: %v (%w), want %s", item, err, consumer.StatusCompleted)
		}
		return nil
	}
}

// countInto is a handler that increments the counter item of the orders
// table in the transaction that completes the inbox entry.
func countInto(orders string) consumer.Handler[json.RawMessage] {
	return func(_ context.Context, _ consumer.Event[json.RawMessage], tx *consumer.Tx) error {
		tx.Add(ddbtypes.TransactWriteItem{Update: &ddbtypes.Update{
			TableName: aws.String(orders),
			Key: map[string]ddbtypes.AttributeValue{
				"pk": &ddbtypes.AttributeValueMemberS{Value: "COUNTER"}, "sk": &ddbtypes.AttributeValueMemberS{Value: "COUNTER"},
			},
			UpdateExpression:          aws.String("ADD applied :one"),
			ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":one": &ddbtypes.AttributeValueMemberN{Value: "1"}},
		}})
		return nil
	}
}

func counter(ctx context.Context, ddb *dynamodb.Client, orders string) string {
	out, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(orders), ConsistentRead: aws.Bool(true), Key: map[string]ddbtypes.AttributeValue{
		"pk": &ddbtypes.AttributeValueMemberS{Value: "COUNTER"}, "sk": &ddbtypes.AttributeValueMemberS{Value: "COUNTER"},
	}})
	if err != nil {
		return err.Error()
	}
	return acctest.AttrN(out.Item, "applied")
}

// receiveOne waits for a message on the queue, deletes it, and returns it
// as Lambda's SQS event source would pass it.
func (e *accEnv) receiveOne(url, arn string) (events.SQSMessage, error) {
	var msg events.SQSMessage
	q := sqs.NewFromConfig(e.Cfg)
	err := acctest.Wait(e.Ctx, "a message on "+url, func() error {
		out, err := q.ReceiveMessage(e.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 1, WaitTimeSeconds: 1})
		if err != nil {
			return err
		}
		if len(out.Messages) == 0 {
			return errors.New("no message yet")
		}
		m := out.Messages[0]
		msg = events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body), EventSourceARN: arn}
		_, err = q.DeleteMessage(e.Ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle})
		return err
	})
	if err == nil && !strings.Contains(msg.Body, `"eventId"`) {
		err = fmt.Errorf("the message is not a published event: %s", msg.Body)
	}
	return msg, err
}

// TestAccSubscription_inboxAdopted: an existing table is adopted as the
// inbox, delivers once, plans nothing more, and on destroy keeps the table
// with its TTL turned off again. Bad inbox settings fail at plan.
func TestAccSubscription_inboxAdopted(t *testing.T) {
	e := newAccEnv(t)
	f := e.newFixture("adopt")
	name, shared := f.name, e.Name("acc-inbox")
	ddb := dynamodb.NewFromConfig(e.Cfg)
	if _, err := ddb.CreateTable(e.Ctx, consumer.TableInput(shared)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = ddb.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(shared)})
	})
	if err := dynamodb.NewTableExistsWaiter(ddb).Wait(e.Ctx, &dynamodb.DescribeTableInput{TableName: aws.String(shared)}, time.Minute); err != nil {
		t.Fatal(err)
	}
	before := e.Snapshot()
	adopted := e.inboxConfig(name, fmt.Sprintf("  inbox = { existing = true, name = %q }", shared))
	invalid := func(inbox, want string) resource.TestStep {
		return resource.TestStep{Config: e.inboxConfig(name, inbox), PlanOnly: true, ExpectError: words(want)}
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		CheckDestroy: e.checkSubscriptionsDestroyed(before, resource.ComposeTestCheckFunc(e.CheckDestroy(name, before), func(*terraform.State) error {
			out, err := ddb.DescribeTimeToLive(e.Ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(shared)})
			if err != nil || out.TimeToLiveDescription.TimeToLiveStatus != ddbtypes.TimeToLiveStatusDisabled {
				return fmt.Errorf("the adopted table's TTL after destroy: %+v (%w), want disabled again", out, err)
			}
			return nil
		}), name+"-payments"),
		Steps: []resource.TestStep{
			invalid(`  inbox = { name = "x-inbox" }`, `inbox.name is set without Existing: remove it`),
			invalid(`  inbox = { existing = true }`, `inbox.name is empty with Existing: set the name of the table to adopt`),
			invalid(`  inbox = { kms_key_arn = "alias/x" }`, `inbox.kms_key_arn is "alias/x": use the ARN of a KMS key`),
			{
				Config: adopted,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(accSub, tfjsonpath.New("inbox").AtMapKey("table_name"), knownvalue.StringExact(shared)),
					statecheck.ExpectKnownValue(accSub, tfjsonpath.New("inbox").AtMapKey("ttl_attribute"), knownvalue.StringExact(consumer.AttrExpiresAt)),
				},
				Check: resource.ComposeTestCheckFunc(e.checkInboxTTL(shared), checkConsumerPolicy, e.applyOnce(f.table, f.orders)),
			},
			emptyPlanStep(adopted),
		},
	})
}
