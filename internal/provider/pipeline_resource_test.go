// Acceptance tests of outbox_pipeline.
//
// They run with TF_ACC=1 and the Terraform CLI given by TF_ACC_TERRAFORM_PATH
// (CHECKPOINT_DISABLE=1 and TF_CLI_CONFIG_FILE=/dev/null keep it offline; see
// the GNUmakefile's testacc target). Where they run is chosen by one
// variable:
//
//   - OUTBOX_ACC_AWS unset (the default): every test function starts its own
//     local AWS stack (internal/localaws) in-process, on a free port of
//     127.0.0.1. The provider block points endpoint_url at it, with region
//     us-east-1; the static test credentials come from the environment
//     (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, set by TestMain).
//   - OUTBOX_ACC_AWS=1: the same tests run against real AWS, with the
//     standard AWS environment (AWS_PROFILE or AWS_ACCESS_KEY_ID...,
//     AWS_REGION, default us-east-1). Names get a random suffix. Steps that
//     need the local stack's control API (fault injection, event source
//     mapping counters) are skipped there, and CheckDestroy proves the
//     destruction with describe calls instead of the stack's inventory.
//
// Tests of asynchronous delivery wait for their condition with a deadline
// (accWait), never a fixed sleep.
package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/compare"
	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/statecheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relaypackage"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

const (
	envAccAWS   = "OUTBOX_ACC_AWS"
	accResource = "outbox_pipeline.test"
	// Deadline of each asynchronous condition: generous for a loaded
	// 2-core machine running arm64 functions through qemu.
	accDeadline = 3 * time.Minute
)

func onAWS() bool { return os.Getenv(envAccAWS) != "" }

func TestMain(m *testing.M) {
	if !onAWS() {
		// The local stack takes any key; the provider reads these like
		// hashicorp/aws does, from the environment.
		for k, v := range map[string]string{
			"AWS_ACCESS_KEY_ID": "AKIDACCTEST", "AWS_SECRET_ACCESS_KEY": "acctestsecret",
			"AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_EC2_METADATA_DISABLED": "true",
		} {
			err := os.Unsetenv(k)
			if v != "" {
				err = os.Setenv(k, v)
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "setting %s: %v\n", k, err)
				os.Exit(1)
			}
		}
	}
	os.Exit(m.Run())
}

// accEnv is where one acceptance test function runs: its own local stack,
// or real AWS.
type accEnv struct {
	t     *testing.T
	stack *localaws.Stack // nil on AWS
	ctl   *control.Client // nil on AWS
	cfg   aws.Config
	ctx   context.Context
	// suffix makes names unique on AWS.
	suffix string
}

func newAccEnv(t *testing.T) *accEnv {
	t.Helper()
	if os.Getenv(resource.EnvTfAcc) == "" {
		// resource.Test skips too; fail nothing and start nothing.
		t.Skipf("acceptance tests run with %s=1", resource.EnvTfAcc)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	t.Cleanup(cancel)
	// Each test function has its own stack (or unique names on AWS), so
	// they run in parallel; much of their time is waiting.
	t.Parallel()
	e := &accEnv{t: t, ctx: ctx}
	if onAWS() {
		cfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			t.Fatalf("loading the AWS configuration: %v", err)
		}
		if cfg.Region == "" {
			cfg.Region = "us-east-1"
		}
		e.cfg = cfg
		e.suffix = "-" + acctest.RandString(6)
		return e
	}
	e.stack = localawstest.Start(t)
	e.ctl = localawstest.Control(e.stack)
	e.cfg = localawstest.Config(e.stack)
	return e
}

// name returns a component name, unique on AWS.
func (e *accEnv) name(base string) string { return base + e.suffix }

func (e *accEnv) providerConfig() string {
	if e.stack == nil {
		return fmt.Sprintf("provider \"outbox\" {\n  region = %q\n}\n", e.cfg.Region)
	}
	return fmt.Sprintf("provider \"outbox\" {\n  region       = \"us-east-1\"\n  endpoint_url = %q\n}\n", e.stack.Endpoint())
}

func (e *accEnv) factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"outbox": providerserver.NewProtocol6WithError(New("acctest")()),
	}
}

// inventory returns the local stack's resources (streams aside: AWS keeps a
// stream readable for 24 hours after its table or its disabling).
func (e *accEnv) inventory() map[string][]string {
	e.t.Helper()
	inv, err := e.ctl.Resources(e.ctx)
	if err != nil {
		e.t.Fatalf("reading the local stack's inventory: %v", err)
	}
	for k, v := range inv {
		v = slices.DeleteFunc(v, func(r string) bool { return strings.Contains(r, "/stream/") })
		slices.Sort(v)
		inv[k] = v
		if len(v) == 0 {
			delete(inv, k)
		}
	}
	return inv
}

// checkDestroy proves that nothing of the pipeline is left: on the local
// stack, the inventory is back to before (taken after the test's own
// fixtures were created); on AWS, each component's describe call reports it
// missing.
func (e *accEnv) checkDestroy(name string, before map[string][]string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if e.stack != nil {
			after := e.inventory()
			if !maps.EqualFunc(before, after, slices.Equal[[]string]) {
				return fmt.Errorf("destroy left resources:\nbefore %v\nafter  %v", before, after)
			}
			return nil
		}
		n := provision.NamesFor(name)
		lc := lambda.NewFromConfig(e.cfg)
		for _, fn := range []string{n.RelayFunction, n.ReconcilerFunction} {
			if _, err := lc.GetFunction(e.ctx, &lambda.GetFunctionInput{FunctionName: aws.String(fn)}); err == nil {
				return fmt.Errorf("function %s still exists", fn)
			}
		}
		ic := iam.NewFromConfig(e.cfg)
		for _, role := range []string{n.RelayRole, n.ReconcilerRole, n.SchedulerRole} {
			if _, err := ic.GetRole(e.ctx, &iam.GetRoleInput{RoleName: aws.String(role)}); err == nil {
				return fmt.Errorf("role %s still exists", role)
			}
		}
		alarms, err := cloudwatch.NewFromConfig(e.cfg).DescribeAlarms(e.ctx, &cloudwatch.DescribeAlarmsInput{AlarmNames: []string{
			n.AlarmDLQNotEmpty, n.AlarmRelayErrors, n.AlarmIteratorAge, n.AlarmOldestPendingAge,
		}})
		if err != nil {
			return fmt.Errorf("describing the alarms of %s: %w", name, err)
		}
		if len(alarms.MetricAlarms) > 0 {
			return fmt.Errorf("%d alarms of %s remain", len(alarms.MetricAlarms), name)
		}
		if _, err := sqs.NewFromConfig(e.cfg).GetQueueUrl(e.ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(n.DeadLetterQueue)}); err == nil {
			return fmt.Errorf("queue %s still exists", n.DeadLetterQueue)
		}
		if out, err := dynamodb.NewFromConfig(e.cfg).DescribeTable(e.ctx, &dynamodb.DescribeTableInput{TableName: aws.String(n.Table)}); err == nil && out.Table.TableStatus != ddbtypes.TableStatusDeleting {
			return fmt.Errorf("table %s still exists", n.Table)
		}
		return nil
	}
}

