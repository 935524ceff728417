package consumertest_test

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	localddb "github.com/outboxkit/terraform-provider-outbox/internal/localaws/dynamodb"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
)

const (
	inboxTable  = "billing-inbox"
	ledgerTable = "billing-ledger"
)

// engine is an inbox table and a ledger table (the handlers' effects: one
// counter item per event) in the local AWS stack's DynamoDB.
type engine struct {
	t      testing.TB
	client *countingClient
	clock  *clock
}

func newEngine(t *testing.T) *engine {
	t.Helper()
	stack := localawstest.Start(t, func(o *localaws.Options) { o.NoServices = true })
	if err := stack.Register(localddb.New(stack.Env(), localddb.Options{TTLSweepInterval: -1})); err != nil {
		t.Fatal(err)
	}
	client := dynamodb.NewFromConfig(localawstest.Config(stack), func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	createTables(ctx, t, client)
	return &engine{t: t, client: &countingClient{Client: client}, clock: &clock{now: time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC)}}
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

// countingClient counts the calls the kit makes.
type countingClient struct {
	*dynamodb.Client
	puts, gets atomic.Int64
}

func (c *countingClient) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	c.puts.Add(1)
	return c.Client.PutItem(ctx, in, opts...)
}

func (c *countingClient) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	c.gets.Add(1)
	return c.Client.GetItem(ctx, in, opts...)
}
