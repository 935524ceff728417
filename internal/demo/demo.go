// Package demo runs the orders service of examples/complete end to end: a
// local AWS stack, the example applied with the real Terraform CLI and the
// locally built provider, writers committing orders and their events in
// transactions, and consumers on every subscription's queue measuring
// delivery.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/tfrun"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// Source and detail types of the orders service's events.
const (
	Source         = "com.example.orders"
	OrderPlaced    = "OrderPlaced"
	OrderCancelled = "OrderCancelled"
)

// Routes are the subscriptions of examples/complete and the detail types
// each receives.
var Routes = map[string][]string{
	"billing":  {OrderPlaced},
	"shipping": {OrderPlaced, OrderCancelled},
}

// Credentials the demo uses; the local stack accepts any.
const (
	AccessKeyID     = "AKIDLOCALADMIN"
	SecretAccessKey = "localadminsecret"
)

// Options configure Run.
type Options struct {
	// Root is the repository's root (examples/complete, modules/ and the
	// provider's sources).
	Root string
	// Terraform is the CLI binary.
	Terraform string
	// Writers is the number of concurrent writers; Interval the pause of
	// each between orders.
	Writers  int
	Interval time.Duration
	// Duration is how long the writers write.
	Duration time.Duration
	// Settle bounds the wait for delivery after the writers stop.
	Settle time.Duration
	// Addr is the local stack's listen address; 127.0.0.1:0 picks a port.
	Addr string
	// Architecture of the relay functions (arm64 or x86_64); the
	// example's default when empty.
	Architecture string
	// Keep leaves the stack and the resources running until ctx is done.
	Keep bool
	// Out receives progress and the summary; Log receives Terraform's
	// output (nil discards it).
	Out, Log io.Writer
	// Live rewrites the progress line in place (a terminal).
	Live bool
}

func (o *Options) defaults() {
	if o.Writers <= 0 {
		o.Writers = 4
	}
	if o.Interval <= 0 {
		o.Interval = 50 * time.Millisecond
	}
	if o.Duration <= 0 {
		o.Duration = 20 * time.Second
	}
	if o.Settle <= 0 {
		o.Settle = 2 * time.Minute
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
}

// Deployment is examples/complete applied on a stack.
type Deployment struct {
	Runner   *tfrun.Runner
	WorkDir  string
	Outputs  Outputs
	Duration time.Duration
}

// Outputs are the example's outputs the demo reads.
type Outputs struct {
	TableName               string            `json:"table_name"`
	EventBusARN             string            `json:"event_bus_arn"`
	SubscriptionQueueURLs   map[string]string `json:"subscription_queue_urls"`
	SubscriptionDLQURLs     map[string]string `json:"subscription_dead_letter_queue_urls"`
	RelayDeadLetterQueueURL string            `json:"relay_dead_letter_queue_url"`
	WriterTable             WriterTable       `json:"writer_table"`
}

// WriterTable is the example's writer_table output.
type WriterTable struct {
	Name          string `json:"name"`
	PartitionKey  string `json:"partition_key"`
	SortKey       string `json:"sort_key"`
	SortKeyPrefix string `json:"sort_key_prefix"`
	TTLAttribute  string `json:"ttl_attribute"`
	PendingIndex  string `json:"pending_index"`
	PendingShards int    `json:"pending_shards"`
}

// Table is the outbox.Table of the orders table, shared layout.
func (w WriterTable) Table() outbox.Table {
	return outbox.Table{
		Name: w.Name, Layout: outbox.LayoutShared,
		PartitionKey: w.PartitionKey, SortKey: w.SortKey, SortKeyPrefix: w.SortKeyPrefix,
		TTLAttribute: w.TTLAttribute, PendingIndexName: w.PendingIndex, PendingShards: w.PendingShards,
	}
}

// Deploy stages examples/complete (with modules/) in workDir, builds the
// provider and applies the example with the real CLI against endpoint.
func Deploy(ctx context.Context, root, terraform, workDir, endpoint, region string, log io.Writer, vars ...tfrun.Var) (*Deployment, error) {
	start := time.Now()
	if _, err := tfrun.Stage(root, filepath.Join(workDir, "src"), "modules", filepath.Join("examples", "complete")); err != nil {
		return nil, err
	}
	inst, err := tfrun.Setup(ctx, tfrun.Options{Terraform: terraform, Module: root, Dir: filepath.Join(workDir, "tf"), Log: log})
	if err != nil {
		return nil, err
	}
	run := inst.Runner(filepath.Join(workDir, "src", "examples", "complete"), tfrun.AWSEnv(endpoint, region))
	run.Log = log
	d := &Deployment{Runner: run, WorkDir: workDir}
	if err := run.Init(ctx); err != nil {
		return nil, err
	}
	if err := run.Apply(ctx, vars...); err != nil {
		return d, err
	}
	outs, err := run.Output(ctx)
	if err != nil {
		return d, err
	}
	raw, err := json.Marshal(outs)
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal(raw, &d.Outputs); err != nil {
		return d, fmt.Errorf("decoding the example's outputs: %w", err)
	}
	d.Duration = time.Since(start)
	return d, nil
}

// AWSConfig is an SDK configuration for the stack at endpoint.
func AWSConfig(endpoint, region string) aws.Config {
	return aws.Config{
		Region:       region,
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKeyID, SecretAccessKey, ""),
		BaseEndpoint: aws.String(endpoint),
	}
}