// accWait polls cond until it returns nil or the deadline passes, and then
// fails with cond's last error.
func accWait(ctx context.Context, what string, cond func() error) error {
	deadline := time.Now().Add(accDeadline)
	delay := 50 * time.Millisecond
	for {
		err := cond()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s: not reached within %s: %w", what, accDeadline, err)
		}
		time.Sleep(delay)
		delay = min(delay*2, time.Second)
	}
}

// pipelineConfig is the provider block and one outbox_pipeline with the
// test settings: fast mapping, short reconciler age, x86_64 functions
// unless the body sets an architecture.
func (e *accEnv) pipelineConfig(name, body string) string {
	return e.providerConfig() + fmt.Sprintf(`
resource "outbox_pipeline" "test" {
  name = %q
%s
}
`, name, body)
}

// sink is an SQS queue that receives what the pipeline publishes: through
// an EventBridge rule, or an SNS subscription.
type sink struct {
	e        *accEnv
	queueURL string
	queueARN string
}

func (e *accEnv) newQueue(name string, policy func(arn string) string) sink {
	e.t.Helper()
	c := sqs.NewFromConfig(e.cfg)
	out, err := c.CreateQueue(e.ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
	if err != nil {
		e.t.Fatalf("creating queue %s: %v", name, err)
	}
	url := aws.ToString(out.QueueUrl)
	e.t.Cleanup(func() { _, _ = c.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(url)}) })
	attrs, err := c.GetQueueAttributes(e.ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		e.t.Fatal(err)
	}
	s := sink{e: e, queueURL: url, queueARN: attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]}
	if policy != nil {
		if _, err := c.SetQueueAttributes(e.ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{"Policy": policy(s.queueARN)}}); err != nil {
			e.t.Fatalf("setting the policy of %s: %v", name, err)
		}
	}
	return s
}

func queuePolicy(service, sourceARN string) func(string) string {
	return func(queueARN string) string {
		b, _ := json.Marshal(map[string]any{
			"Version": "2012-10-17",
			"Statement": []any{map[string]any{
				"Effect": "Allow", "Principal": map[string]any{"Service": service},
				"Action": "sqs:SendMessage", "Resource": queueARN,
				"Condition": map[string]any{"ArnEquals": map[string]any{"aws:SourceArn": sourceARN}},
			}},
		})
		return string(b)
	}
}

// newBusSink creates a queue and a rule on the default bus that sends it
// every event of source.
func (e *accEnv) newBusSink(source string) sink {
	e.t.Helper()
	eb := eventbridge.NewFromConfig(e.cfg)
	rule := e.name("acc-sink")
	pattern, _ := json.Marshal(map[string]any{"source": []string{source}})
	out, err := eb.PutRule(e.ctx, &eventbridge.PutRuleInput{Name: aws.String(rule), EventPattern: aws.String(string(pattern))})
	if err != nil {
		e.t.Fatalf("creating rule: %v", err)
	}
	s := e.newQueue(e.name("acc-bus-sink"), queuePolicy("events.amazonaws.com", aws.ToString(out.RuleArn)))
	if _, err := eb.PutTargets(e.ctx, &eventbridge.PutTargetsInput{Rule: aws.String(rule), Targets: []ebtypes.Target{{Id: aws.String("sink"), Arn: aws.String(s.queueARN)}}}); err != nil {
		e.t.Fatalf("adding the rule's target: %v", err)
	}
	e.t.Cleanup(func() {
		ctx := context.Background()
		_, _ = eb.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String(rule), Ids: []string{"sink"}})
		_, _ = eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String(rule)})
	})
	return s
}

// newTopicSink creates a topic and a queue subscribed to it; it returns
// the topic's ARN.
func (e *accEnv) newTopicSink() (sink, string) {
	e.t.Helper()
	c := sns.NewFromConfig(e.cfg)
	out, err := c.CreateTopic(e.ctx, &sns.CreateTopicInput{Name: aws.String(e.name("acc-topic"))})
	if err != nil {
		e.t.Fatalf("creating topic: %v", err)
	}
	topic := aws.ToString(out.TopicArn)
	e.t.Cleanup(func() { _, _ = c.DeleteTopic(context.Background(), &sns.DeleteTopicInput{TopicArn: aws.String(topic)}) })
	s := e.newQueue(e.name("acc-topic-sink"), queuePolicy("sns.amazonaws.com", topic))
	if _, err := c.Subscribe(e.ctx, &sns.SubscribeInput{TopicArn: aws.String(topic), Protocol: aws.String("sqs"), Endpoint: aws.String(s.queueARN)}); err != nil {
		e.t.Fatalf("subscribing the queue: %v", err)
	}
	return s, topic
}

// event is what a consumer sees: the EventBridge envelope (also the SNS
// message body).
type event struct {
	ID         string `json:"id"`
	Source     string `json:"source"`
	DetailType string `json:"detail-type"`
	Detail     struct {
		Metadata struct {
			EventID    string `json:"eventId"`
			OccurredAt string `json:"occurredAt"`
		} `json:"metadata"`
		Data json.RawMessage `json:"data"`
	} `json:"detail"`
}

