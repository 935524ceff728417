package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/lambdatest"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// The consumer chaos suite's settings. The consumer's function times out
// before its lease ends, and the lease ends before the subscription queue's
// visibility timeout, so that the event of a killed invocation is taken over
// at its next delivery, as docs/guides/inbox-contract.md asks of a
// deployment; maxReceiveCount is the subscription's default.
const (
	consumeName       = "billing"
	consumeFunction   = consumeName + "-consumer"
	consumeTimeout    = 2 * time.Second
	consumeLease      = 3 * time.Second
	consumeVisibility = 4 // seconds
	consumeWork       = 5 * time.Millisecond
	// consumeBatch is the event source mapping's batch size.
	consumeBatch = 10
	// The redeliveries: events published twice (a relay's republish),
	// messages sent to the queue again (SQS's own at-least-once delivery),
	// and deletes that fail, so that the message comes back once its
	// visibility timeout expires.
	consumeRepublishRate = 0.15
	consumeResendRate    = 0.05
	consumeLostDelete    = 0.2
	// consumeRedelivered is the share of events, in percent, that must be
	// delivered more than once.
	consumeRedelivered = 30
)

// consumeOptions of a consumer chaos run, from the environment.
type consumeOptions struct {
	events, kills, impostors, pollers int
	// effectsOnly runs the consumer with consumer.EffectsOnly, without a
	// lease (CONSUME_EFFECTS_ONLY=1).
	effectsOnly bool
	// rate paces the publisher, in events per second.
	rate int
}

func consumeOptionsFromEnv(t *testing.T) consumeOptions {
	t.Helper()
	o := consumeOptions{events: envInt(t, "CONSUME_EVENTS", 2000)}
	// From largeRun events, twice the concurrency, as for any queue with
	// a backlog of tens of thousands of messages.
	pollers := 4
	if o.events >= largeRun {
		pollers = 8
	}
	o.pollers, o.rate = envInt(t, "CONSUME_POLLERS", pollers), envInt(t, "CONSUME_RATE", 500)
	o.kills = envInt(t, "CONSUME_KILLS", max(10, o.events/500))
	o.impostors = max(10, o.events/1000)
	o.effectsOnly = os.Getenv("CONSUME_EFFECTS_ONLY") == "1"
	return o
}

// consumeRun is one consumer chaos run: a subscription on a bus, a consumer
// function built with the kit, and the test in the part of Lambda's SQS
// event source mapping, which the local stack does not provide: it
// receives batches from the subscription's queue, invokes the function
// with them, and deletes what the function did not report failed.
type consumeRun struct {
	t   *testing.T
	o   consumeOptions
	ctl *control.Client
	sqs *sqs.Client
	// deleter is the mapping's SQS client for deletes, without retries: a
	// failed delete leaves its messages to come back.
	deleter   *sqs.Client
	ddb       *dynamodb.Client
	lambda    *lambda.Client
	logs      *cloudwatchlogs.Client
	publisher *targetkind.EventBridgePublisher
	sub       subscription.State
	region    string
	inbox     string
	ledger    string

	// tally counts the original events: Written when published, Received
	// at each delivery.
	tally *Tally
	// hashes is the payload hash of each original event; impostors the
	// events whose id was reused with another payload.
	mu        sync.Mutex
	hashes    map[string]string
	impostors map[string]string

	deliveries, impostorDeliveries, invocations, functionErrors atomic.Int64
	republished, resent, lostDeletes, kills                     atomic.Int64

	backgroundErrors
}

