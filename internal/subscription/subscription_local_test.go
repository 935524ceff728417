package subscription

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/outboxkit/terraform-provider-outbox/internal/component/componenttest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

// deadline bounds every asynchronous condition of these tests.
const deadline = time.Minute

func startStack(t *testing.T) (*localaws.Stack, *Provisioner, context.Context) {
	t.Helper()
	stack, ctx := componenttest.Start(t, "sqs", "events", "dynamodb")
	c := New(localawstest.Config(stack))
	c.WaitTimeout, c.PollInterval = componenttest.WaitTimeout, componenttest.PollInterval
	return stack, c, ctx
}

// must makes the Provisioner's calls, failing the test on an error.
var must componenttest.Must[Spec, State]

// publish puts one event on bus per detail type.
func publish(t *testing.T, ctx context.Context, c *Provisioner, bus, source string, detailTypes ...string) {
	t.Helper()
	var entries []ebtypes.PutEventsRequestEntry
	for _, dt := range detailTypes {
		entries = append(entries, ebtypes.PutEventsRequestEntry{
			EventBusName: aws.String(bus), Source: aws.String(source), DetailType: aws.String(dt), Detail: aws.String(`{"n":1}`),
		})
	}
	out, err := c.Events.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
	if err != nil || out.FailedEntryCount != 0 {
		t.Fatalf("PutEvents: %v (%d failed)", err, out.FailedEntryCount)
	}
}

// receive waits until the queue has delivered n events, and returns their
// detail types; it fails on more.
func receive(t *testing.T, ctx context.Context, c *Provisioner, url string, n int) []string {
	t.Helper()
	var got []string
	end := time.Now().Add(deadline)
	for len(got) < n {
		if time.Now().After(end) {
			t.Fatalf("received %v from %s within %s, want %d events", got, url, deadline, n)
		}
		out, err := c.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			var ev struct {
				DetailType string `json:"detail-type"`
			}
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &ev); err != nil {
				t.Fatalf("message %s: %v", aws.ToString(m.Body), err)
			}
			got = append(got, ev.DetailType)
			if _, err := c.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(got) > n {
		t.Fatalf("received %v, want %d events", got, n)
	}
	slices.Sort(got)
	return got
}

// TestSubscriptionLocalLifecycle: create on a custom bus, deliver only the
// matching events, repair a rule deleted out of band, update in place, look
// up for import, delete without leftovers.
func TestSubscriptionLocalLifecycle(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t)
	bus, err := c.Events.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String("orders")})
	if err != nil {
		t.Fatal(err)
	}
	before := componenttest.Inventory(t, ctx, stack)

	spec := Spec{
		Name: "billing", EventBus: aws.ToString(bus.EventBusArn),
		Sources: []string{"com.example.orders"}, DetailTypes: []string{"OrderPlaced"},
		Tags: map[string]string{"team": "billing"},
	}
	st := must.Create(t, ctx, c, spec)
	if want, _ := RuleARN(st.QueueARN, "orders", "billing"); st.RuleARN != want || st.EventBusName != "orders" {
		t.Errorf("rule %s on bus %s, want %s on orders", st.RuleARN, st.EventBusName, want)
	}
	if _, d := must.Read(t, ctx, c, spec, st); !d.None() {
		t.Errorf("drift right after Create: %s", d)
	}
	checkQueueAndDelivery(t, ctx, c, st)

	// The rule deleted out of band: drift, then repair.
	if _, err := c.Events.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String("billing"), EventBusName: aws.String("orders"), Ids: []string{TargetID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Events.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String("billing"), EventBusName: aws.String("orders")}); err != nil {
		t.Fatal(err)
	}
	observed, d := must.Read(t, ctx, c, spec, st)
	if observed.RuleARN != "" || !slices.Contains(d.Missing, ComponentRule) || !slices.Contains(d.Missing, ComponentTarget) {
		t.Errorf("Read after the rule's deletion: rule %q, drift %s", observed.RuleARN, d)
	}
	st = must.Update(t, ctx, c, spec, observed, "Update repairing the rule")
	if _, d := must.Read(t, ctx, c, spec, st); !d.None() {
		t.Errorf("drift after the repair: %s", d)
	}
	publish(t, ctx, c, "orders", "com.example.orders", "OrderPlaced")
	receive(t, ctx, c, st.QueueURL, 1)

	// A policy changed out of band is drift too.
	if _, err := c.SQS.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(st.QueueURL), Attributes: map[string]string{attrPolicy: QueuePolicy(st.QueueARN, "arn:aws:events:us-east-1:000000000000:rule/other").JSON()}}); err != nil {
		t.Fatal(err)
	}
	if _, d := must.Read(t, ctx, c, spec, st); len(d.Changed) != 1 || d.Changed[0].Component != ComponentQueuePolicy {
		t.Errorf("drift of a changed policy: %s", d)
	}

	// Update in place: pattern, queue settings, tags.
	vt := int32(60)
	spec2 := spec
	spec2.Sources, spec2.DetailTypes = nil, nil
	spec2.EventPattern = `{"source": ["com.example.orders"], "detail-type": ["OrderCancelled"]}`
	spec2.Queue = QueueSpec{VisibilityTimeoutSeconds: &vt, ReceiveWaitTimeSeconds: 5, MaxReceiveCount: 3}
	spec2.Tags = map[string]string{"team": "finance"}
	st2 := must.Update(t, ctx, c, spec2, st, "Update")
	if st2 != st {
		t.Errorf("Update in place changed identifiers: %+v -> %+v", st, st2)
	}
	if _, d := must.Read(t, ctx, c, spec2, st2); !d.None() {
		t.Errorf("drift after Update: %s", d)
	}
	publish(t, ctx, c, "orders", "com.example.orders", "OrderPlaced", "OrderCancelled")
	if got := receive(t, ctx, c, st.QueueURL, 1); !slices.Equal(got, []string{"OrderCancelled"}) {
		t.Errorf("received %v after the update, want only OrderCancelled", got)
	}

	checkLookupAndDelete(t, ctx, stack, c, before, spec2, st2)
}