// receive drains the queue until every id in want has arrived, and returns
// the events by event id.
func (s sink) receive(want []outbox.Record) (map[string]event, error) {
	c := sqs.NewFromConfig(s.e.cfg)
	got := map[string]event{}
	err := accWait(s.e.ctx, "receiving the published events", func() error {
		out, err := c.ReceiveMessage(s.e.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(s.queueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			return err
		}
		for _, m := range out.Messages {
			body := aws.ToString(m.Body)
			var n struct {
				Type    string `json:"Type"`
				Message string `json:"Message"`
			}
			if json.Unmarshal([]byte(body), &n) == nil && n.Type == "Notification" {
				body = n.Message
			}
			var ev event
			if err := json.Unmarshal([]byte(body), &ev); err != nil {
				return fmt.Errorf("message %q: %w", body, err)
			}
			got[ev.Detail.Metadata.EventID] = ev
			_, _ = c.DeleteMessage(s.e.ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(s.queueURL), ReceiptHandle: m.ReceiptHandle})
		}
		var missing []string
		for _, r := range want {
			if _, ok := got[r.EventID]; !ok {
				missing = append(missing, r.EventID)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("%d of %d events missing", len(missing), len(want))
		}
		return nil
	})
	return got, err
}

// checkEvents checks the envelope of every received event against the
// record written.
func checkEvents(want []outbox.Record, got map[string]event) error {
	for _, r := range want {
		ev := got[r.EventID]
		if ev.Source != r.Source || ev.DetailType != r.DetailType || ev.Detail.Metadata.EventID != r.EventID || ev.ID == "" {
			return fmt.Errorf("event %s arrived as %+v; want source %q, detail-type %q", r.EventID, ev, r.Source, r.DetailType)
		}
		var wantData, gotData any
		_ = json.Unmarshal(r.Detail, &wantData)
		if err := json.Unmarshal(ev.Detail.Data, &gotData); err != nil || fmt.Sprint(wantData) != fmt.Sprint(gotData) {
			return fmt.Errorf("event %s: detail.data = %s, want %s", r.EventID, ev.Detail.Data, r.Detail)
		}
		if ev.Detail.Metadata.OccurredAt == "" {
			return fmt.Errorf("event %s has no detail.metadata.occurredAt", r.EventID)
		}
	}
	return nil
}

// createOrdersTable creates the application's table, with pk/sk keys (and,
// when stream is set, a stream of that view type).
func (e *accEnv) createAppTable(name string, stream ddbtypes.StreamViewType) {
	e.t.Helper()
	c := dynamodb.NewFromConfig(e.cfg)
	in := &dynamodb.CreateTableInput{
		TableName: aws.String(name),
		AttributeDefinitions: []ddbtypes.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: ddbtypes.ScalarAttributeTypeS},
		},
		KeySchema: []ddbtypes.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: ddbtypes.KeyTypeRange},
		},
		BillingMode: ddbtypes.BillingModePayPerRequest,
	}
	if stream != "" {
		in.StreamSpecification = &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: stream}
	}
	if _, err := c.CreateTable(e.ctx, in); err != nil {
		e.t.Fatalf("creating table %s: %v", name, err)
	}
	e.t.Cleanup(func() {
		_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	if err := dynamodb.NewTableExistsWaiter(c).Wait(e.ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, 5*time.Minute); err != nil {
		e.t.Fatal(err)
	}
}

func orderItem(table, pk, sk string, n int) ddbtypes.TransactWriteItem {
	return ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{
		TableName: aws.String(table),
		Item: map[string]ddbtypes.AttributeValue{
			"pk": &ddbtypes.AttributeValueMemberS{Value: pk}, "sk": &ddbtypes.AttributeValueMemberS{Value: sk},
			"total": &ddbtypes.AttributeValueMemberN{Value: fmt.Sprint(10 * n)},
		},
	}}
}

// writeOrders writes n orders, each in a transaction with its OrderPlaced
// event, and returns the records written.
func (e *accEnv) writeOrders(w *outbox.Writer, ordersTable, source string, from, n int, sharedPK bool) ([]outbox.Record, error) {
	var records []outbox.Record
	for i := from; i < from+n; i++ {
		pk := fmt.Sprintf("ORDER#%d", i)
		ev := outbox.Event{Source: source, DetailType: "OrderPlaced", Detail: json.RawMessage(fmt.Sprintf(`{"orderId":"%d","total":%d}`, i, 10*i))}
		if sharedPK {
			ev.PartitionKey = pk
		}
		rs, err := w.Write(e.ctx, []ddbtypes.TransactWriteItem{orderItem(ordersTable, pk, "ORDER", i)}, ev)
		if err != nil {
			return nil, err
		}
		records = append(records, rs...)
	}
	return records, nil
}