// Run runs the demo and returns its summary. The error is non-nil when a
// step failed or events were lost.
func Run(ctx context.Context, o Options) (Summary, error) {
	o.defaults()
	r := &demoRun{o: o, started: time.Now()}
	if err := r.startStack(ctx); err != nil {
		return Summary{}, err
	}
	defer func() { _ = r.stack.Close() }()
	if err := r.makeWorkDir(); err != nil {
		return Summary{}, err
	}
	if !o.Keep {
		defer func() { _ = os.RemoveAll(r.workDir) }()
	}
	err := r.apply(ctx)
	defer func() { _ = r.teardown(ctx) }()
	if err != nil {
		return Summary{}, err
	}
	if err := r.checkDeployment(); err != nil {
		return Summary{}, err
	}
	tally, err := r.deliver(ctx)
	if err != nil {
		return Summary{}, err
	}
	return r.report(ctx, tally)
}

// demoRun is the state of one Run, phase to phase.
type demoRun struct {
	o        Options
	started  time.Time
	stack    *localaws.Stack
	region   string
	workDir  string
	vars     []tfrun.Var
	d        *Deployment
	tornDown bool
}

func (r *demoRun) say(format string, args ...any) {
	_, _ = fmt.Fprintf(r.o.Out, format+"\n", args...)
}

