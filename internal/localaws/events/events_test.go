package events_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/events"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambdatest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/sqs"
)

type env struct {
	stack  *localaws.Stack
	eb     *eventbridge.Client
	sqs    *awssqs.Client
	lambda *lambdatest.RecordingInvoker
	ctl    *control.Client
}

func start(t *testing.T) env {
	t.Helper()
	stack := localawstest.StartEmpty(t)
	q := sqs.New(stack.Env())
	fl := &lambdatest.RecordingInvoker{}
	svc := events.New(stack.Env(), events.Deps{
		Queues:    func() (events.QueueSink, error) { return q, nil },
		Functions: func() (events.FunctionInvoker, error) { return fl, nil },
	})
	localawstest.Serve(t, stack, q, svc)
	cfg := localawstest.Config(stack)
	return env{stack, eventbridge.NewFromConfig(cfg), awssqs.NewFromConfig(cfg), fl, localawstest.Control(stack)}
}

func TestBusesAndRules(t *testing.T) {
	t.Parallel()
	e := start(t)
	ctx := context.Background()
	created, err := e.eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String("orders"), Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("a")}}})
	if err != nil || *created.EventBusArn != "arn:aws:events:us-east-1:000000000000:event-bus/orders" {
		t.Fatalf("CreateEventBus %v %v", created, err)
	}
	_, err = e.eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String("orders")})
	localawstest.WantError[*types.ResourceAlreadyExistsException](t, err, "duplicate bus")
	desc, err := e.eb.DescribeEventBus(ctx, &eventbridge.DescribeEventBusInput{Name: aws.String("orders")})
	if err != nil || *desc.Name != "orders" || desc.CreationTime == nil {
		t.Fatalf("DescribeEventBus %v %v", desc, err)
	}
	list, err := e.eb.ListEventBuses(ctx, &eventbridge.ListEventBusesInput{})
	if err != nil || len(list.EventBuses) != 2 {
		t.Fatalf("ListEventBuses %v %v", list, err)
	}
	tags, err := e.eb.ListTagsForResource(ctx, &eventbridge.ListTagsForResourceInput{ResourceARN: created.EventBusArn})
	if err != nil || len(tags.Tags) != 1 || *tags.Tags[0].Value != "a" {
		t.Fatalf("bus tags %v %v", tags, err)
	}

	_, err = e.eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("bad"), EventPattern: aws.String(`{"source":"x"}`)})
	localawstest.WantErrorMessage[*types.InvalidEventPatternException](t, err, "invalid pattern", "Event pattern is not valid")
	rule, err := e.eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("r1"), EventBusName: aws.String("orders"),
		EventPattern: aws.String(`{"source":["shop"]}`), Description: aws.String("d")})
	if err != nil || *rule.RuleArn != "arn:aws:events:us-east-1:000000000000:rule/orders/r1" {
		t.Fatalf("PutRule %v %v", rule, err)
	}
	if _, err := e.eb.DisableRule(ctx, &eventbridge.DisableRuleInput{Name: aws.String("r1"), EventBusName: aws.String("orders")}); err != nil {
		t.Fatal(err)
	}
	dr, err := e.eb.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: aws.String("r1"), EventBusName: aws.String("orders")})
	if err != nil || dr.State != types.RuleStateDisabled || *dr.EventPattern != `{"source":["shop"]}` || *dr.EventBusName != "orders" {
		t.Fatalf("DescribeRule %+v %v", dr, err)
	}
	_, err = e.eb.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: aws.String("r1")})
	localawstest.WantError[*types.ResourceNotFoundException](t, err, "rule on the default bus")
	rules, err := e.eb.ListRules(ctx, &eventbridge.ListRulesInput{EventBusName: aws.String("orders")})
	if err != nil || len(rules.Rules) != 1 {
		t.Fatalf("ListRules %v %v", rules, err)
	}
	pt, err := e.eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("r1"), EventBusName: aws.String("orders"), Targets: []types.Target{
		{Id: aws.String("q"), Arn: aws.String("arn:aws:sqs:us-east-1:000000000000:q"), InputPath: aws.String("$.detail")},
		{Id: aws.String("bad id!"), Arn: aws.String("arn:aws:sqs:us-east-1:000000000000:q")},
	}})
	if err != nil || pt.FailedEntryCount != 1 || *pt.FailedEntries[0].TargetId != "bad id!" {
		t.Fatalf("PutTargets %+v %v", pt, err)
	}
	_, err = e.eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String("r1"), EventBusName: aws.String("orders")})
	localawstest.WantCode(t, err, "ValidationException", "delete rule with targets")
	targets, err := e.eb.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: aws.String("r1"), EventBusName: aws.String("orders")})
	if err != nil || len(targets.Targets) != 1 || *targets.Targets[0].InputPath != "$.detail" {
		t.Fatalf("ListTargetsByRule %+v %v", targets, err)
	}
	if _, err := e.eb.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String("r1"), EventBusName: aws.String("orders"), Ids: []string{"q"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String("r1"), EventBusName: aws.String("orders")}); err != nil {
		t.Fatal(err)
	}
	_, err = e.eb.DeleteEventBus(ctx, &eventbridge.DeleteEventBusInput{Name: aws.String("default")})
	localawstest.WantCode(t, err, "ValidationException", "delete default bus")
	if _, err := e.eb.DeleteEventBus(ctx, &eventbridge.DeleteEventBusInput{Name: aws.String("orders")}); err != nil {
		t.Fatal(err)
	}
}