func (e *accEnv) writer(table outbox.Table) *outbox.Writer {
	e.t.Helper()
	w, err := outbox.NewWriter(dynamodb.NewFromConfig(e.cfg), table)
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

// waitItems waits until every record's item satisfies ok (nil item: gone).
func (e *accEnv) waitItems(table outbox.Table, records []outbox.Record, what string, ok func(item map[string]ddbtypes.AttributeValue) error) error {
	c := dynamodb.NewFromConfig(e.cfg)
	table = table.WithDefaults()
	return accWait(e.ctx, what, func() error {
		for _, r := range records {
			out, err := c.GetItem(e.ctx, &dynamodb.GetItemInput{TableName: aws.String(table.Name), Key: table.Key(r), ConsistentRead: aws.Bool(true)})
			if err != nil {
				return err
			}
			var item map[string]ddbtypes.AttributeValue
			if len(out.Item) > 0 {
				item = out.Item
			}
			if err := ok(item); err != nil {
				return fmt.Errorf("item of event %s: %w", r.EventID, err)
			}
		}
		return nil
	})
}

func attrS(item map[string]ddbtypes.AttributeValue, name string) string {
	if v, ok := item[name].(*ddbtypes.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func attrN(item map[string]ddbtypes.AttributeValue, name string) string {
	if v, ok := item[name].(*ddbtypes.AttributeValueMemberN); ok {
		return v.Value
	}
	return ""
}

func publishedWithTTL(ttlAttr string) func(map[string]ddbtypes.AttributeValue) error {
	return func(item map[string]ddbtypes.AttributeValue) error {
		switch {
		case item == nil:
			return fmt.Errorf("is gone; want it marked")
		case attrS(item, "status") != string(outbox.StatusPublished):
			return fmt.Errorf("status %q, want PUBLISHED", attrS(item, "status"))
		case attrN(item, ttlAttr) == "":
			return fmt.Errorf("has no %s", ttlAttr)
		case attrS(item, "outboxPendingShard") != "":
			return fmt.Errorf("is still in the pending index")
		}
		var exp int64
		if _, err := fmt.Sscan(attrN(item, ttlAttr), &exp); err != nil {
			return fmt.Errorf("%s is not a number: %w", ttlAttr, err)
		}
		if exp < time.Now().Add(24*time.Hour).Unix() {
			return fmt.Errorf("%s = %d expires too soon", ttlAttr, exp)
		}
		return nil
	}
}

func deleted(item map[string]ddbtypes.AttributeValue) error {
	if item != nil {
		return fmt.Errorf("still exists with status %q; want it deleted", attrS(item, "status"))
	}
	return nil
}

// deliver writes n orders and checks that their events arrive at s, and
// that their items end as check says.
func (e *accEnv) deliver(s sink, table outbox.Table, ordersTable string, from, n int, itemsWhat string, check func(map[string]ddbtypes.AttributeValue) error) resource.TestCheckFunc {
	return func(*terraform.State) error {
		records, err := e.writeOrders(e.writer(table), ordersTable, "com.example.orders", from, n, table.Layout == outbox.LayoutShared)
		if err != nil {
			return err
		}
		got, err := s.receive(records)
		if err != nil {
			return err
		}
		if err := checkEvents(records, got); err != nil {
			return err
		}
		return e.waitItems(table, records, itemsWhat, check)
	}
}

func relaySHA(t *testing.T, arch string) string {
	t.Helper()
	sha, err := relaypackage.SHA256(arch)
	if err != nil {
		t.Fatalf("%v: run `make relay` first", err)
	}
	return sha
}

const fastRelay = `
  relay {
    architecture            = "x86_64"
    batch_size              = 10
    batching_window_seconds = 0
    maximum_retry_attempts  = 2
    bisect_on_error         = false
  }
  reconciler {
    enabled = false
  }
`

// TestAccPipeline_dedicatedTable: a dedicated table on the default bus,
// events delivered with the right envelope, items marked, then deleted once
// the published action changes in place.
func TestAccPipeline_dedicatedTable(t *testing.T) {
	e := newAccEnv(t)
	name := e.name("orders")
	orders := e.name("acc-orders")
	e.createAppTable(orders, "")
	s := e.newBusSink("com.example.orders")
	var before map[string][]string
	if e.stack != nil {
		before = e.inventory()
	}
	table := outbox.Table{Name: name + "-outbox"}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		CheckDestroy:             e.checkDestroy(name, before),
		Steps: []resource.TestStep{
			{
				Config: e.pipelineConfig(name, fastRelay+`  tags = { team = "orders" }`),
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(accResource, tfjsonpath.New("id"), knownvalue.StringExact(name)),
					statecheck.ExpectKnownValue(accResource, tfjsonpath.New("table_name"), knownvalue.StringExact(name+"-outbox")),
					statecheck.ExpectKnownValue(accResource, tfjsonpath.New("relay_function_name"), knownvalue.StringExact(name+"-relay")),
					statecheck.ExpectKnownValue(accResource, tfjsonpath.New("event_source_mapping_uuid"), knownvalue.NotNull()),
					statecheck.ExpectKnownValue(accResource, tfjsonpath.New("stream_arn"), knownvalue.StringRegexp(regexp.MustCompile(`:table/`+name+`-outbox/stream/`))),
					statecheck.ExpectKnownValue(accResource, tfjsonpath.New("dead_letter_queue_url"), knownvalue.StringRegexp(regexp.MustCompile(name+`-relay-dlq$`))),
					statecheck.ExpectKnownValue(accResource, tfjsonpath.New("target_arn"), knownvalue.StringRegexp(regexp.MustCompile(`:event-bus/default$`))),
					statecheck.ExpectKnownValue(accResource, tfjsonpath.New("ttl_attribute_in_use"), knownvalue.StringExact("expiresAt")),
					statecheck.ExpectKnownValue(accResource, tfjsonpath.New("relay_package_sha256"), knownvalue.StringExact(relaySHA(t, "x86_64"))),
					statecheck.ExpectKnownValue(accResource, tfjsonpath.New("reconciler_function_arn"), knownvalue.Null()),
					statecheck.ExpectKnownValue(accResource, tfjsonpath.New("tags_all"), knownvalue.MapExact(map[string]knownvalue.Check{"team": knownvalue.StringExact("orders")})),
				},
				Check: e.deliver(s, table, orders, 1, 5, "items marked PUBLISHED with a TTL", publishedWithTTL("expiresAt")),
			},
			{
				Config: e.pipelineConfig(name, fastRelay+`
  published {
    action = "delete"
  }
  tags = { team = "orders" }`),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
				}},
				Check: e.deliver(s, table, orders, 100, 5, "items deleted", deleted),
			},
		},
	})
}

func stateAttr(s *terraform.State, name string) string {
	if r, ok := s.RootModule().Resources[accResource]; ok {
		return r.Primary.Attributes[name]
	}
	return ""
}

// TestAccPipeline_adoptedTable: a shared application table with OUTBOX#
// items beside the aggregates. Writes that are not outbox items never invoke
// the relay; destroy reverts only what the pipeline added.
func TestAccPipeline_adoptedTable(t *testing.T) {
	e := newAccEnv(t)
	name := e.name("shop")
	app := e.name("acc-shop")
	e.createAppTable(app, "")
	s := e.newBusSink("com.example.orders")
	var before map[string][]string
	if e.stack != nil {
		before = e.inventory()
	}
	table := outbox.Table{Name: app, Layout: outbox.LayoutShared, PartitionKey: "pk", SortKey: "sk"}
	ddb := dynamodb.NewFromConfig(e.cfg)
	destroyed := e.checkDestroy(name, before)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		CheckDestroy: func(st *terraform.State) error {
			if err := destroyed(st); err != nil {
				return err
			}
			out, err := ddb.DescribeTable(e.ctx, &dynamodb.DescribeTableInput{TableName: aws.String(app)})
			if err != nil {
				return fmt.Errorf("the adopted table must survive the pipeline: %w", err)
			}
			if ss := out.Table.StreamSpecification; ss != nil && aws.ToBool(ss.StreamEnabled) {
				return fmt.Errorf("the stream that the pipeline enabled is still enabled")
			}
			if len(out.Table.GlobalSecondaryIndexes) != 0 {
				return fmt.Errorf("the pending index that the pipeline added is still there")
			}
			return nil
		},
		Steps: []resource.TestStep{{
			Config: e.pipelineConfig(name, fastRelay+fmt.Sprintf(`
  table {
    existing      = true
    name          = %q
    partition_key = "pk"
    sort_key      = "sk"
  }`, app)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, tfjsonpath.New("table_name"), knownvalue.StringExact(app)),
				statecheck.ExpectKnownValue(accResource, tfjsonpath.New("stream_arn"), knownvalue.StringRegexp(regexp.MustCompile(`:table/`+app+`/stream/`))),
				statecheck.ExpectKnownValue(accResource, tfjsonpath.New("pending_index_arn"), knownvalue.StringRegexp(regexp.MustCompile(`/index/outbox-pending$`))),
			},
			Check: func(st *terraform.State) error {
				// Aggregate items only: the filter drops them before the relay.
				const plain = 6
				for i := range plain {
					if _, err := ddb.PutItem(e.ctx, &dynamodb.PutItemInput{TableName: aws.String(app), Item: map[string]ddbtypes.AttributeValue{
						"pk": &ddbtypes.AttributeValueMemberS{Value: fmt.Sprintf("CUSTOMER#%d", i)}, "sk": &ddbtypes.AttributeValueMemberS{Value: "PROFILE"},
					}}); err != nil {
						return err
					}
				}
				uuid := stateAttr(st, "event_source_mapping_uuid")
				if e.ctl != nil {
					if err := accWait(e.ctx, "the mapping reading the aggregate writes", func() error {
						ms, err := e.ctl.MappingStatus(e.ctx, uuid)
						if err != nil {
							return err
						}
						if ms.Counters.RecordsFiltered < plain {
							return fmt.Errorf("%d records filtered out, want %d", ms.Counters.RecordsFiltered, plain)
						}
						return nil
					}); err != nil {
						return err
					}
					ms, err := e.ctl.MappingStatus(e.ctx, uuid)
					if err != nil {
						return err
					}
					if ms.Counters.Invocations != 0 {
						return fmt.Errorf("aggregate writes invoked the relay %d times", ms.Counters.Invocations)
					}
				}
				// Orders with their events, beside the aggregates.
				if err := e.deliver(s, table, app, 1, 4, "items marked PUBLISHED", publishedWithTTL("expiresAt"))(st); err != nil {
					return err
				}
				if e.ctl != nil {
					ms, err := e.ctl.MappingStatus(e.ctx, uuid)
					if err != nil {
						return err
					}
					if ms.Counters.Invocations == 0 || ms.Counters.RecordsSucceeded < 4 {
						return fmt.Errorf("the outbox items did not go through the relay: %+v", ms.Counters)
					}
				}
				return nil
			},
		}},
	})
}

