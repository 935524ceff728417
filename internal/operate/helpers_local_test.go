package operate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/oklog/ulid/v2"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relaypackage"
	"github.com/outboxkit/terraform-provider-outbox/internal/subscription"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// deadline bounds every asynchronous condition of the local tests.
const deadline = 3 * time.Minute

// deployed is a pipeline on a local stack, with the command pointed at it.
type deployed struct {
	t      *testing.T
	ctx    context.Context
	stack  *localaws.Stack
	cfg    aws.Config
	spec   provision.Spec
	state  provision.State
	writer *outbox.Writer
	ddb    *dynamodb.Client
}

func nativeArch() provision.Architecture {
	if runtime.GOARCH == "arm64" {
		return provision.ArchARM64
	}
	return provision.ArchX86_64
}

// deploy starts a stack and creates the pipeline of spec on it, with the
// relay package built from this checkout.
func deploy(t *testing.T, spec provision.Spec) *deployed {
	t.Helper()
	if _, err := relaypackage.Zip(string(nativeArch())); err != nil {
		t.Skipf("the relay package is not built (go generate ./internal/relaypackage): %v", err)
	}
	stack := localawstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*deadline)
	t.Cleanup(cancel)
	cfg := localawstest.Config(stack)
	pc := provision.New(cfg, provision.RelayCode{Zip: relaypackage.Zip, SHA256: relaypackage.SHA256})
	pc.PropagationTimeout, pc.WaitTimeout, pc.PollInterval = 30*time.Second, time.Minute, 200*time.Millisecond
	spec.Architecture = nativeArch()
	st, err := pc.Create(ctx, spec)
	if err != nil {
		t.Fatalf("creating pipeline %s: %v", spec.Name, err)
	}
	ddb := dynamodb.NewFromConfig(cfg)
	w, err := outbox.NewWriter(ddb, spec.WithDefaults().OutboxTable())
	if err != nil {
		t.Fatal(err)
	}
	return &deployed{t: t, ctx: ctx, stack: stack, cfg: cfg, spec: spec, state: st, writer: w, ddb: ddb}
}

// run runs the command line, its standard error not a terminal, and
// returns its output and exit code.
func (d *deployed) run(args ...string) (stdout, stderr string, code int) {
	d.t.Helper()
	return d.runOn(false, args...)
}

// runOn runs the command line with standard error on a terminal or not.
func (d *deployed) runOn(terminal bool, args ...string) (stdout, stderr string, code int) {
	d.t.Helper()
	var out, errOut bytes.Buffer
	cli := &CLI{Stdout: &out, Stderr: &errOut, Terminal: terminal, Config: func(context.Context, Settings) (aws.Config, error) { return d.cfg, nil }}
	code = cli.Run(d.ctx, args)
	d.t.Logf("$ outbox %s\n%s%q\n(exit %d)", strings.Join(args, " "), out.String(), errOut.String(), code)
	return out.String(), errOut.String(), code
}

// parseJSON decodes the --json output of a subcommand into v, refusing
// fields that v does not document and anything after the document.
func parseJSON(t *testing.T, out string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("the output is not the documented JSON: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatalf("the output has more than one JSON document:\n%s", out)
	}
}

// write commits events through the outbox writer.
func (d *deployed) write(events ...outbox.Event) []outbox.Record {
	d.t.Helper()
	var all []outbox.Record
	for i := 0; i < len(events); i += outbox.MaxTransactionActions {
		recs, err := d.writer.Write(d.ctx, nil, events[i:min(i+outbox.MaxTransactionActions, len(events))]...)
		if err != nil {
			d.t.Fatalf("writing events: %v", err)
		}
		all = append(all, recs...)
	}
	return all
}

// orderPlaced returns n events of source with an empty detail.
func orderPlaced(source string, n int) []outbox.Event {
	events := make([]outbox.Event, n)
	for i := range events {
		events[i] = outbox.Event{Source: source, DetailType: "OrderPlaced", Detail: json.RawMessage(`{}`)}
	}
	return events
}

// putFailed stores n events as the relay leaves a poison event: FAILED,
// with a reason and out of the pending index. reason(i) gives each reason.
func (d *deployed) putFailed(n int, source string, reason func(int) string) []outbox.Record {
	d.t.Helper()
	return d.putFailedFrom("", n, source, reason)
}

// putFailedFrom is putFailed of events written in the Region origin ("":
// without origin).
func (d *deployed) putFailedFrom(origin string, n int, source string, reason func(int) string) []outbox.Record {
	d.t.Helper()
	t := d.writer.Table()
	now := time.Now().UTC().Truncate(time.Millisecond)
	recs := make([]outbox.Record, n)
	var reqs []types.WriteRequest
	for i := range recs {
		occurred := now.Add(-time.Duration(n-i) * time.Millisecond)
		id := ulid.MustNew(ulid.Timestamp(occurred), ulid.DefaultEntropy()).String()
		r := outbox.Record{
			PartitionKey: t.SortKeyFor(id), SortKey: t.SortKeyFor(id), EventID: id,
			Source: source, DetailType: "OrderPlaced", Detail: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)),
			OccurredAt: occurred, Status: outbox.StatusFailed, LastError: reason(i), Origin: origin,
		}
		recs[i] = r
		item := t.Item(r)
		item[outbox.AttrLastError] = &types.AttributeValueMemberS{Value: r.LastError}
		item[outbox.AttrFailedAt] = &types.AttributeValueMemberS{Value: now.Format(outbox.TimeFormat)}
		item[outbox.AttrAttempts] = &types.AttributeValueMemberN{Value: "1"}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	for i := 0; i < len(reqs); i += 25 {
		pending := map[string][]types.WriteRequest{t.Name: reqs[i:min(i+25, len(reqs))]}
		for len(pending) > 0 {
			out, err := d.ddb.BatchWriteItem(d.ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				d.t.Fatalf("storing FAILED events: %v", err)
			}
			pending = out.UnprocessedItems
		}
	}
	return recs
}