// checkQueueAndDelivery checks the queue's redrive and policy, and that
// only the matching events arrive.
func checkQueueAndDelivery(t *testing.T, ctx context.Context, c *Provisioner, st State) {
	t.Helper()
	attrs, err := c.queue(ctx, st.QueueURL)
	if err != nil {
		t.Fatal(err)
	}
	if rp, _ := parseRedrive(attrs[attrRedrivePolicy]); rp.DeadLetterTargetARN != st.DeadLetterQueueARN || rp.MaxReceiveCount != DefaultMaxReceiveCount {
		t.Errorf("redrive policy %s, want the dead-letter queue %s after 5 receives", attrs[attrRedrivePolicy], st.DeadLetterQueueARN)
	}
	if RuleARNOfPolicy(attrs[attrPolicy]) != st.RuleARN {
		t.Errorf("the queue policy lets %q send, want the rule %s", RuleARNOfPolicy(attrs[attrPolicy]), st.RuleARN)
	}

	publish(t, ctx, c, "orders", "com.example.orders", "OrderPlaced", "OrderCancelled")
	publish(t, ctx, c, "orders", "com.example.other", "OrderPlaced")
	if got := receive(t, ctx, c, st.QueueURL, 1); !slices.Equal(got, []string{"OrderPlaced"}) {
		t.Errorf("received %v, want only OrderPlaced", got)
	}
}

// checkLookupAndDelete looks up the subscription, for import, then deletes
// it without leftovers.
func checkLookupAndDelete(t *testing.T, ctx context.Context, stack *localaws.Stack, c *Provisioner, before map[string][]string, spec2 Spec, st2 State) {
	t.Helper()
	// Lookup, for import.
	found, fst, err := c.Lookup(ctx, "billing")
	if err != nil {
		t.Fatalf("Lookup: %v", err)
	}
	if fst != st2 {
		t.Errorf("Lookup state %+v, want %+v", fst, st2)
	}
	if found.EventBus != "orders" || !SameJSON(found.EventPattern, spec2.EventPattern) || *found.Queue.VisibilityTimeoutSeconds != 60 ||
		found.Queue.ReceiveWaitTimeSeconds != 5 || found.Queue.MaxReceiveCount != 3 || !maps.Equal(found.Tags, spec2.Tags) {
		t.Errorf("Lookup spec %+v", found)
	}
	if _, _, err := c.Lookup(ctx, "nothing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Lookup of a missing subscription: %v, want ErrNotFound", err)
	}

	rest, err := c.Delete(ctx, st2)
	if err != nil || rest.Exists() {
		t.Fatalf("Delete: %v, left %+v", err, rest)
	}
	componenttest.CheckInventory(t, ctx, stack, before, "Delete")
	if _, _, err := c.Read(ctx, spec2, st2); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read after Delete: %v, want ErrNotFound", err)
	}
	if _, err := c.Delete(ctx, st2); err != nil {
		t.Errorf("a second Delete fails: %v", err)
	}
}

// TestSubscriptionLocalCreateCleansUp: a failing step removes what was
// created; SQS's refusal of a recently deleted name is waited out.
func TestSubscriptionLocalCreateCleansUp(t *testing.T) {
	t.Parallel()
	stack, c, ctx := startStack(t)
	ctl := localawstest.Control(stack)
	before := componenttest.Inventory(t, ctx, stack)
	spec := Spec{Name: "audit", DetailTypes: []string{"OrderPlaced"}}

	if _, err := ctl.AddFault(ctx, control.FaultRule{Service: "events", Operation: "PutTargets", Count: 1, Code: "InternalException", Message: "injected"}); err != nil {
		t.Fatal(err)
	}
	st, err := c.Create(ctx, spec)
	if err == nil || st.Exists() {
		t.Fatalf("Create with a failing PutTargets: %v, recorded %+v", err, st)
	}
	componenttest.CheckInventory(t, ctx, stack, before, "a failed Create")

	// A name refused as if its queue had just been deleted (the real
	// refusal of "audit" would last 60 seconds) is waited out.
	spec.Name = "audit2"
	if _, err := ctl.AddFault(ctx, control.FaultRule{
		Service: "sqs", Operation: "CreateQueue", Count: 2,
		Code: "AWS.SimpleQueueService.QueueDeletedRecently", Message: "You must wait 60 seconds after deleting a queue before you can create another with the same name.",
	}); err != nil {
		t.Fatal(err)
	}
	st = must.Create(t, ctx, c, spec)
	if st.QueueURL == "" || st.DeadLetterQueueURL == "" || st.RuleARN == "" {
		t.Errorf("Create recorded %+v", st)
	}
	must.Delete(t, ctx, c, st, "Delete")
	componenttest.CheckInventory(t, ctx, stack, before, "Delete")
}