// TestAccPipeline_snsTarget publishes to an SNS topic with a queue
// subscribed.
func TestAccPipeline_snsTarget(t *testing.T) {
	e := newAccEnv(t)
	name := e.name("notify")
	orders := e.name("acc-orders")
	e.createAppTable(orders, "")
	s, topic := e.newTopicSink()
	var before map[string][]string
	if e.stack != nil {
		before = e.inventory()
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		CheckDestroy:             e.checkDestroy(name, before),
		Steps: []resource.TestStep{{
			Config: e.pipelineConfig(name, fastRelay+fmt.Sprintf(`
  target {
    topic_arn = %q
  }`, topic)),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, tfjsonpath.New("target_arn"), knownvalue.StringExact(topic)),
			},
			Check: e.deliver(s, outbox.Table{Name: name + "-outbox"}, orders, 1, 4, "items marked PUBLISHED", publishedWithTTL("expiresAt")),
		}},
	})
}

// TestAccPipeline_relayFailure: while PutEvents fails, the mapping's
// retries run out and the dead-letter queue receives the failure record;
// the items stay pending, so nothing is lost.
func TestAccPipeline_relayFailure(t *testing.T) {
	e := newAccEnv(t)
	if e.ctl == nil {
		t.Skip("fault injection needs the local stack's control API")
	}
	name := e.name("faulty")
	orders := e.name("acc-orders")
	e.createAppTable(orders, "")
	before := e.inventory()
	table := outbox.Table{Name: name + "-outbox"}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		CheckDestroy:             e.checkDestroy(name, before),
		Steps: []resource.TestStep{{
			// The events stay pending: destroy deletes them.
			Config: e.pipelineConfig(name, `
  force_destroy = true
  relay {
    architecture            = "x86_64"
    batch_size              = 10
    maximum_retry_attempts  = 1
    bisect_on_error         = false
  }
  reconciler {
    enabled = false
  }`),
			Check: func(st *terraform.State) error {
				if _, err := e.ctl.AddFault(e.ctx, control.FaultRule{Service: "events", Operation: "PutEvents", Entry: true, Code: "InternalFailure", Message: "injected outage"}); err != nil {
					return err
				}
				records, err := e.writeOrders(e.writer(table), orders, "com.example.orders", 1, 3, false)
				if err != nil {
					return err
				}
				dlq := sink{e: e, queueURL: stateAttr(st, "dead_letter_queue_url")}
				c := sqs.NewFromConfig(e.cfg)
				var failure string
				if err := accWait(e.ctx, "the dead-letter queue receiving the failed batch", func() error {
					out, err := c.ReceiveMessage(e.ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(dlq.queueURL), WaitTimeSeconds: 1})
					if err != nil {
						return err
					}
					if len(out.Messages) == 0 {
						return fmt.Errorf("no message yet")
					}
					failure = aws.ToString(out.Messages[0].Body)
					return nil
				}); err != nil {
					return err
				}
				var meta struct {
					RequestContext struct {
						Condition string `json:"condition"`
					} `json:"requestContext"`
					DDBStreamBatchInfo struct {
						BatchSize int    `json:"batchSize"`
						StreamARN string `json:"streamArn"`
					} `json:"DDBStreamBatchInfo"`
				}
				if err := json.Unmarshal([]byte(failure), &meta); err != nil {
					return fmt.Errorf("the dead-letter record is not JSON: %s: %w", failure, err)
				}
				if meta.DDBStreamBatchInfo.BatchSize == 0 || meta.DDBStreamBatchInfo.StreamARN != stateAttr(st, "stream_arn") {
					return fmt.Errorf("the dead-letter record is not the mapping's failure record: %s", failure)
				}
				// Nothing is lost: every item is still pending, in the index.
				return e.waitItems(table, records, "items still pending", func(item map[string]ddbtypes.AttributeValue) error {
					if item == nil || attrS(item, "status") != string(outbox.StatusPending) || attrS(item, "outboxPendingShard") == "" {
						return fmt.Errorf("is %v; want it PENDING in the index", item)
					}
					return nil
				})
			},
		}},
	})
}