// TestConsumeChaos sends events through a subscription to a consumer built
// with the kit while messages are delivered again and consumer processes
// are killed mid-handler, and checks that every event's effect happened
// exactly once and that every reused id was detected. CONSUME_EVENTS (2,000;
// make chaos: 50,000) and CONSUME_KILLS (one per 500 events, at least 10)
// size it.
func TestConsumeChaos(t *testing.T) {
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("the chaos suite runs with %s=1", resource.EnvTfAcc)
	}
	o := consumeOptionsFromEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute+time.Duration(o.events)*20*time.Millisecond)
	defer cancel()
	c := newConsumeRun(ctx, t, o)
	t.Logf("%d events at %d a second to %d concurrent invocations; %d kills, %d reused ids; lease %s, timeout %s, visibility %ds; effects only %t",
		o.events, o.rate, o.pollers, o.kills, o.impostors, consumeLease, consumeTimeout, consumeVisibility, o.effectsOnly)

	start := time.Now()
	pollCtx, stopPolling := context.WithCancel(ctx)
	var bg sync.WaitGroup
	for range o.pollers {
		bg.Go(func() { c.poll(pollCtx) })
	}
	killed := make(chan struct{})
	bg.Go(func() { c.killer(pollCtx, killed) })
	published := make(chan struct{})
	reuse := make(chan string, o.impostors)
	bg.Go(func() { c.reuseIDs(pollCtx, reuse) })
	go func() { c.publish(ctx, reuse); close(published) }()

	bg.Go(func() { c.progress(pollCtx, start) })

	drainErr := c.drain(ctx, published, killed)
	drained := time.Now()
	stopPolling()
	bg.Wait()

	res, err := c.result(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res.Drain = drained.Sub(start)
	line := res.Line()
	t.Log(line)
	fmt.Println(line)
	t.Logf("deliveries=%d impostor_deliveries=%d invocations=%d function_errors=%d republished=%d resent=%d lost_deletes=%d",
		c.deliveries.Load(), c.impostorDeliveries.Load(), c.invocations.Load(), c.functionErrors.Load(),
		c.republished.Load(), c.resent.Load(), c.lostDeletes.Load())
	if drainErr != nil {
		t.Error(drainErr)
	}
	if err := c.failures(); err != nil {
		t.Errorf("background errors: %v", err)
	}
	if err := res.Check(o.kills, consumeRedelivered); err != nil {
		t.Error(err)
	}
}

// newConsumeRun starts the stack and builds the subscription, the tables,
// the consumer's role and function, and the lost deletes' fault.
func newConsumeRun(ctx context.Context, t *testing.T, o consumeOptions) *consumeRun {
	t.Helper()
	code := lambdatest.Zip(t, "./consumer", runtime.GOARCH)
	stack := localawstest.Start(t, func(so *localaws.Options) { so.GCPercent = 400 })
	cfg := clientConfig(stack)
	c := &consumeRun{
		t: t, o: o, ctl: localawstest.Control(stack), sqs: sqs.NewFromConfig(cfg),
		deleter: sqs.NewFromConfig(cfg, func(so *sqs.Options) { so.Retryer = aws.NopRetryer{} }),
		ddb:     dynamodb.NewFromConfig(cfg), lambda: lambda.NewFromConfig(cfg), logs: cloudwatchlogs.NewFromConfig(cfg),
		region: stack.Options().Region, inbox: consumeName + "-inbox", ledger: consumeName + "-ledger",
		tally: NewTally(), hashes: map[string]string{}, impostors: map[string]string{},
	}
	bus, err := eventbridge.NewFromConfig(cfg).CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String("orders")})
	if err != nil {
		t.Fatal(err)
	}
	c.publisher = &targetkind.EventBridgePublisher{Client: eventbridge.NewFromConfig(cfg), EventBus: aws.ToString(bus.EventBusArn),
		Retry: retry.Policy{Attempts: 5, Base: 50 * time.Millisecond, Max: time.Second}}
	c.sub, err = subscription.New(cfg).Create(ctx, subscription.Spec{
		Name: consumeName, EventBus: aws.ToString(bus.EventBusArn), Sources: []string{eventSource},
		Queue: subscription.QueueSpec{VisibilityTimeoutSeconds: aws.Int32(consumeVisibility), MaxReceiveCount: subscription.DefaultMaxReceiveCount},
	})
	if err != nil {
		t.Fatal(err)
	}
	c.createTables(ctx)
	c.createFunction(ctx, stack, code)
	if _, err := c.ctl.AddFault(ctx, control.FaultRule{Service: "sqs", Operation: "DeleteMessageBatch", Code: "InternalFailure",
		Rate: consumeLostDelete, Message: "chaos: delete lost"}); err != nil {
		t.Fatal(err)
	}
	return c
}