// startStack starts the local AWS stack in this process.
func (r *demoRun) startStack(ctx context.Context) error {
	stack, err := localaws.Start(ctx, localaws.Options{Addr: r.o.Addr, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("starting the local AWS stack: %w", err)
	}
	r.stack = stack
	r.region = stack.Options().Region
	r.say("local AWS stack: %s (region %s)", stack.Endpoint(), r.region)
	return nil
}

// makeWorkDir makes the directory the example is staged and applied in.
func (r *demoRun) makeWorkDir() error {
	workDir, err := os.MkdirTemp("", "outbox-demo-")
	if err != nil {
		return err
	}
	r.workDir = workDir
	return nil
}

// apply applies examples/complete on the stack. A failed apply may still
// leave a deployment to tear down.
func (r *demoRun) apply(ctx context.Context) error {
	if r.o.Architecture != "" {
		r.vars = append(r.vars, tfrun.Var{Name: "architecture", Value: r.o.Architecture})
	}
	r.say("applying examples/complete with Terraform (provider built from this checkout)...")
	d, err := Deploy(ctx, r.o.Root, r.o.Terraform, r.workDir, r.stack.Endpoint(), r.region, r.o.Log, r.vars...)
	r.d = d
	return err
}

// teardown destroys the example once, unless there is none or it is kept.
func (r *demoRun) teardown(ctx context.Context) error {
	if r.d == nil || r.o.Keep || r.tornDown {
		return nil
	}
	r.tornDown = true
	r.say("destroying examples/complete...")
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	start := time.Now()
	if err := r.d.Runner.Destroy(dctx, r.vars...); err != nil {
		return fmt.Errorf("destroying: %w", err)
	}
	r.say("destroyed in %s", time.Since(start).Round(time.Second))
	return nil
}

// checkDeployment reports the applied example and checks that it has every
// subscription of Routes.
func (r *demoRun) checkDeployment() error {
	d := r.d
	r.say("applied in %s: table %s, bus %s, %d subscriptions", d.Duration.Round(time.Second), d.Outputs.TableName, d.Outputs.EventBusARN, len(d.Outputs.SubscriptionQueueURLs))
	for sub := range Routes {
		if d.Outputs.SubscriptionQueueURLs[sub] == "" {
			return fmt.Errorf("the example has no subscription %q (outputs: %v)", sub, d.Outputs.SubscriptionQueueURLs)
		}
	}
	return nil
}

// deliver starts the consumers, writes orders for the run's duration, waits
// for delivery (up to Settle) and stops the consumers. The tally holds
// what was written and received.
func (r *demoRun) deliver(ctx context.Context) (*Tally, error) {
	cfg := AWSConfig(r.stack.Endpoint(), r.region)
	ddb := dynamodb.NewFromConfig(cfg)
	q := sqs.NewFromConfig(cfg)
	w, err := outbox.NewWriter(ddb, r.d.Outputs.WriterTable.Table())
	if err != nil {
		return nil, err
	}
	tally := NewTally(Routes)
	c := r.startConsumers(ctx, q, tally)
	defer c.stop()
	writersDone, writeErrs := r.startWriters(ctx, w, tally)

	prog := &progress{o: r.o, ddb: ddb, q: q, table: r.d.Outputs.WriterTable.Table().WithDefaults(), tally: tally, dlqs: r.d.deadLetterQueues()}
	prog.until(ctx, writersDone)
	select {
	case err := <-writeErrs:
		return nil, err
	default:
	}
	prog.until(ctx, waitDelivered(ctx, tally, r.o.Settle))
	prog.finish(ctx)
	c.stop()
	c.wg.Wait()
	select {
	case err := <-c.errs:
		return nil, err
	default:
	}
	return tally, nil
}

// consumers are the goroutines reading the subscriptions' queues.
type consumers struct {
	stop context.CancelFunc
	wg   sync.WaitGroup
	errs chan error
}

// startConsumers starts two consumers on the queue of every subscription
// of Routes.
func (r *demoRun) startConsumers(ctx context.Context, q *sqs.Client, tally *Tally) *consumers {
	consumeCtx, stop := context.WithCancel(ctx)
	c := &consumers{stop: stop, errs: make(chan error, 2*len(Routes))}
	for sub, url := range r.d.Outputs.SubscriptionQueueURLs {
		if _, ok := Routes[sub]; !ok {
			continue
		}
		for range 2 {
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				if err := Consume(consumeCtx, q, url, sub, tally); err != nil {
					c.errs <- err
				}
			}()
		}
	}
	return c
}

// startWriters starts the writers; done is closed when they all stopped,
// errs holds their errors.
func (r *demoRun) startWriters(ctx context.Context, w *outbox.Writer, tally *Tally) (done <-chan struct{}, errs <-chan error) {
	o := r.o
	r.say("writing orders with %d writers for %s...", o.Writers, o.Duration)
	until := time.Now().Add(o.Duration)
	var writers sync.WaitGroup
	writeErrs := make(chan error, o.Writers)
	for i := range o.Writers {
		writers.Add(1)
		go func() {
			defer writers.Done()
			if err := WriteOrders(ctx, w, i, o.Interval, until, tally); err != nil {
				writeErrs <- err
			}
		}()
	}
	writersDone := make(chan struct{})
	go func() { writers.Wait(); close(writersDone) }()
	return writersDone, writeErrs
}

// waitDelivered returns a channel closed when every written event was
// delivered, settle has passed or ctx is done.
func waitDelivered(ctx context.Context, tally *Tally, settle time.Duration) <-chan struct{} {
	settled := make(chan struct{})
	go func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		deadline := time.After(settle)
		for {
			p := tally.Progress()
			if p.Delivered == p.Written {
				close(settled)
				return
			}
			select {
			case <-t.C:
			case <-deadline:
				close(settled)
				return
			case <-ctx.Done():
				close(settled)
				return
			}
		}
	}()
	return settled
}

// report tears the example down, prints the summary (and, with Keep, how
// to reach the stack, which then runs until ctx is done) and fails when
// events were lost.
func (r *demoRun) report(ctx context.Context, tally *Tally) (Summary, error) {
	s := tally.Summary()
	if err := r.teardown(ctx); err != nil {
		return s, err
	}
	r.say("")
	r.say("ran in %s", time.Since(r.started).Round(time.Second))
	if r.o.Keep {
		r.sayHowToReach()
	}
	r.say("%s", s.String())
	if r.o.Keep {
		<-ctx.Done()
	}
	if s.Lost > 0 {
		return s, fmt.Errorf("%d of %d events were not delivered to every subscription", s.Lost, s.Written)
	}
	return s, nil
}