// TestAccPipeline_reconciler: after an outage of the target, the
// reconciler, fired as its schedule fires it, delivers every pending event.
func TestAccPipeline_reconciler(t *testing.T) {
	e := newAccEnv(t)
	if e.stack != nil {
		if _, ok := e.stack.Service("scheduler"); !ok {
			t.Skip("the local AWS stack does not serve EventBridge Scheduler yet: the reconciler cannot be created")
		}
	}
	if e.ctl == nil {
		t.Skip("fault injection needs the local stack's control API")
	}
	name := e.name("recon")
	orders := e.name("acc-orders")
	e.createAppTable(orders, "")
	s := e.newBusSink("com.example.orders")
	before := e.inventory()
	table := outbox.Table{Name: name + "-outbox"}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		CheckDestroy:             e.checkDestroy(name, before),
		Steps: []resource.TestStep{{
			Config: e.pipelineConfig(name, `
  relay {
    architecture           = "x86_64"
    maximum_retry_attempts = 0
    bisect_on_error        = false
  }
  reconciler {
    schedule_expression = "rate(1 minute)"
    min_age_seconds     = 1
    timeout             = 60
  }`),
			ConfigStateChecks: []statecheck.StateCheck{
				statecheck.ExpectKnownValue(accResource, tfjsonpath.New("schedule_arn"), knownvalue.NotNull()),
				statecheck.ExpectKnownValue(accResource, tfjsonpath.New("reconciler_function_arn"), knownvalue.NotNull()),
			},
			Check: func(st *terraform.State) error {
				fault, err := e.ctl.AddFault(e.ctx, control.FaultRule{Service: "events", Operation: "PutEvents", Entry: true, Code: "InternalFailure", Message: "injected outage"})
				if err != nil {
					return err
				}
				records, err := e.writeOrders(e.writer(table), orders, "com.example.orders", 1, 3, false)
				if err != nil {
					return err
				}
				uuid := stateAttr(st, "event_source_mapping_uuid")
				if err := accWait(e.ctx, "the mapping giving up on the batch", func() error {
					ms, err := e.ctl.MappingStatus(e.ctx, uuid)
					if err != nil {
						return err
					}
					if ms.Counters.OnFailureSent == 0 {
						return fmt.Errorf("nothing dead-lettered yet: %+v", ms.Counters)
					}
					return nil
				}); err != nil {
					return err
				}
				if err := e.ctl.RemoveFault(e.ctx, fault.ID); err != nil {
					return err
				}
				// Fire the schedule: invoke its target with its input.
				sch, err := scheduler.NewFromConfig(e.cfg).GetSchedule(e.ctx, &scheduler.GetScheduleInput{Name: aws.String(name + "-reconcile")})
				if err != nil {
					return err
				}
				out, err := lambda.NewFromConfig(e.cfg).Invoke(e.ctx, &lambda.InvokeInput{FunctionName: sch.Target.Arn, Payload: []byte(aws.ToString(sch.Target.Input))})
				if err != nil {
					return err
				}
				if out.FunctionError != nil {
					return fmt.Errorf("the reconciler failed: %s", out.Payload)
				}
				got, err := s.receive(records)
				if err != nil {
					return err
				}
				if err := checkEvents(records, got); err != nil {
					return err
				}
				return e.waitItems(table, records, "items marked PUBLISHED", publishedWithTTL("expiresAt"))
			},
		}},
	})
}

// TestAccPipeline_updates: mapping and function settings change in place
// (the mapping is kept); the architecture changes the relay package in
// place; a new name replaces the pipeline.
func TestAccPipeline_updates(t *testing.T) {
	e := newAccEnv(t)
	name := e.name("upd")
	var before map[string][]string
	if e.stack != nil {
		before = e.inventory()
	}
	mappingKept := statecheck.CompareValue(compare.ValuesSame())
	body := func(batch int, memory int, arch, prefix string) string {
		return fmt.Sprintf(`
  relay {
    architecture = %q
    batch_size   = %d
    memory_size  = %d
  }
  table {
    sort_key_prefix = %q
  }
  reconciler {
    enabled = false
  }`, arch, batch, memory, prefix)
	}
	update := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate)}}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		CheckDestroy:             e.checkDestroy(e.name("upd2"), before),
		Steps: []resource.TestStep{
			{
				Config:            e.pipelineConfig(name, body(100, 256, "x86_64", "OUTBOX#")),
				ConfigStateChecks: []statecheck.StateCheck{mappingKept.AddStateValue(accResource, tfjsonpath.New("event_source_mapping_uuid"))},
			},
			{
				Config:           e.pipelineConfig(name, body(25, 512, "x86_64", "EVT#")),
				ConfigPlanChecks: update,
				ConfigStateChecks: []statecheck.StateCheck{
					mappingKept.AddStateValue(accResource, tfjsonpath.New("event_source_mapping_uuid")),
					statecheck.ExpectKnownValue(accResource, tfjsonpath.New("relay").AtMapKey("batch_size"), knownvalue.Int64Exact(25)),
				},
				Check: func(*terraform.State) error {
					out, err := lambda.NewFromConfig(e.cfg).GetFunctionConfiguration(e.ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(name + "-relay")})
					if err != nil {
						return err
					}
					if aws.ToInt32(out.MemorySize) != 512 || out.Environment.Variables["OUTBOX_SORT_KEY_PREFIX"] != "EVT#" {
						return fmt.Errorf("the relay function was not updated: memory %d, env %v", aws.ToInt32(out.MemorySize), out.Environment.Variables)
					}
					return nil
				},
			},
			{
				Config:           e.pipelineConfig(name, body(25, 512, "arm64", "EVT#")),
				ConfigPlanChecks: update,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(accResource, tfjsonpath.New("relay_package_sha256"), knownvalue.StringExact(relaySHA(t, "arm64"))),
				},
			},
			{
				Config: e.pipelineConfig(e.name("upd2"), body(25, 512, "arm64", "EVT#")),
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionDestroyBeforeCreate),
				}},
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(accResource, tfjsonpath.New("table_name"), knownvalue.StringExact(e.name("upd2")+"-outbox")),
				},
			},
		},
	})
}

// TestAccPipeline_import imports a pipeline by name: the imported state
// matches, and a plan with an import block is empty.
func TestAccPipeline_import(t *testing.T) {
	e := newAccEnv(t)
	name := e.name("imp")
	var before map[string][]string
	if e.stack != nil {
		before = e.inventory()
	}
	config := e.pipelineConfig(name, `
  relay {
    architecture           = "x86_64"
    batch_size             = 50
    maximum_retry_attempts = 3
    log_retention_days     = 7
  }
  published {
    action   = "mark"
    ttl_days = 7
  }
  pending_index {
    shards = 8
  }
  dead_letter {
    message_retention_seconds = 86400
  }
  reconciler {
    enabled = false
  }
  tags = { team = "imports" }`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		CheckDestroy:             e.checkDestroy(name, before),
		Steps: []resource.TestStep{
			{Config: config},
			{
				Config:            config,
				ResourceName:      accResource,
				ImportState:       true,
				ImportStateId:     name,
				ImportStateVerify: true,
			},
			{
				Config:          config,
				ResourceName:    accResource,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateId:   name,
			},
			{
				// terraform plan -generate-config-out writes a
				// configuration that imports with no change.
				Config:          e.providerConfig(),
				ResourceName:    accResource,
				ImportState:     true,
				ImportStateKind: resource.ImportBlockWithID,
				ImportStateId:   name,
				GenerateConfig:  true,
			},
		},
	})
}