func TestPutEventsPerEntryResults(t *testing.T) {
	t.Parallel()
	e := start(t)
	ctx := context.Background()
	entry := func(src, dt, detail, bus string) types.PutEventsRequestEntry {
		en := types.PutEventsRequestEntry{}
		if src != "" {
			en.Source = aws.String(src)
		}
		if dt != "" {
			en.DetailType = aws.String(dt)
		}
		if detail != "" {
			en.Detail = aws.String(detail)
		}
		if bus != "" {
			en.EventBusName = aws.String(bus)
		}
		return en
	}
	out, err := e.eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{
		entry("shop", "A", `{"a":1}`, ""),
		entry("", "A", `{"a":1}`, ""),
		entry("shop", "A", `[1,2]`, ""),
		entry("shop", "A", `{"a":1}`, "nope"),
		entry("shop", "", `{"a":1}`, ""),
		entry("shop", "A", `{"a":`+`"`+strings.Repeat("x", events.MaxEntrySize)+`"}`, ""),
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"", "InvalidArgument", "MalformedDetail", "ResourceNotFoundException", "InvalidArgument", "InvalidArgument"}
	if out.FailedEntryCount != 5 || len(out.Entries) != len(want) {
		t.Fatalf("FailedEntryCount %d, %d entries", out.FailedEntryCount, len(out.Entries))
	}
	for i, w := range want {
		got := aws.ToString(out.Entries[i].ErrorCode)
		if got != w || (w == "") != (out.Entries[i].EventId != nil) || (w != "" && aws.ToString(out.Entries[i].ErrorMessage) == "") {
			t.Errorf("entry %d: code %q id %v, want %q", i, got, out.Entries[i].EventId, w)
		}
	}
	// 1 MB since 2026: an entry of 900 KB is accepted; two of 600 KB in
	// one call are over the request's total.
	out, err = e.eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{entry("shop", "A", `{"a":"`+strings.Repeat("x", 900*1024)+`"}`, "")}})
	if err != nil || out.FailedEntryCount != 0 {
		t.Fatalf("a 900 KB entry: %+v %v", out, err)
	}
	half := entry("shop", "A", `{"a":"`+strings.Repeat("x", 600*1024)+`"}`, "")
	_, err = e.eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{half, half}})
	localawstest.WantCode(t, err, "ValidationException", "Total size")
	many := make([]types.PutEventsRequestEntry, 11)
	for i := range many {
		many[i] = entry("shop", "A", `{}`, "")
	}
	_, err = e.eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: many})
	localawstest.WantCode(t, err, "ValidationException", "11 entries")
	// Injected per-entry faults.
	if _, err := e.ctl.AddFault(ctx, control.FaultRule{Service: "events", Operation: "PutEvents", Code: "ThrottlingException", Entry: true, Count: 1}); err != nil {
		t.Fatal(err)
	}
	out, err = e.eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{entry("shop", "A", `{}`, ""), entry("shop", "A", `{}`, "")}})
	if err != nil || out.FailedEntryCount != 1 || aws.ToString(out.Entries[0].ErrorCode) != "ThrottlingException" || out.Entries[1].EventId == nil {
		t.Fatalf("entry fault: %+v %v", out, err)
	}
}