// sayHowToReach prints the endpoint, environment and Terraform command of
// the kept stack and example.
func (r *demoRun) sayHowToReach() {
	tf, _ := filepath.Abs(r.o.Terraform)
	endpoint := r.stack.Endpoint()
	r.say("the stack and the example keep running (--keep):")
	r.say("  endpoint:  %s", endpoint)
	r.say("  env:       export AWS_ENDPOINT_URL=%s AWS_REGION=%s AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s", endpoint, r.region, AccessKeyID, SecretAccessKey)
	r.say("  terraform: cd %s && TF_CLI_CONFIG_FILE=%s %s output", r.d.Runner.Dir, filepath.Join(r.workDir, "tf", "terraform.rc"), tf)
	r.say("  stop:      press Ctrl-C (the stack lives in this process; its resources go with it; then rm -rf %s)", r.workDir)
}

func (d *Deployment) deadLetterQueues() []string {
	var urls []string
	if d.Outputs.RelayDeadLetterQueueURL != "" {
		urls = append(urls, d.Outputs.RelayDeadLetterQueueURL)
	}
	for _, u := range d.Outputs.SubscriptionDLQURLs {
		urls = append(urls, u)
	}
	return urls
}

// WriteOrders places orders, one every interval, until the time until, and
// cancels one in four of them. It records every committed event in tally.
// A write under way when until passes completes (and is counted); ctx
// cancellation stops it, uncounted.
func WriteOrders(ctx context.Context, w *outbox.Writer, writer int, interval time.Duration, until time.Time, tally *Tally) error {
	rng := rand.New(rand.NewPCG(uint64(writer), uint64(time.Now().UnixNano())))
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for n := 0; time.Now().Before(until); n++ {
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
		id := fmt.Sprintf("%d-%06d", writer, n)
		if err := PlaceOrder(ctx, w, id, float64(rng.IntN(20000))/100, tally); err != nil {
			return ignoreStopped(ctx, err)
		}
		if rng.IntN(4) == 0 {
			if err := CancelOrder(ctx, w, id, tally); err != nil {
				return ignoreStopped(ctx, err)
			}
		}
	}
	return nil
}

// ignoreStopped drops the error of a write interrupted by cancellation: the
// transaction may or may not have committed, and is not counted either way.
func ignoreStopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil //nolint:nilerr // cancellation ends the run; the write is not counted
	}
	return err
}

// orderKey is the key of the order item of pk: PK pk, SK ORDER.
func orderKey(t outbox.Table, pk string) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{
		t.PartitionKey: &ddbtypes.AttributeValueMemberS{Value: pk},
		t.SortKey:      &ddbtypes.AttributeValueMemberS{Value: "ORDER"},
	}
}

// PlaceOrder writes the order item (PK ORDER#id, SK ORDER) and its
// OrderPlaced event in one transaction, and records the event in tally.
func PlaceOrder(ctx context.Context, w *outbox.Writer, id string, total float64, tally *Tally) error {
	t := w.Table()
	pk := "ORDER#" + id
	item := orderKey(t, pk)
	item["status"] = &ddbtypes.AttributeValueMemberS{Value: "PLACED"}
	item["total"] = &ddbtypes.AttributeValueMemberN{Value: strconv.FormatFloat(total, 'f', 2, 64)}
	order := ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{
		TableName:                aws.String(t.Name),
		Item:                     item,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": t.PartitionKey},
	}}
	detail, err := json.Marshal(map[string]any{"orderId": id, "total": total})
	if err != nil {
		return err
	}
	return write(ctx, w, tally, order, outbox.Event{PartitionKey: pk, Source: Source, DetailType: OrderPlaced, Detail: detail})
}

// CancelOrder marks a placed order cancelled (a conditional update) and
// writes its OrderCancelled event in one transaction, and records the event
// in tally.
func CancelOrder(ctx context.Context, w *outbox.Writer, id string, tally *Tally) error {
	t := w.Table()
	pk := "ORDER#" + id
	cancel := ddbtypes.TransactWriteItem{Update: &ddbtypes.Update{
		TableName:                aws.String(t.Name),
		Key:                      orderKey(t, pk),
		UpdateExpression:         aws.String("SET #status = :cancelled"),
		ConditionExpression:      aws.String("#status = :placed"),
		ExpressionAttributeNames: map[string]string{"#status": "status"},
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{
			":cancelled": &ddbtypes.AttributeValueMemberS{Value: "CANCELLED"},
			":placed":    &ddbtypes.AttributeValueMemberS{Value: "PLACED"},
		},
	}}
	detail, err := json.Marshal(map[string]any{"orderId": id, "reason": "customer request"})
	if err != nil {
		return err
	}
	return write(ctx, w, tally, cancel, outbox.Event{PartitionKey: pk, Source: Source, DetailType: OrderCancelled, Detail: detail})
}