// createTables creates the inbox table, with its TTL, and the ledger.
func (c *consumeRun) createTables(ctx context.Context) {
	c.t.Helper()
	for _, in := range []*dynamodb.CreateTableInput{consumer.TableInput(c.inbox), localawstest.TableInput(c.ledger, LedgerKey, "", "")} {
		if _, err := c.ddb.CreateTable(ctx, in); err != nil {
			c.t.Fatalf("creating table %s: %v", aws.ToString(in.TableName), err)
		}
	}
	if _, err := c.ddb.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(c.inbox),
		TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String(consumer.AttrExpiresAt), Enabled: aws.Bool(true)}}); err != nil {
		c.t.Fatal(err)
	}
}

// createFunction creates the consumer's role, allowed only the writes the
// kit and its effect make on the two tables, and its function.
func (c *consumeRun) createFunction(ctx context.Context, stack *localaws.Stack, code []byte) {
	c.t.Helper()
	iamc := iam.NewFromConfig(clientConfig(stack))
	role, err := iamc.CreateRole(ctx, &iam.CreateRoleInput{RoleName: aws.String(consumeFunction),
		AssumeRolePolicyDocument: aws.String(localawstest.TrustPolicy("lambda.amazonaws.com"))})
	if err != nil {
		c.t.Fatal(err)
	}
	arn := func(table string) string {
		return "arn:aws:dynamodb:" + c.region + ":" + stack.Options().AccountID + ":table/" + table
	}
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["dynamodb:PutItem","dynamodb:UpdateItem"],"Resource":[%q,%q]}]}`,
		arn(c.inbox), arn(c.ledger))
	if _, err := iamc.PutRolePolicy(ctx, &iam.PutRolePolicyInput{RoleName: aws.String(consumeFunction), PolicyName: aws.String("tables"),
		PolicyDocument: aws.String(policy)}); err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.lambda.CreateFunction(ctx, &lambda.CreateFunctionInput{
		FunctionName: aws.String(consumeFunction), Runtime: lambdatypes.RuntimeProvidedal2023, Handler: aws.String("bootstrap"),
		Role: role.Role.Arn, Code: &lambdatypes.FunctionCode{ZipFile: code}, Architectures: []lambdatypes.Architecture{lambdatest.HostArchitecture()},
		Timeout: aws.Int32(int32(consumeTimeout / time.Second)), MemorySize: aws.Int32(256),
		Environment: &lambdatypes.Environment{Variables: map[string]string{
			"INBOX_TABLE": c.inbox, "LEDGER_TABLE": c.ledger,
			"LEASE_MS": strconv.Itoa(int(consumeLease.Milliseconds())), "WORK_MS": strconv.Itoa(int(consumeWork.Milliseconds())),
			"EFFECTS_ONLY": strconv.FormatBool(c.o.effectsOnly),
		}},
	}); err != nil {
		c.t.Fatal(err)
	}
	lambdatest.WaitActive(ctx, c.t, c.lambda, consumeFunction)
}

// order is the record of the nth event, or of its impostor, whose data
// differs and says so.
func order(id string, n int, impostor bool) outbox.Record {
	data := fmt.Sprintf(`{"orderId":"order-%06d","amount":%d}`, n, n%997+1)
	if impostor {
		data = fmt.Sprintf(`{"orderId":"order-%06d","amount":%d,"reused":true}`, n, 100000+n)
	}
	return outbox.Record{EventID: id, Source: eventSource, DetailType: "OrderPlaced", Detail: json.RawMessage(data), OccurredAt: time.Now().UTC()}
}

// publish publishes the events as the relay does, paced at the run's rate,
// in batches of 10; a share of each batch is published again with the next
// one, as a relay republishes an event whose mark failed. Events spread
// over the first half of the run are handed to reuse.
func (c *consumeRun) publish(ctx context.Context, reuse chan<- string) {
	defer close(reuse)
	start := time.Now()
	every := max(1, c.o.events/(2*c.o.impostors))
	var again []outbox.Record
	reused := 0
	for n := 0; n < c.o.events && ctx.Err() == nil; n += 10 {
		if !sleepUntil(ctx, start.Add(time.Duration(n)*time.Second/time.Duration(c.o.rate))) {
			return
		}
		var fresh []outbox.Record
		for i := n; i < min(n+10, c.o.events); i++ {
			fresh = append(fresh, order(newID(), i, false))
		}
		if !c.send(ctx, append(again, fresh...)) {
			return
		}
		c.republished.Add(int64(len(again)))
		again = nil
		for i, r := range fresh {
			c.published(r)
			if (n+i)%every == every/2 && reused < c.o.impostors {
				reuse <- r.EventID
				reused++
			}
			if rand.Float64() < consumeRepublishRate {
				again = append(again, r)
			}
		}
	}
	if len(again) > 0 && c.send(ctx, again) {
		c.republished.Add(int64(len(again)))
	}
}

// published records an original event and its payload hash.
func (c *consumeRun) published(r outbox.Record) {
	h, err := consumer.PayloadHash(r.Detail)
	if err != nil {
		c.fail(err)
		return
	}
	c.mu.Lock()
	c.hashes[r.EventID] = h
	c.mu.Unlock()
	c.tally.Written(r.EventID)
}

// send publishes records with the relay's EventBridge publisher; every one
// must be published.
func (c *consumeRun) send(ctx context.Context, records []outbox.Record) bool {
	for i, res := range c.publisher.Publish(ctx, records) {
		if res.Status != publish.Published {
			c.fail(fmt.Errorf("publishing %s: %s %s", records[i].EventID, res.Status, res.Reason))
			return false
		}
	}
	return true
}

// reuseIDs publishes, for each id from ids once its event has completed, an
// impostor: another event with the same id and other data, as a producer
// that reuses ids would.
func (c *consumeRun) reuseIDs(ctx context.Context, ids <-chan string) {
	for id := range ids {
		if err := c.waitCompleted(ctx, id); err != nil {
			if ctx.Err() == nil {
				c.fail(err)
			}
			return
		}
		r := order(id, 0, true)
		h, err := consumer.PayloadHash(r.Detail)
		if err != nil {
			c.fail(err)
			return
		}
		if !c.send(ctx, []outbox.Record{r}) {
			return
		}
		c.mu.Lock()
		c.impostors[id] = h
		c.mu.Unlock()
	}
}

// waitCompleted waits, within five minutes (a backlog of the full run's
// size), until the event's inbox entry is COMPLETED.
func (c *consumeRun) waitCompleted(ctx context.Context, id string) error {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		out, err := c.ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(c.inbox), ConsistentRead: aws.Bool(true),
			Key: map[string]ddbtypes.AttributeValue{consumer.AttrEventID: &ddbtypes.AttributeValueMemberS{Value: id}}})
		if err != nil {
			return fmt.Errorf("reading the inbox entry of %s: %w", id, err)
		}
		if attrString(out.Item, consumer.AttrStatus) == consumer.StatusCompleted {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("event %s did not complete within five minutes (inbox entry %v)", id, out.Item)
		}
		if !sleepUntil(ctx, time.Now().Add(200*time.Millisecond)) {
			return ctx.Err()
		}
	}
}

func attrString(item map[string]ddbtypes.AttributeValue, name string) string {
	if v, ok := item[name].(*ddbtypes.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// poll is one concurrent invocation of the event source mapping: it
// receives a batch, invokes the function with it, and deletes the messages
// the function did not report failed. After a function error (a killed or
// timed-out invocation) it deletes nothing, so the whole batch comes back
// once its visibility timeout expires, as Lambda's does.
func (c *consumeRun) poll(ctx context.Context) {
	for ctx.Err() == nil {
		out, err := c.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(c.sub.QueueURL), MaxNumberOfMessages: consumeBatch,
			WaitTimeSeconds: 1, MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			if ctx.Err() == nil {
				c.fail(fmt.Errorf("receiving: %w", err))
			}
			return
		}
		if len(out.Messages) == 0 {
			continue
		}
		batch := c.batch(ctx, out.Messages)
		payload, err := json.Marshal(batch)
		if err != nil {
			c.fail(err)
			return
		}
		res, err := c.lambda.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(consumeFunction), Payload: payload})
		c.invocations.Add(1)
		if err != nil {
			if ctx.Err() == nil {
				c.fail(fmt.Errorf("invoking the consumer: %w", err))
			}
			return
		}
		if res.FunctionError != nil {
			c.functionErrors.Add(1)
			continue
		}
		var resp events.SQSEventResponse
		if err := json.Unmarshal(res.Payload, &resp); err != nil {
			c.fail(fmt.Errorf("the consumer's response %q: %w", res.Payload, err))
			return
		}
		c.deleteSucceeded(ctx, batch, resp)
	}
}

// batch is the SQS event of received messages. It records each delivery,
// and sends a share of the messages to the queue again.
func (c *consumeRun) batch(ctx context.Context, msgs []sqstypes.Message) events.SQSEvent {
	var ev events.SQSEvent
	now := time.Now()
	for _, m := range msgs {
		body := aws.ToString(m.Body)
		c.delivered(body, now)
		if rand.Float64() < consumeResendRate {
			if _, err := c.sqs.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(c.sub.QueueURL), MessageBody: m.Body}); err != nil {
				c.fail(fmt.Errorf("sending a message again: %w", err))
			} else {
				c.resent.Add(1)
			}
		}
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: body,
			Md5OfBody: aws.ToString(m.MD5OfBody), Attributes: m.Attributes, EventSource: "aws:sqs",
			EventSourceARN: c.sub.QueueARN, AWSRegion: c.region,
		})
	}
	return ev
}

// deliveredEvent is what the mapping reads of a delivered message.
type deliveredEvent struct {
	Detail struct {
		Metadata struct {
			EventID string `json:"eventId"`
		} `json:"metadata"`
		Data struct {
			Reused bool `json:"reused"`
		} `json:"data"`
	} `json:"detail"`
}

func readDelivered(body string) (deliveredEvent, error) {
	var ev deliveredEvent
	if err := json.Unmarshal([]byte(body), &ev); err != nil || ev.Detail.Metadata.EventID == "" {
		return ev, fmt.Errorf("a message that is not a published outbox event: %.300q", body)
	}
	return ev, nil
}

func (c *consumeRun) delivered(body string, at time.Time) {
	ev, err := readDelivered(body)
	if err != nil {
		c.fail(err)
		return
	}
	if ev.Detail.Data.Reused {
		c.impostorDeliveries.Add(1)
		return
	}
	c.deliveries.Add(1)
	c.tally.Received(ev.Detail.Metadata.EventID, at)
}

// deleteSucceeded deletes the batch's messages that resp does not report
// failed; a failed delete leaves them to come back.
func (c *consumeRun) deleteSucceeded(ctx context.Context, batch events.SQSEvent, resp events.SQSEventResponse) {
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	var entries []sqstypes.DeleteMessageBatchRequestEntry
	for i, m := range batch.Records {
		if !failed[m.MessageId] {
			entries = append(entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(m.ReceiptHandle)})
		}
	}
	if len(entries) == 0 {
		return
	}
	out, err := c.deleter.DeleteMessageBatch(context.WithoutCancel(ctx), &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(c.sub.QueueURL), Entries: entries})
	if err != nil {
		c.lostDeletes.Add(int64(len(entries)))
		return
	}
	c.lostDeletes.Add(int64(len(out.Failed)))
}

// killer kills a running consumer process once every events/kills
// deliveries, until it has killed the run's count.
func (c *consumeRun) killer(ctx context.Context, done chan<- struct{}) {
	defer close(done)
	step := int64(max(1, c.o.events/c.o.kills))
	next := step / 2
	for c.kills.Load() < int64(c.o.kills) {
		if !sleepUntil(ctx, time.Now().Add(20*time.Millisecond)) {
			return
		}
		if c.deliveries.Load() < next {
			continue
		}
		in, err := c.ctl.LambdaInstances(ctx, consumeFunction)
		if err != nil {
			c.fail(fmt.Errorf("reading the consumer's instances: %w", err))
			return
		}
		if in.Running == 0 {
			continue
		}
		killed, err := c.ctl.KillLambda(ctx, consumeFunction)
		if err != nil {
			c.fail(fmt.Errorf("killing the consumer: %w", err))
			return
		}
		if killed {
			c.kills.Add(1)
			next += step
		}
	}
}

// progress logs the run's counts every 30 seconds, for long runs.
func (c *consumeRun) progress(ctx context.Context, start time.Time) {
	for sleepUntil(ctx, time.Now().Add(30*time.Second)) {
		written, delivered := c.tally.Progress()
		c.t.Logf("progress after %s: published=%d delivered=%d deliveries=%d invocations=%d kills=%d lost_deletes=%d",
			time.Since(start).Round(time.Second), written, delivered, c.deliveries.Load(), c.invocations.Load(), c.kills.Load(), c.lostDeletes.Load())
	}
}

// drain waits, within a deadline, until the events are published, the
// kills done, no invocation runs and the subscription's queue has been
// empty for two seconds: every message was deleted or dead-lettered.
func (c *consumeRun) drain(ctx context.Context, published, killed <-chan struct{}) error {
	select {
	case <-published:
	case <-ctx.Done():
		return fmt.Errorf("publishing: %w", ctx.Err())
	}
	deadline := time.Now().Add(2*time.Minute + time.Duration(c.o.events)*5*time.Millisecond)
	var emptySince time.Time
	for {
		select {
		case <-killed:
		default:
			// The kills still due need invocations to land in.
			if time.Now().After(deadline) {
				return fmt.Errorf("killed %d of %d consumer processes before the queue drained", c.kills.Load(), c.o.kills)
			}
			if !sleepUntil(ctx, time.Now().Add(250*time.Millisecond)) {
				return ctx.Err()
			}
			continue
		}
		depth, err := (&run{sqs: c.sqs}).queueDepth(ctx, c.sub.QueueURL)
		if err != nil {
			return err
		}
		in, err := c.ctl.LambdaInstances(ctx, consumeFunction)
		if err != nil {
			return err
		}
		now := time.Now()
		switch {
		case depth > 0 || in.Busy > 0:
			emptySince = time.Time{}
		case emptySince.IsZero():
			emptySince = now
		case now.Sub(emptySince) >= 2*time.Second:
			return nil
		}
		if now.After(deadline) {
			return fmt.Errorf("the subscription's queue still holds %d messages (%d invocations running)", depth, in.Busy)
		}
		if !sleepUntil(ctx, now.Add(250*time.Millisecond)) {
			return ctx.Err()
		}
	}
}

// result reads what the run left: the ledger's effects, the inbox entries,
// the dead-letter queue and what the consumer logged.
func (c *consumeRun) result(ctx context.Context) (ConsumeResult, error) {
	res := ConsumeResult{Events: c.tally.Result().Written, Redelivered: len(c.tally.Duplicates(1 << 30)), Kills: int(c.kills.Load()),
		EffectsOnly: c.o.effectsOnly}
	c.mu.Lock()
	hashes, impostors := maps.Clone(c.hashes), maps.Clone(c.impostors)
	c.mu.Unlock()
	effects, err := c.effects(ctx)
	if err != nil {
		return res, err
	}
	for id, want := range hashes {
		got, ok := effects[id]
		switch {
		case !ok:
			res.Lost++
		case got.applied == 1 && got.hash == want:
			res.EffectsOnce++
		default:
			res.Wrong++
			c.t.Logf("event %s: effect applied %d times with payload hash %s, want once with %s", id, got.applied, got.hash, want)
		}
	}
	for id := range effects {
		if _, ok := hashes[id]; !ok {
			res.Wrong++
			c.t.Logf("an effect of %s, which was never published", id)
		}
	}
	if res.Unfinished, err = c.unfinished(ctx); err != nil {
		return res, err
	}
	dead, err := c.deadLettered(ctx, &res.DLQ)
	if err != nil {
		return res, err
	}
	for id, ev := range dead {
		if !ev.Detail.Data.Reused && effects[id].applied == 1 {
			res.DeadLetteredApplied++
		}
	}
	mismatched, err := c.logged(ctx, "payload mismatch")
	if err != nil {
		return res, err
	}
	takeovers, err := c.logged(ctx, "lease taken over")
	if err != nil {
		return res, err
	}
	for _, n := range takeovers {
		res.Takeovers += n
	}
	res.MismatchesInjected = len(impostors)
	for id := range impostors {
		if mismatched[id] > 0 && dead[id].Detail.Data.Reused && effects[id].hash == hashes[id] {
			res.MismatchesDetected++
			continue
		}
		c.t.Logf("reused id %s: %d mismatches logged, dead-lettered %v, effect %+v", id, mismatched[id], dead[id].Detail.Data.Reused, effects[id])
	}
	return res, nil
}

// effect is what the ledger holds of one event's effect.
type effect struct {
	applied int
	hash    string
}

// effects scans the ledger: each event's effect, by event id.
func (c *consumeRun) effects(ctx context.Context) (map[string]effect, error) {
	out := map[string]effect{}
	p := dynamodb.NewScanPaginator(c.ddb, &dynamodb.ScanInput{TableName: aws.String(c.ledger), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("scanning the ledger: %w", err)
		}
		for _, item := range page.Items {
			n, err := strconv.Atoi(acctest.AttrN(item, LedgerApplied))
			if err != nil {
				return nil, fmt.Errorf("ledger item %v: %w", item, err)
			}
			out[strings.TrimPrefix(attrString(item, LedgerKey), LedgerKeyOf(""))] = effect{applied: n, hash: attrString(item, LedgerHash)}
		}
	}
	return out, nil
}

// unfinished counts the inbox entries that are not COMPLETED.
func (c *consumeRun) unfinished(ctx context.Context) (int, error) {
	n := 0
	p := dynamodb.NewScanPaginator(c.ddb, &dynamodb.ScanInput{
		TableName: aws.String(c.inbox), ConsistentRead: aws.Bool(true), Select: ddbtypes.SelectCount,
		FilterExpression:          aws.String("#status <> :completed"),
		ExpressionAttributeNames:  map[string]string{"#status": consumer.AttrStatus},
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":completed": &ddbtypes.AttributeValueMemberS{Value: consumer.StatusCompleted}},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("scanning the inbox: %w", err)
		}
		n += int(page.Count)
	}
	return n, nil
}

// deadLettered receives every message of the subscription's dead-letter
// queue, counted in n, by event id; an impostor wins over its original.
func (c *consumeRun) deadLettered(ctx context.Context, n *int) (map[string]deliveredEvent, error) {
	out := map[string]deliveredEvent{}
	for empty := 0; empty < 2; {
		page, err := c.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(c.sub.DeadLetterQueueURL),
			MaxNumberOfMessages: 10, VisibilityTimeout: 600, WaitTimeSeconds: 1})
		if err != nil {
			return nil, fmt.Errorf("receiving the dead letters: %w", err)
		}
		if len(page.Messages) == 0 {
			empty++
		}
		*n += len(page.Messages)
		for _, m := range page.Messages {
			ev, err := readDelivered(aws.ToString(m.Body))
			if err != nil {
				return nil, err
			}
			if !out[ev.Detail.Metadata.EventID].Detail.Data.Reused {
				out[ev.Detail.Metadata.EventID] = ev
			}
		}
	}
	return out, nil
}

// logged counts, by event id, the consumer's log lines with the message msg.
func (c *consumeRun) logged(ctx context.Context, msg string) (map[string]int, error) {
	out := map[string]int{}
	p := cloudwatchlogs.NewFilterLogEventsPaginator(c.logs, &cloudwatchlogs.FilterLogEventsInput{
		LogGroupName: aws.String("/aws/lambda/" + consumeFunction), FilterPattern: aws.String(fmt.Sprintf(`{ $.msg = %q }`, msg)),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("filtering the consumer's logs for %q: %w", msg, err)
		}
		for _, e := range page.Events {
			var line struct {
				EventID string `json:"eventId"`
			}
			if err := json.Unmarshal([]byte(aws.ToString(e.Message)), &line); err != nil {
				return nil, fmt.Errorf("a log line that is not JSON: %q", aws.ToString(e.Message))
			}
			out[line.EventID]++
		}
	}
	return out, nil
}