func receiveOne(t *testing.T, c *awssqs.Client, url string, wait int32) *string {
	t.Helper()
	out, err := c.ReceiveMessage(context.Background(), &awssqs.ReceiveMessageInput{QueueUrl: aws.String(url), WaitTimeSeconds: wait})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) == 0 {
		return nil
	}
	return out.Messages[0].Body
}

func waitMetrics(t *testing.T, e env, ruleArn string, ok func(control.RuleMetrics) bool) control.RuleMetrics {
	t.Helper()
	var m control.RuleMetrics
	localawstest.EventuallyState(t, 10*time.Second, "the metrics of "+ruleArn, func() (bool, string) {
		all, err := e.ctl.EventsMetrics(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		m = all[ruleArn]
		return ok(m), fmt.Sprintf("%+v", m)
	})
	return m
}

func TestRuleToSQSAllowedAndDenied(t *testing.T) {
	t.Parallel()
	e := start(t)
	ctx := context.Background()
	mk := func(name string) (string, string) {
		q, err := e.sqs.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		return *q.QueueUrl, "arn:aws:sqs:us-east-1:000000000000:" + name
	}
	allowedURL, allowedArn := mk("allowed")
	deniedURL, deniedArn := mk("denied")
	rule, err := e.eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("orders"), EventPattern: aws.String(`{"source":["shop"],"detail":{"total":[{"numeric":[">",10]}]}}`)})
	if err != nil {
		t.Fatal(err)
	}
	policy := localawstest.SendMessagePolicy("events.amazonaws.com", allowedArn, *rule.RuleArn)
	if _, err := e.sqs.SetQueueAttributes(ctx, &awssqs.SetQueueAttributesInput{QueueUrl: aws.String(allowedURL), Attributes: map[string]string{"Policy": policy}}); err != nil {
		t.Fatal(err)
	}
	// The denied queue's policy names another rule.
	other := strings.ReplaceAll(policy, allowedArn, deniedArn)
	other = strings.ReplaceAll(other, *rule.RuleArn, *rule.RuleArn+"-other")
	if _, err := e.sqs.SetQueueAttributes(ctx, &awssqs.SetQueueAttributesInput{QueueUrl: aws.String(deniedURL), Attributes: map[string]string{"Policy": other}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("orders"), Targets: []types.Target{
		{Id: aws.String("a"), Arn: aws.String(allowedArn)}, {Id: aws.String("d"), Arn: aws.String(deniedArn)}}}); err != nil {
		t.Fatal(err)
	}
	when := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	out, err := e.eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{
		{Source: aws.String("shop"), DetailType: aws.String("OrderPlaced"), Detail: aws.String(`{"total":5}`)},
		{Source: aws.String("shop"), DetailType: aws.String("OrderPlaced"), Detail: aws.String(`{"total":42}`), Time: aws.Time(when),
			Resources: []string{"arn:aws:dynamodb:us-east-1:000000000000:table/orders"}},
	}})
	if err != nil || out.FailedEntryCount != 0 {
		t.Fatalf("PutEvents %+v %v", out, err)
	}
	body := receiveOne(t, e.sqs, allowedURL, 10)
	if body == nil {
		t.Fatal("no event delivered to the allowed queue")
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(*body), &ev); err != nil {
		t.Fatal(err)
	}
	if ev["version"] != "0" || ev["id"] != *out.Entries[1].EventId || ev["detail-type"] != "OrderPlaced" || ev["source"] != "shop" ||
		ev["account"] != "000000000000" || ev["region"] != "us-east-1" || ev["time"] != "2024-05-06T07:08:09Z" {
		t.Fatalf("envelope %s", *body)
	}
	if res, _ := ev["resources"].([]any); len(res) != 1 || res[0] != "arn:aws:dynamodb:us-east-1:000000000000:table/orders" {
		t.Fatalf("resources %v", ev["resources"])
	}
	if d, _ := ev["detail"].(map[string]any); d["total"] != 42.0 {
		t.Fatalf("detail %v", ev["detail"])
	}
	m := waitMetrics(t, e, *rule.RuleArn, func(m control.RuleMetrics) bool { return m.Invocations == 2 })
	if m.MatchedEvents != 1 || m.FailedInvocations != 1 {
		t.Fatalf("metrics %+v", m)
	}
	if b := receiveOne(t, e.sqs, deniedURL, 0); b != nil {
		t.Fatalf("event delivered to the queue whose policy does not allow the rule: %s", *b)
	}
	if b := receiveOne(t, e.sqs, allowedURL, 0); b != nil {
		t.Fatalf("non-matching event delivered: %s", *b)
	}
}