func write(ctx context.Context, w *outbox.Writer, tally *Tally, item ddbtypes.TransactWriteItem, e outbox.Event) error {
	recs, err := w.Write(ctx, []ddbtypes.TransactWriteItem{item}, e)
	if err != nil {
		return err
	}
	tally.Written(recs[0].EventID, e.DetailType, time.Now())
	return nil
}

// busEvent is the part of an EventBridge event the consumers read.
type busEvent struct {
	DetailType string `json:"detail-type"`
	Detail     struct {
		Metadata struct {
			EventID string `json:"eventId"`
		} `json:"metadata"`
	} `json:"detail"`
}

// Consume receives the queue's messages until ctx is done, recording each
// event's delivery to sub in tally and deleting the messages.
func Consume(ctx context.Context, q *sqs.Client, url, sub string, tally *Tally) error {
	for ctx.Err() == nil {
		out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			return ignoreStopped(ctx, fmt.Errorf("receiving from %s: %w", sub, err))
		}
		now := time.Now()
		var entries []sqstypes.DeleteMessageBatchRequestEntry
		for i, m := range out.Messages {
			var e busEvent
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &e); err != nil || e.Detail.Metadata.EventID == "" {
				return fmt.Errorf("subscription %s received a message that is not an outbox event: %q", sub, aws.ToString(m.Body))
			}
			tally.Received(sub, e.Detail.Metadata.EventID, now)
			entries = append(entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
		if len(entries) > 0 {
			if _, err := q.DeleteMessageBatch(context.WithoutCancel(ctx), &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(url), Entries: entries}); err != nil {
				return fmt.Errorf("deleting from %s: %w", sub, err)
			}
		}
	}
	return nil
}

// progress prints the live progress line.
type progress struct {
	o     Options
	ddb   *dynamodb.Client
	q     *sqs.Client
	table outbox.Table
	tally *Tally
	dlqs  []string
	last  time.Time
}

// until prints progress until done is closed.
func (p *progress) until(ctx context.Context, done <-chan struct{}) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			if p.o.Live || time.Since(p.last) >= 2*time.Second {
				p.print(ctx)
			}
		}
	}
}

func (p *progress) finish(ctx context.Context) {
	p.print(ctx)
	if p.o.Live {
		_, _ = fmt.Fprintln(p.o.Out)
	}
}

func (p *progress) print(ctx context.Context) {
	p.last = time.Now()
	pr := p.tally.Progress()
	pending, perr := p.pending(ctx)
	dlq, derr := p.deadLettered(ctx)
	line := fmt.Sprintf("written=%d published=%d pending=%s in_dlq=%s", pr.Written, pr.Delivered, count(pending, perr), count(dlq, derr))
	if p.o.Live {
		_, _ = fmt.Fprintf(p.o.Out, "\r%-90s", line)
		return
	}
	_, _ = fmt.Fprintln(p.o.Out, line)
}

func count(n int, err error) string {
	if err != nil {
		return "?"
	}
	return strconv.Itoa(n)
}

// pending counts the items of the pending index.
func (p *progress) pending(ctx context.Context) (int, error) {
	n := 0
	cutoff := time.Now().Add(time.Hour)
	for shard := range p.table.PendingShards {
		in := p.table.PendingQuery(shard, cutoff)
		for {
			out, err := p.ddb.Query(ctx, in)
			if err != nil {
				return 0, err
			}
			n += len(out.Items)
			if len(out.LastEvaluatedKey) == 0 {
				break
			}
			in.ExclusiveStartKey = out.LastEvaluatedKey
		}
	}
	return n, nil
}

// deadLettered sums the messages of the dead-letter queues.
func (p *progress) deadLettered(ctx context.Context) (int, error) {
	n := 0
	var errs []error
	for _, url := range p.dlqs {
		out, err := p.q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages}})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		v, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
		n += v
	}
	return n, errors.Join(errs...)
}