// TestAccPipeline_drift: components deleted out of band make the next
// plan an update that repairs them, after which delivery works again; a
// pipeline deleted entirely is planned for creation.
func TestAccPipeline_drift(t *testing.T) {
	e := newAccEnv(t)
	name := e.name("drift")
	orders := e.name("acc-orders")
	e.createAppTable(orders, "")
	s := e.newBusSink("com.example.orders")
	var before map[string][]string
	if e.stack != nil {
		before = e.inventory()
	}
	table := outbox.Table{Name: name + "-outbox"}
	config := e.pipelineConfig(name, fastRelay)
	lc := lambda.NewFromConfig(e.cfg)
	var mappingUUID string
	repair := resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
		plancheck.ExpectNonEmptyPlan(),
		plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionUpdate),
	}}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		CheckDestroy:             e.checkDestroy(name, before),
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: func(st *terraform.State) error {
					mappingUUID = stateAttr(st, "event_source_mapping_uuid")
					return e.deliver(s, table, orders, 1, 2, "items marked PUBLISHED", publishedWithTTL("expiresAt"))(st)
				},
			},
			{
				PreConfig: func() {
					if _, err := lc.DeleteEventSourceMapping(e.ctx, &lambda.DeleteEventSourceMappingInput{UUID: aws.String(mappingUUID)}); err != nil {
						t.Fatalf("deleting the mapping out of band: %v", err)
					}
					if err := accWait(e.ctx, "the mapping gone", func() error {
						_, err := lc.GetEventSourceMapping(e.ctx, &lambda.GetEventSourceMappingInput{UUID: aws.String(mappingUUID)})
						if err == nil {
							return fmt.Errorf("still there")
						}
						return nil
					}); err != nil {
						t.Fatal(err)
					}
				},
				Config:           config,
				ConfigPlanChecks: repair,
				ConfigStateChecks: []statecheck.StateCheck{
					statecheck.ExpectKnownValue(accResource, tfjsonpath.New("event_source_mapping_uuid"), knownvalue.NotNull()),
				},
				Check: resource.ComposeTestCheckFunc(
					func(st *terraform.State) error {
						if got := stateAttr(st, "event_source_mapping_uuid"); got == mappingUUID {
							return fmt.Errorf("the mapping was not recreated")
						}
						return nil
					},
					e.deliver(s, table, orders, 10, 2, "items marked PUBLISHED", publishedWithTTL("expiresAt")),
				),
			},
			{
				PreConfig: func() {
					if _, err := lc.DeleteFunction(e.ctx, &lambda.DeleteFunctionInput{FunctionName: aws.String(name + "-relay")}); err != nil {
						t.Fatalf("deleting the relay function out of band: %v", err)
					}
				},
				Config:           config,
				ConfigPlanChecks: repair,
				Check:            e.deliver(s, table, orders, 20, 2, "items marked PUBLISHED", publishedWithTTL("expiresAt")),
			},
			{
				// An empty plan once repaired.
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectEmptyPlan(),
				}},
			},
			{
				PreConfig: func() {
					c := provision.New(e.cfg, provision.RelayCode{Zip: relaypackage.Zip, SHA256: relaypackage.SHA256})
					_, st, err := c.Lookup(e.ctx, name)
					if err != nil {
						t.Fatalf("finding the pipeline: %v", err)
					}
					if _, err := c.Delete(e.ctx, st); err != nil {
						t.Fatalf("deleting the pipeline out of band: %v", err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: []plancheck.PlanCheck{
					plancheck.ExpectResourceAction(accResource, plancheck.ResourceActionCreate),
				}},
				Check: e.deliver(s, table, orders, 30, 2, "items marked PUBLISHED", publishedWithTTL("expiresAt")),
			},
		},
	})
}

// words turns a message into a pattern that tolerates Terraform's line
// wrapping of diagnostics.
func words(msg string) *regexp.Regexp {
	parts := strings.Fields(msg)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(strings.Join(parts, `\s+`))
}