func TestRuleToLambdaAndInput(t *testing.T) {
	t.Parallel()
	e := start(t)
	ctx := context.Background()
	fn := "arn:aws:lambda:us-east-1:000000000000:function:relay"
	rule, err := e.eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("to-fn"), EventPattern: aws.String(`{"detail-type":[{"prefix":"Order"}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("to-fn"), Targets: []types.Target{
		{Id: aws.String("f"), Arn: aws.String(fn), Input: aws.String(`{"fixed":true}`)}}}); err != nil {
		t.Fatal(err)
	}
	put := func() {
		if _, err := e.eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{
			{Source: aws.String("shop"), DetailType: aws.String("OrderPlaced"), Detail: aws.String(`{}`)}}}); err != nil {
			t.Fatal(err)
		}
	}
	// No resource policy: the invocation fails silently.
	put()
	waitMetrics(t, e, *rule.RuleArn, func(m control.RuleMetrics) bool { return m.FailedInvocations == 1 })
	if len(e.lambda.Invocations()) != 0 {
		t.Fatal("function invoked without a resource policy")
	}
	e.lambda.SetPolicy(fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"events.amazonaws.com"},"Action":"lambda:InvokeFunction","Resource":"%s","Condition":{"ArnLike":{"AWS:SourceArn":"%s"}}}]}`, fn, *rule.RuleArn))
	put()
	waitMetrics(t, e, *rule.RuleArn, func(m control.RuleMetrics) bool { return m.Invocations == 2 })
	if calls := e.lambda.Invocations(); len(calls) != 1 || calls[0].Payload != `{"fixed":true}` {
		t.Fatalf("invocations %+v", calls)
	}
	// A disabled rule matches nothing.
	if _, err := e.eb.DisableRule(ctx, &eventbridge.DisableRuleInput{Name: aws.String("to-fn")}); err != nil {
		t.Fatal(err)
	}
	put()
	m := waitMetrics(t, e, *rule.RuleArn, func(control.RuleMetrics) bool { return true })
	if m.MatchedEvents != 2 {
		t.Fatalf("disabled rule matched: %+v", m)
	}
}

