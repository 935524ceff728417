package consumertest_test

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

const (
	inboxTable  = "billing-inbox"
	ledgerTable = "billing-ledger"
)

// engine is an inbox table and a ledger table (the handlers' effects: one
// counter item per event) in the local AWS stack's DynamoDB. Its client
// counts the puts and reads the kit makes.
type engine struct {
	t          testing.TB
	client     *dynamodb.Client
	puts, gets atomic.Int64
	clock      *clock
}

func newEngine(t *testing.T) *engine {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return newEngineOn(ctx, t, localawstest.Config(localawstest.StartDynamoDB(t)), time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC),
		func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} })
}

// newEngineOn creates the inbox and ledger tables in the DynamoDB of cfg
// and returns an engine of them, its clock at now.
func newEngineOn(ctx context.Context, t testing.TB, cfg aws.Config, now time.Time, opts ...func(*dynamodb.Options)) *engine {
	t.Helper()
	e := &engine{t: t, clock: &clock{now: now}}
	e.client = dynamodb.NewFromConfig(cfg, append(opts, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, countRequests(&e.puts, "PutItem"), countRequests(&e.gets, "GetItem"))
	})...)
	createTables(ctx, t, e.client)
	return e
}

// createTables creates the inbox table and the ledger table.
func createTables(ctx context.Context, t testing.TB, client *dynamodb.Client) {
	t.Helper()
	for _, in := range []*dynamodb.CreateTableInput{consumer.TableInput(inboxTable), localawstest.TableInput(ledgerTable, "pk", "", "")} {
		if _, err := client.CreateTable(ctx, in); err != nil {
			t.Fatalf("creating table %s: %v", *in.TableName, err)
		}
	}
}

// inbox returns an inbox of the engine with its own metrics, on the
// engine's clock.
func (e *engine) inbox(opts ...consumer.Option) *consumer.Inbox {
	e.t.Helper()
	opts = append([]consumer.Option{consumer.WithClock(e.clock.Now), consumer.WithLease(time.Minute),
		consumer.WithLogger(consumer.NewLogger(io.Discard, nil))}, opts...)
	in, err := consumer.NewInbox(e.client, inboxTable, opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	return in
}

// wantTotal fails unless the inbox's metric name totals want.
func wantTotal(t testing.TB, in *consumer.Inbox, name string, want float64) {
	t.Helper()
	if got := in.Metrics().Total(name); got != want {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

// countEffect is the handler's DynamoDB effect: the event's counter item
// grows by one.
func countEffect(eventID string) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(ledgerTable),
		Key:                       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "COUNT#" + eventID}},
		UpdateExpression:          aws.String("ADD applied :one"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
	}}
}

// applied is the counter of an event: how many times its effect happened.
func (e *engine) applied(eventID string) int {
	e.t.Helper()
	out, err := e.client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(ledgerTable), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "COUNT#" + eventID}},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	n, ok := out.Item["applied"].(*types.AttributeValueMemberN)
	if !ok {
		return 0
	}
	v, _ := strconv.Atoi(n.Value)
	return v
}

// entry is the stored inbox item of an event.
func (e *engine) entry(eventID string) map[string]types.AttributeValue {
	e.t.Helper()
	out, err := e.client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(inboxTable), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{consumer.AttrEventID: &types.AttributeValueMemberS{Value: eventID}},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return out.Item
}

func attrS(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func hashOf(t testing.TB, data string) string {
	t.Helper()
	h, err := consumer.PayloadHash(json.RawMessage(data))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// clock is a clock the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// countRequests is an API option of an AWS client that counts in n the
// calls of the named operations.
func countRequests(n *atomic.Int64, operations ...string) func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		if !slices.Contains(operations, stack.ID()) {
			return nil
		}
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("countRequests",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				n.Add(1)
				return next.HandleInitialize(ctx, in)
			}), middleware.Before)
	}
}