// TestAccPipeline_invalid: bad configurations fail at plan, each with a
// message naming the attribute and the fix.
func TestAccPipeline_invalid(t *testing.T) {
	e := newAccEnv(t)
	cases := []struct {
		name, body, want string
	}{
		{"bad name!", ``, `name "bad name!" has characters that Lambda and IAM names do not allow: use letters, digits`},
		{strings.Repeat("n", 60), ``, `name is 60 characters long: use at most 53 characters`},
		{"p", `relay { batch_size = 0 }`, `Attribute relay.batch_size value must be between 1 and 10000, got: 0`},
		{"p", `relay { batching_window_seconds = 301 }`, `Attribute relay.batching_window_seconds value must be between 0 and 300, got: 301`},
		{"p", `relay { parallelization_factor = 11 }`, `Attribute relay.parallelization_factor value must be between 1 and 10, got: 11`},
		{"p", `relay { maximum_retry_attempts = -2 }`, `Attribute relay.maximum_retry_attempts value must be between -1 and 10000, got: -2`},
		{"p", `relay { maximum_record_age_seconds = 30 }`, `value must be between 60 and 604800, got: 30`},
		{"p", `relay { memory_size = 64 }`, `Attribute relay.memory_size value must be between 128 and 10240, got: 64`},
		{"p", `relay { timeout = 901 }`, `Attribute relay.timeout value must be between 1 and 900, got: 901`},
		{"p", `relay { architecture = "sparc" }`, `Attribute relay.architecture value must be one of: ["arm64" "x86_64"], got: "sparc"`},
		{"p", `relay { log_retention_days = 2 }`, `Attribute relay.log_retention_days value must be one of: ["1" "3" "5" "7" "14"`},
		{"p", `published { action = "archive" }`, `Attribute published.action value must be one of: ["mark" "delete"], got: "archive"`},
		{"p", `published { ttl_days = -1 }`, `Attribute published.ttl_days value must be at least 0, got: -1`},
		{"p", `pending_index { shards = 300 }`, `Attribute pending_index.shards value must be between 1 and 256, got: 300`},
		{"p", `reconciler { schedule_expression = "every 5 minutes" }`, `reconciler.schedule_expression "every 5 minutes" is neither a rate, a cron nor an at expression: use "rate(5 minutes)"`},
		{"p", `reconciler { schedule_expression = "rate(1 minute)" }`, `reconciler.schedule_expression is "rate(1 minute)", every 60 seconds, shorter than the reconciler's timeout (300 seconds): a run could start before the previous one ends: use an interval of at least the timeout, such as "rate(5 minutes)", or lower the reconciler's timeout to at most 60 seconds`},
		{"p", `reconciler { min_age_seconds = 0 }`, `Attribute reconciler.min_age_seconds value must be at least 1, got: 0`},
		{"p", `reconciler { min_age_seconds = -5 }`, `Attribute reconciler.min_age_seconds value must be at least 1, got: -5`},
		{"p", `table { name = "" }`, `table.name is empty: remove it to use the default, or set a value`},
		{"p", `pending_index { shards = 0 }`, `Attribute pending_index.shards value must be between 1 and 256, got: 0`},
		{"p", `dead_letter { message_retention_seconds = 30 }`, `Attribute dead_letter.message_retention_seconds value must be between 60 and 1209600, got: 30`},
		{"p", `relay { tracing_mode = "On" }`, `Attribute relay.tracing_mode value must be one of: ["PassThrough" "Active"], got: "On"`},
		{"p", `relay {
    logging { application_log_level = "DEBUG" }
  }`, `relay.logging.application_log_level is set with the Text log format: set the log format to "JSON"`},
		{"p", `relay {
    vpc_config { subnet_ids = ["subnet-0a1"] }
  }`, `relay.vpc_config.subnet_ids has 1 subnets and 0 security groups: set both subnet_ids and security_group_ids, or neither`},
		{"p", `iam { path = "outbox" }`, `iam.path is "outbox": use a path that begins and ends with "/"`},
		{"p", `iam { permissions_boundary = "boundary" }`, `iam.permissions_boundary is "boundary": use the ARN of a managed policy`},
		{"p", `reconciler { schedule_timezone = "Mars/Olympus" }`, `reconciler.schedule_timezone is "Mars/Olympus": use an IANA time zone`},
		{"p", `reconciler { flexible_time_window_minutes = 1441 }`, `Attribute reconciler.flexible_time_window_minutes value must be between 0 and 1440, got: 1441`},
		{"p", `table {
    existing    = true
    name        = "app"
    kms_key_arn = "arn:aws:kms:us-east-1:123456789012:key/abc"
  }`, `table.kms_key_arn is set for an adopted table: remove it`},
		{"p", `target {
    event_bus = "orders"
    topic_arn = "arn:aws:sns:us-east-1:123456789012:orders"
  }`, `Attribute "target.topic_arn" cannot be specified when "target.event_bus" is specified`},
		{"p", `target { topic_arn = "arn:aws:sns:us-east-1:123456789012:orders.fifo" }`, `target.topic_arn is a FIFO topic: use a standard topic`},
		{"p", `target { topic_arn = "orders" }`, `target.topic_arn is "orders": use an ARN such as`},
		{"p", `target { event_bus = "bad bus" }`, `target.event_bus is "bad bus": use a bus name such as "default" or an event bus ARN`},
		{"p", `table { existing = true }`, `table.name is required with table.existing = true: name the existing table to adopt`},
		{"p", `table {
    partition_key = "id"
    sort_key      = "id"
  }`, `table.sort_key equals table.partition_key: use two different key attribute names`},
		{"p", `table { sort_key_prefix = " " }`, `table.sort_key_prefix is blank`},
		{"p", `tags = { "aws:owner" = "me" }`, `tags has the key "aws:owner": remove the key: the "aws:" prefix is reserved by AWS`},
		{"p", `alarms { relay_errors_threshold = 0 }`, `Attribute alarms.relay_errors_threshold value must be at least 1, got: 0`},
		{"p", `alarms { sns_topic_arn = "alerts" }`, `alarms.sns_topic_arn is "alerts": use an SNS topic ARN such as`},
		{"p", `alarms { iterator_age_threshold_seconds = 90000 }`, `Attribute alarms.iterator_age_threshold_seconds value must be between 1 and 86400, got: 90000`},
		{"p", `alarms { treat_missing_data = "ok" }`, `Attribute alarms.treat_missing_data value must be one of: ["breaching" "notBreaching" "ignore" "missing"], got: "ok"`},
		{"p", `alarms { oldest_pending_age_threshold_seconds = 120 }`, `alarms.oldest_pending_age_threshold_seconds is 120: use more than the reconciler's min age (300 seconds)`},
		{"p", `relay { timeout = 1.5 }`, `relay.timeout is 1.5: it must be a whole number, such as 1 or 2`},
		{"p", `relay { reserved_concurrency = 0 }`, `Attribute relay.reserved_concurrency value must be at least 1, got: 0`},
		{"p", `reconciler { schedule_expression = "rate(1 minutes)" }`, `reconciler.schedule_expression "rate(1 minutes)" has a plural unit for a value of 1: write "rate(1 minute)"`},
		{"p", `reconciler { schedule_expression = "rate(10 minute)" }`, `reconciler.schedule_expression "rate(10 minute)" has a singular unit for a value other than 1: write "rate(10 minutes)"`},
		{"p", `reconciler { schedule_expression = "cron(0 * * * *)" }`, `reconciler.schedule_expression "cron(0 * * * *)" has 5 fields: use the six fields`},
		{"p", `reconciler { schedule_expression = "cron(0 25 * * ? *)" }`, `reconciler.schedule_expression "cron(0 25 * * ? *)" has "25" in the hours field: use 0 to 23`},
		{"p", `table { ttl_attribute = "PK" }`, `table.ttl_attribute "PK" is a key attribute of the table: use an attribute that is not a key`},
		// Every invalid value is reported at once: both of these.
		{"p", `relay {
    batch_size  = 0
    memory_size = 64
  }`, `relay.batch_size value must be between 1 and 10000`},
		{"p", `relay {
    batch_size  = 0
    memory_size = 64
  }`, `relay.memory_size value must be between 128 and 10240`},
		{"p", `alarms { evaluation_periods = 2000 }`, `alarms.evaluation_periods is 2000: use 1 to 1440 one-minute periods`},
	}
	var steps []resource.TestStep
	for _, c := range cases {
		steps = append(steps, resource.TestStep{
			Config:      e.pipelineConfig(c.name, "  "+c.body),
			PlanOnly:    true,
			ExpectError: words(c.want),
		})
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps:                    steps,
	})
}

// A check that compares two settings waits for apply when one of them is
// known only then: here the reconciler's timeout comes from another
// resource, so a short schedule cannot be judged at plan time.
func TestAccPipeline_unknownAtPlan(t *testing.T) {
	e := newAccEnv(t)
	config := e.providerConfig() + `
resource "terraform_data" "timeout" {
  input = 50
}

resource "outbox_pipeline" "test" {
  name = "p"
  reconciler {
    schedule_expression = "rate(1 minute)"
    timeout             = terraform_data.timeout.output
  }
  alarms {
    oldest_pending_age_threshold_seconds = 120
  }
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: e.factories(),
		Steps: []resource.TestStep{{
			Config:             strings.Replace(config, "  alarms {\n    oldest_pending_age_threshold_seconds = 120\n  }\n", "", 1),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}, {
			// With the timeout known, a conflict is reported at plan.
			Config:      strings.Replace(config, "terraform_data.timeout.output", "50", 1),
			PlanOnly:    true,
			ExpectError: words(`alarms.oldest_pending_age_threshold_seconds is 120: use more than the reconciler's min age (300 seconds)`),
		}},
	})
}