// consumer is a subscription's queue, read in the background.
type consumer struct {
	mu     sync.Mutex
	got    map[string]int    // event id → deliveries
	bodies map[string]string // event id → last message body
	seen   []receivedEvent
}

type receivedEvent struct {
	ID, Source, DetailType string
	Detail                 outbox.PublishedDetail
}

// subscribe creates a subscription on bus for source and reads its queue
// until the test ends.
func (d *deployed) subscribe(name, bus, source string) *consumer {
	d.t.Helper()
	st, err := subscription.New(d.cfg).Create(d.ctx, subscription.Spec{
		Name: name, EventBus: bus, Sources: []string{source},
		Queue: subscription.QueueSpec{ReceiveWaitTimeSeconds: 1},
	})
	if err != nil {
		d.t.Fatalf("creating subscription %s: %v", name, err)
	}
	return d.consume(st.QueueURL)
}

// consume reads the queue at url until the test ends.
func (d *deployed) consume(url string) *consumer {
	c := &consumer{got: map[string]int{}, bodies: map[string]string{}}
	ctx, stop := context.WithCancel(d.ctx)
	var wg sync.WaitGroup
	d.t.Cleanup(func() { stop(); wg.Wait() })
	q := sqs.NewFromConfig(d.cfg)
	for range 2 {
		wg.Go(func() { c.read(ctx, q, url) })
	}
	return c
}

// topicConsumer creates an SNS topic and a queue subscribed to it with raw
// message delivery, read until the test ends; it returns the topic's ARN.
func (d *deployed) topicConsumer(name string) (*consumer, string) {
	d.t.Helper()
	topic, err := sns.NewFromConfig(d.cfg).CreateTopic(d.ctx, &sns.CreateTopicInput{Name: aws.String(name)})
	if err != nil {
		d.t.Fatal(err)
	}
	queueARN := d.newQueue(name)
	queueURL := aws.String(targetkind.QueueURL(queueARN))
	policy, _ := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []map[string]any{{
		"Effect": "Allow", "Principal": map[string]string{"Service": "sns.amazonaws.com"}, "Action": "sqs:SendMessage", "Resource": queueARN,
		"Condition": map[string]any{"ArnEquals": map[string]string{"aws:SourceArn": aws.ToString(topic.TopicArn)}},
	}}})
	if _, err := sqs.NewFromConfig(d.cfg).SetQueueAttributes(d.ctx, &sqs.SetQueueAttributesInput{QueueUrl: queueURL, Attributes: map[string]string{"Policy": string(policy)}}); err != nil {
		d.t.Fatal(err)
	}
	if _, err := sns.NewFromConfig(d.cfg).Subscribe(d.ctx, &sns.SubscribeInput{
		TopicArn: topic.TopicArn, Protocol: aws.String("sqs"), Endpoint: aws.String(queueARN),
		Attributes: map[string]string{"RawMessageDelivery": "true"},
	}); err != nil {
		d.t.Fatal(err)
	}
	return d.consume(*queueURL), aws.ToString(topic.TopicArn)
}

func (c *consumer) read(ctx context.Context, q *sqs.Client, url string) {
	for ctx.Err() == nil {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			continue
		}
		for _, m := range out.Messages {
			var ev struct {
				ID         string                 `json:"id"`
				Source     string                 `json:"source"`
				DetailType string                 `json:"detail-type"`
				Detail     outbox.PublishedDetail `json:"detail"`
			}
			if json.Unmarshal([]byte(aws.ToString(m.Body)), &ev) == nil {
				c.mu.Lock()
				c.got[ev.Detail.Metadata.EventID]++
				c.bodies[ev.Detail.Metadata.EventID] = aws.ToString(m.Body)
				c.seen = append(c.seen, receivedEvent{ev.ID, ev.Source, ev.DetailType, ev.Detail})
				c.mu.Unlock()
			}
			_, _ = q.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle})
		}
	}
}

// waitFor waits until every id has arrived, and fails the test otherwise.
func (c *consumer) waitFor(t *testing.T, ids []string) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		c.mu.Lock()
		missing := 0
		for _, id := range ids {
			if c.got[id] == 0 {
				missing++
			}
		}
		c.mu.Unlock()
		if missing == 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%d of %d events never arrived within %s", missing, len(ids), deadline)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (c *consumer) ids() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.got))
	for k, v := range c.got {
		out[k] = v
	}
	return out
}

func idsOf(recs []outbox.Record) []string {
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.EventID
	}
	return ids
}

// waitPublished waits until no event of the pipeline's table is pending,
// and fails the test otherwise.
func (d *deployed) waitPublished() {
	d.t.Helper()
	waitUntil(d.t, "every event marked PUBLISHED", func() bool {
		n, err := NewClients(d.cfg).pendingCount(context.Background(), pendingOf(d.writer.Table()), farFuture(time.Now()))
		return err == nil && n == 0
	})
}

// waitUntil polls cond until it holds, and fails the test otherwise.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %s", what, deadline)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