// TestRuleToFIFOQueue delivers to FIFO queue targets: PutTargets requires
// SqsParameters of one, before it looks the rule up; the messages take its
// MessageGroupId as their group and their body's SHA-256 as their
// deduplication id, so a queue without ContentBasedDeduplication fails the
// delivery.
func TestRuleToFIFOQueue(t *testing.T) {
	t.Parallel()
	e := start(t)
	ctx := context.Background()
	urls := map[string]*string{}
	for name, cbd := range map[string]string{"ordered.fifo": "true", "nocbd.fifo": "false"} {
		arn := "arn:aws:sqs:us-east-1:000000000000:" + name
		policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"events.amazonaws.com"},"Action":"sqs:SendMessage","Resource":"` + arn + `"}]}`
		q, err := e.sqs.CreateQueue(ctx, &awssqs.CreateQueueInput{QueueName: aws.String(name),
			Attributes: map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": cbd, "Policy": policy}})
		if err != nil {
			t.Fatal(err)
		}
		urls[name] = q.QueueUrl
	}
	rule, err := e.eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("fifo"), EventPattern: aws.String(`{"source":["shop"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	target := func(id, queue string, p *types.SqsParameters) types.Target {
		return types.Target{Id: aws.String(id), Arn: aws.String("arn:aws:sqs:us-east-1:000000000000:" + queue), SqsParameters: p}
	}
	orders := &types.SqsParameters{MessageGroupId: aws.String("orders")}
	for _, c := range []struct {
		rule    string
		targets []types.Target
		want    string
	}{
		{"missing", []types.Target{target("a", "ordered.fifo", nil)}, "Parameter(s) SqsParameters must be specified for target: a."},
		{"fifo", []types.Target{target("a", "ordered.fifo", orders), target("n", "nocbd.fifo", nil)}, "Parameter(s) SqsParameters must be specified for target: n."},
		{"fifo", []types.Target{target("a", "ordered.fifo", &types.SqsParameters{MessageGroupId: aws.String(strings.Repeat("g", 101))})},
			"at 'targets.1.member.sqsParameters.messageGroupId' failed to satisfy constraint: Member must have length less than or equal to 100"},
	} {
		_, err := e.eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(c.rule), Targets: c.targets})
		if localawstest.ErrorCode(err) != "ValidationException" || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("PutTargets to rule %s: %v, want ValidationException %q", c.rule, err, c.want)
		}
	}
	pt, err := e.eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("fifo"), Targets: []types.Target{
		target("a", "ordered.fifo", orders), target("n", "nocbd.fifo", orders)}})
	if err != nil || pt.FailedEntryCount != 0 {
		t.Fatalf("PutTargets %+v %v", pt, err)
	}
	lt, err := e.eb.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: aws.String("fifo")})
	if err != nil || len(lt.Targets) != 2 || aws.ToString(lt.Targets[0].SqsParameters.MessageGroupId) != "orders" {
		t.Fatalf("ListTargetsByRule %+v %v", lt, err)
	}
	entry := types.PutEventsRequestEntry{Source: aws.String("shop"), DetailType: aws.String("OrderPlaced"), Detail: aws.String(`{"n":1}`)}
	if out, err := e.eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{entry, entry}}); err != nil || out.FailedEntryCount != 0 {
		t.Fatalf("PutEvents %+v %v", out, err)
	}
	m := waitMetrics(t, e, *rule.RuleArn, func(m control.RuleMetrics) bool { return m.Invocations == 4 })
	if m.FailedInvocations != 2 {
		t.Fatalf("metrics %+v, want the two deliveries to the queue without ContentBasedDeduplication failed", m)
	}
	out, err := e.sqs.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{QueueUrl: urls["ordered.fifo"], MaxNumberOfMessages: 10,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
	if err != nil || len(out.Messages) != 2 {
		t.Fatalf("ReceiveMessage %+v %v, want both events", out, err)
	}
	for _, msg := range out.Messages {
		sum := sha256.Sum256([]byte(aws.ToString(msg.Body)))
		if msg.Attributes["MessageGroupId"] != "orders" || msg.Attributes["MessageDeduplicationId"] != hex.EncodeToString(sum[:]) {
			t.Fatalf("message %s has attributes %v", aws.ToString(msg.Body), msg.Attributes)
		}
	}
	if b := receiveOne(t, e.sqs, *urls["nocbd.fifo"], 0); b != nil {
		t.Fatalf("event delivered to the queue without ContentBasedDeduplication: %s", *b)
	}
}
