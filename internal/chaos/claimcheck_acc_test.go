package chaos

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/outboxkit/terraform-provider-outbox/consumer"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/claimsweep"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/tfrun"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestChaosClaimCheck is TestChaos with the pipeline's claim check on:
// CLAIM_EVENTS events (500) whose data spans 2 bytes ({}) to 10 MiB
// (ClaimBands) go through the same faults, kills and changes, and S3 fails
// the writers' PutObject, the relay's GetObject and PutObjectTagging and
// the consumer's GetObject now and then (SlowDown, InternalError). Writers
// also store objects for transactions that never commit: cancelled by a
// condition, or abandoned between the object and the transaction. The
// relay publishes a claim-checked event inline when it fits the target's
// message, having read its object. The consumer applies every message
// with the consumer kit, which fetches the data of an event published as
// a reference and checks its SHA-256; its handler checks the data against
// what was written, and that the event arrived inline or as a reference
// as its size says. Once drained, the claim sweep runs as the reconciler
// runs it once the objects are past its grace period, then the stack's
// clock passes the published items' TTL, for the bucket's lifecycle rule:
// every event must have been delivered and verified, every orphan
// removed, every committed event's object kept until its TTL and none
// left after. It ends with TestChaos's line and one more:
//
//	claimcheck: events=N delivered=N verified=N lost=0 claimed=C bytes=B ... orphans_written=O orphans_removed=O orphans_left=0 ... left_after_ttl=0 ...
func TestChaosClaimCheck(t *testing.T) {
	t.Setenv("CHAOS_EVENTS", strconv.Itoa(envInt(t, "CLAIM_EVENTS", 500)))
	if os.Getenv("CHAOS_WRITE_SECONDS") == "" {
		// A few hundred events are published as soon as they are written:
		// the writers write until the environment's last spell (the
		// target missing, from 22 s after the first resume, itself some
		// 32 s after the start) is over, so that it meets the relay.
		t.Setenv("CHAOS_WRITE_SECONDS", "70")
	}
	runChaos(t, targetFromEnv(t), &claimPlan{seed: uint64(envInt(t, "CLAIM_SEED", 1))})
}

// claimInboxTable is the consumer kit's inbox.
const claimInboxTable = "chaos-claims-inbox"

// claimPlan is what the claim-check run adds to runChaos before the
// pipeline exists.
type claimPlan struct {
	seed uint64
	// clock is how far the stack's clock is ahead of the time.
	clock atomic.Int64
}

// tune sets what the claim-check run changes in the options: in its short
// form, a cap of 10 % on duplicates instead of 5 %. It has a quarter of the
// events of the other short runs over a longer spell of writing, so as
// many kills fall on fewer events; and a claim-checked event's object is
// tagged, under S3's faults and their retries, between its publishing and
// its marking, which widens the moment in which a kill leaves a published
// event pending. (With the five short runs side by side in make test it
// measured 6.4 %, every duplicate first received near a kill; what the
// kills explain, kills times the batch size, is many times more.)
func (p *claimPlan) tune(o *options) {
	if p == nil {
		return
	}
	o.duplicatePercent = 10
}

// useClock puts the stack on the plan's clock.
func (p *claimPlan) useClock(stack *localaws.Stack) {
	if p == nil {
		return
	}
	stack.Env().Now = func() time.Time { return time.Now().Add(time.Duration(p.clock.Load())) }
}

// vars turn the pipeline's claim check on.
func (p *claimPlan) vars() []tfrun.Var {
	if p == nil {
		return nil
	}
	return []tfrun.Var{{Name: "claim_check", Value: "true"}}
}

// claimExpect is what an event was written with.
type claimExpect struct {
	sha     string
	size    int
	claimed bool
	// reference: published as a reference, claim-checked and too large
	// for the target kind's message with its data (else published inline).
	reference bool
}

// claimRun is the claim-check run's part of a run.
type claimRun struct {
	r      *run
	plan   *claimPlan
	bucket string
	s3     *s3.Client
	kit    *consumer.Consumer[json.RawMessage]
	sizes  []int
	// overhead is what an event's published form adds to its data;
	// overheadOn that on the run's target kind, whose message holds
	// limit bytes.
	overhead, overheadOn, limit int
	began                       time.Time

	mu sync.Mutex
	// expect is every event written (committed or not), verified the
	// events the handler accepted (true when claim-checked), committedIDs
	// those that committed, and orphans the keys of the uncommitted
	// transactions' objects.
	expect       map[string]claimExpect
	verified     map[string]bool
	committedIDs map[string]bool
	orphans      map[string]string

	integrity, mismatches, kitFailures atomic.Int64
}

// start makes the run's part: the bucket, the sizes, the consumer kit and
// its inbox.
func (p *claimPlan) start(ctx context.Context, r *run, cfg aws.Config) (*claimRun, error) {
	if p == nil {
		return nil, nil
	}
	if r.out.Writer.ClaimBucket == "" {
		return nil, errors.New("the pipeline has no claim-check bucket (attribute writer.claim_bucket)")
	}
	c := &claimRun{r: r, plan: p, bucket: r.out.Writer.ClaimBucket, s3: s3.NewFromConfig(cfg), began: time.Now(),
		expect: map[string]claimExpect{}, verified: map[string]bool{}, committedIDs: map[string]bool{}, orphans: map[string]string{}}
	var err error
	if c.overhead, err = publishedOverhead(r.table, outbox.Record.PublishedSize); err != nil {
		return nil, err
	}
	onKind := func(rec outbox.Record) int { return rec.PublishedSizeOn(r.kind.name) }
	if c.overheadOn, err = publishedOverhead(r.table, onKind); err != nil {
		return nil, err
	}
	c.limit = outbox.TargetLimits[r.kind.name].MessageBytes
	if c.sizes, err = ClaimSizes(ClaimBands, r.o.events, c.overhead, p.seed); err != nil {
		return nil, err
	}
	if _, err := r.ddb.CreateTable(ctx, consumer.TableInput(claimInboxTable)); err != nil {
		return nil, fmt.Errorf("creating the inbox: %w", err)
	}
	if err := dynamodb.NewTableExistsWaiter(r.ddb).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(claimInboxTable)}, time.Minute); err != nil {
		return nil, fmt.Errorf("waiting for the inbox: %w", err)
	}
	inbox, err := consumer.NewInbox(r.ddb, claimInboxTable, consumer.WithLogger(slog.New(kitLog{c})))
	if err != nil {
		return nil, err
	}
	if c.kit, err = consumer.New(inbox, c.verify, consumer.WithObjectStore(c.s3), consumer.WithMetricsWriter(io.Discard)); err != nil {
		return nil, err
	}
	r.t.Logf("claimcheck: bucket %s; %d events from %d to %d bytes (seed %d); an event's published form is its data and %d bytes",
		c.bucket, len(c.sizes), ClaimDataSize(minOf(c.sizes)), maxOf(c.sizes), p.seed, c.overhead)
	return c, nil
}

// publishedOverhead is what the published form of the writers' events,
// measured by measure, adds to their data, on two sizes, which must agree.
func publishedOverhead(table outbox.Table, measure func(outbox.Record) int) (int, error) {
	w, err := outbox.NewWriter(nil, table)
	if err != nil {
		return 0, err
	}
	var got []int
	for _, size := range []int{2, 1000} {
		data := ClaimData(size, 0)
		_, rec, err := w.Put(outbox.Event{ID: newID(), PartitionKey: fmt.Sprintf("ORDER#%d-%06d", 0, 0), Source: eventSource, DetailType: "OrderPlaced", Detail: data})
		if err != nil {
			return 0, err
		}
		got = append(got, measure(rec)-len(data))
	}
	if got[0] != got[1] {
		return 0, fmt.Errorf("the published form adds %d bytes to 2 bytes of data, %d to 1000", got[0], got[1])
	}
	return got[0], nil
}

func minOf(s []int) int {
	m := s[0]
	for _, v := range s {
		m = min(m, v)
	}
	return m
}

func maxOf(s []int) int {
	m := s[0]
	for _, v := range s {
		m = max(m, v)
	}
	return m
}

// writerOptions give the writers the claim check.
func (c *claimRun) writerOptions() []outbox.WriterOption {
	if c == nil {
		return nil
	}
	return []outbox.WriterOption{outbox.WithClaimCheck(c.s3, c.bucket)}
}

// data is the data of the n-th event, recorded for id.
func (c *claimRun) data(id string, n int64) json.RawMessage {
	d := ClaimData(c.sizes[n], c.plan.seed<<32^uint64(n))
	c.expectData(id, d)
	return d
}

func (c *claimRun) expectData(id string, d []byte) {
	sum := sha256.Sum256(d)
	c.mu.Lock()
	claimed := len(d)+c.overhead > outbox.MaxEntryBytes
	c.expect[id] = claimExpect{sha: hex.EncodeToString(sum[:]), size: len(d), claimed: claimed, reference: claimed && len(d)+c.overheadOn > c.limit}
	c.mu.Unlock()
}

// committed records a committed event.
func (c *claimRun) committed(id string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.committedIDs[id] = true
	c.mu.Unlock()
}

// faults are S3's: throttling (SlowDown, 503) and internal errors (500) of
// the writers' PutObject, the relay's PutObjectTagging and the consumer's
// GetObject.
func (c *claimRun) faults() []control.FaultRule {
	if c == nil {
		return nil
	}
	var out []control.FaultRule
	for _, op := range []string{"PutObject", "PutObjectTagging", "GetObject"} {
		out = append(out,
			control.FaultRule{Service: "s3", Operation: op, Code: "SlowDown", HTTPStatus: 503, Rate: 0.08, Message: "chaos: please reduce your request rate"},
			control.FaultRule{Service: "s3", Operation: op, Code: "InternalError", HTTPStatus: 500, Rate: 0.06, Message: "chaos: we encountered an internal error"})
	}
	return out
}

// apply applies the messages with the consumer kit and returns the ids of
// those it failed.
func (c *claimRun) apply(ctx context.Context, msgs []sqstypes.Message) map[string]bool {
	if c == nil || len(msgs) == 0 {
		return nil
	}
	ev := events.SQSEvent{Records: make([]events.SQSMessage, len(msgs))}
	for i, m := range msgs {
		ev.Records[i] = events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body), EventSource: "aws:sqs"}
	}
	failed := map[string]bool{}
	resp, err := c.kit.HandleSQS(ctx, ev)
	if err != nil {
		c.r.fail(fmt.Errorf("the consumer kit failed a batch: %w", err))
		for _, m := range ev.Records {
			failed[m.MessageId] = true
		}
		return failed
	}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	return failed
}

// verify is the kit's handler: the event's data must be what was written,
// claim-checked exactly when its published form was over the threshold,
// and published as a reference exactly when, claim-checked, its data does
// not fit the target kind's message (the relay publishes it inline
// otherwise).
func (c *claimRun) verify(_ context.Context, e consumer.Event[json.RawMessage], _ *consumer.Tx) error {
	c.mu.Lock()
	want, ok := c.expect[e.ID]
	c.mu.Unlock()
	claimed := e.DataRef != nil
	var problem string
	switch {
	case !ok:
		problem = "was never written"
	case e.PayloadHash != want.sha || len(e.RawData) != want.size:
		problem = fmt.Sprintf("has %d bytes of SHA-256 %s, but %d bytes of %s were written", len(e.RawData), e.PayloadHash, want.size, want.sha)
	case claimed != want.reference:
		problem = fmt.Sprintf("arrived as a reference=%t, want %t for %d bytes of data (claim-checked=%t)", claimed, want.reference, want.size, want.claimed)
	case claimed && (e.DataRef.SHA256 != want.sha || e.DataRef.Size != int64(want.size)):
		problem = fmt.Sprintf("references %s of %d bytes with SHA-256 %s", e.DataRef.URI, e.DataRef.Size, e.DataRef.SHA256)
	}
	if problem != "" {
		c.mismatches.Add(1)
		err := fmt.Errorf("event %s %s", e.ID, problem)
		c.r.fail(err)
		return err
	}
	c.mu.Lock()
	c.verified[e.ID] = want.claimed
	c.mu.Unlock()
	return nil
}

// kitLog counts the deliveries the kit failed, from its log: a failed
// fetch is retried, but data that does not match its reference, or a
// message that is not an event, fails the run.
type kitLog struct{ c *claimRun }

func (h kitLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h kitLog) Handle(_ context.Context, rec slog.Record) error {
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key != "error" {
			return true
		}
		msg := a.Value.String()
		h.c.kitFailures.Add(1)
		switch {
		case strings.Contains(msg, consumer.ErrDataIntegrity.Error()):
			h.c.integrity.Add(1)
			h.c.r.fail(fmt.Errorf("the consumer kit: %s", msg))
		case strings.Contains(msg, consumer.ErrMalformedEvent.Error()):
			h.c.r.fail(fmt.Errorf("the consumer kit: %s", msg))
		}
		return false
	})
	return nil
}

func (h kitLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h kitLog) WithGroup(string) slog.Handler      { return h }

// Kinds of orphans: a transaction refused by a condition, and one never
// sent because its writer went away once the object was stored.
const (
	orphanCancelled = "cancelled"
	orphanAbandoned = "abandoned"
)

// writeOrphans stores, spread over the writing time, the objects of
// transactions that never commit: one in every 500 events, at least 4.
func (c *claimRun) writeOrphans(ctx context.Context, r *run, start time.Time) {
	if c == nil {
		return
	}
	total := max(4, r.o.events/500)
	for i := range total {
		if !sleepUntil(ctx, start.Add(time.Duration(2*i+1)*r.o.writeFor/time.Duration(2*total))) {
			return
		}
		if err := c.writeOrphan(ctx, r, i); err != nil {
			r.fail(err)
			return
		}
	}
}

// writeOrphan writes the i-th orphan: its object stored, its transaction
// cancelled or never sent.
func (c *claimRun) writeOrphan(ctx context.Context, r *run, i int) error {
	kind, condition := orphanCancelled, "attribute_exists(#pk)"
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	objects := &orphanObjects{ObjectPutter: c.s3}
	if i%2 == 1 {
		kind, condition, objects.stored = orphanAbandoned, "attribute_not_exists(#pk)", cancel
	}
	table := r.contract.current.Load().table
	w, err := outbox.NewWriter(r.ddb, table, outbox.WithClaimCheck(objects, c.bucket))
	if err != nil {
		return err
	}
	id, pk := newID(), fmt.Sprintf("ORDER#orphan-%03d", i)
	order := ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{
		TableName:                aws.String(table.Name),
		Item:                     map[string]ddbtypes.AttributeValue{table.PartitionKey: &ddbtypes.AttributeValueMemberS{Value: pk}, table.SortKey: &ddbtypes.AttributeValueMemberS{Value: "ORDER"}},
		ConditionExpression:      aws.String(condition),
		ExpressionAttributeNames: map[string]string{"#pk": table.PartitionKey},
	}}
	data := ClaimData(300<<10+i*4099, c.plan.seed<<32^uint64(1<<31+i))
	c.expectData(id, data)
	_, werr := w.Write(wctx, []ddbtypes.TransactWriteItem{order}, outbox.Event{ID: id, PartitionKey: pk, Source: eventSource, DetailType: "OrderPlaced", Detail: data})
	if werr == nil {
		return fmt.Errorf("the %s orphan %s committed", kind, id)
	}
	if !objects.put.Load() {
		r.t.Logf("claimcheck: the %s orphan %s stored no object: %v", kind, id, werr)
		return nil
	}
	exists, err := r.exists(ctx, pk, table.SortKeyFor(id))
	if err != nil {
		return fmt.Errorf("reading back the %s orphan %s: %w", kind, id, err)
	}
	if exists {
		return fmt.Errorf("the %s orphan %s committed after %w", kind, id, werr)
	}
	c.mu.Lock()
	c.orphans[outbox.ClaimObjectPrefix+id] = kind
	c.mu.Unlock()
	return nil
}

// orphanObjects is the S3 client of an orphan's writer: it records that
// the object was stored and calls stored, if set.
type orphanObjects struct {
	outbox.ObjectPutter
	put    atomic.Bool
	stored func()
}

func (o *orphanObjects) PutObject(ctx context.Context, in *s3.PutObjectInput, opts ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	out, err := o.ObjectPutter.PutObject(ctx, in, opts...)
	if err == nil {
		o.put.Store(true)
		if o.stored != nil {
			o.stored()
		}
	}
	return out, err
}

// finish sweeps the bucket as the reconciler does once the objects are
// past its grace period, takes stock of what is left, moves the stack's
// clock past the published items' TTL, and checks the run.
func (c *claimRun) finish(ctx context.Context, r *run, faults []control.FaultRule) {
	if c == nil {
		return
	}
	t := r.t
	res := c.result(r, faults)
	sweeper := claimsweep.Sweeper{S3: c.s3, Items: r.ddb, Table: r.table, Bucket: c.bucket,
		Now: func() time.Time { return time.Now().Add(claimsweep.DefaultGrace + time.Minute) }}
	swept, err := sweeper.Sweep(ctx)
	if err != nil {
		t.Fatalf("sweeping: %v", err)
	}
	t.Logf("claimcheck: the sweep examined %d objects, removed %d, kept %d", swept.Examined, swept.Removed, swept.Kept)
	res.OrphansRemoved = swept.Removed
	if err := c.takeStock(ctx, r, &res); err != nil {
		t.Fatal(err)
	}
	if res.LeftAfterTTL, err = c.expire(ctx); err != nil {
		t.Fatal(err)
	}
	res.Run = time.Since(c.began)
	t.Logf("claimcheck: the consumer kit failed %d deliveries, to be received again", c.kitFailures.Load())
	c.explainLost(r)
	line := res.Line()
	t.Log(line)
	fmt.Println(line)
	if err := res.Check(); err != nil {
		t.Error(err)
	}
}

// explainLost logs the data of a few lost events.
func (c *claimRun) explainLost(r *run) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range r.tally.Lost(10) {
		want := c.expect[id]
		r.t.Logf("claimcheck: lost %s: %d bytes of data, its published form %d bytes, claim-checked=%t", id, want.size, want.size+c.overhead, want.claimed)
	}
}

// result counts the events, their bytes, what the consumer verified, the
// orphans and the S3 faults that fired.
func (c *claimRun) result(r *run, faults []control.FaultRule) ClaimResult {
	var res ClaimResult
	_, res.Delivered = r.tally.Progress()
	c.mu.Lock()
	defer c.mu.Unlock()
	res.MinBytes = -1
	for id := range c.committedIDs {
		want := c.expect[id]
		res.Events++
		res.Bytes += int64(want.size)
		res.MaxBytes = max(res.MaxBytes, int64(want.size))
		if res.MinBytes < 0 || int64(want.size) < res.MinBytes {
			res.MinBytes = int64(want.size)
		}
		if want.claimed {
			res.WantClaimed++
		}
		if claimed, ok := c.verified[id]; ok {
			res.Verified++
			if claimed {
				res.Claimed++
			}
		}
	}
	res.OrphansWritten = len(c.orphans)
	res.IntegrityFailures, res.Mismatches = int(c.integrity.Load()), int(c.mismatches.Load())
	for _, f := range faults {
		if f.Service == "s3" {
			res.S3Faults += f.Fired
		}
	}
	return res
}

// takeStock classifies every object in the bucket after the sweep: with
// its item or tagged published (kept), or neither (an orphan left); and
// checks that each committed claim-checked event's object is among the
// kept.
func (c *claimRun) takeStock(ctx context.Context, r *run, res *ClaimResult) error {
	kept := map[string]bool{}
	err := c.eachObject(ctx, func(key string) error {
		hasItem, published, err := c.objectState(ctx, r, key)
		if err != nil {
			return err
		}
		switch {
		case !hasItem && !published:
			res.OrphansLeft++
			r.t.Logf("claimcheck: s3://%s/%s has no item and is not published (orphan: %q)", c.bucket, key, c.orphans[key])
		default:
			kept[key] = true
			res.ObjectsKept++
			if !published {
				res.Untagged++
				r.t.Logf("claimcheck: s3://%s/%s is not tagged published", c.bucket, key)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.committedIDs {
		if key := outbox.ClaimObjectPrefix + id; c.expect[id].claimed && !kept[key] {
			r.t.Logf("claimcheck: the object of the committed event %s is gone", id)
		}
	}
	return nil
}

// eachObject calls fn with the key of every object under the claim
// prefix.
func (c *claimRun) eachObject(ctx context.Context, fn func(key string) error) error {
	pages := s3.NewListObjectsV2Paginator(c.s3, &s3.ListObjectsV2Input{Bucket: aws.String(c.bucket), Prefix: aws.String(outbox.ClaimObjectPrefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("listing s3://%s: %w", c.bucket, err)
		}
		for _, o := range page.Contents {
			if err := fn(aws.ToString(o.Key)); err != nil {
				return err
			}
		}
	}
	return nil
}

// objectState reports whether the item an object's metadata names exists
// and whether the object is tagged published.
func (c *claimRun) objectState(ctx context.Context, r *run, key string) (hasItem, published bool, err error) {
	head, err := c.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(c.bucket), Key: aws.String(key)})
	if err != nil {
		return false, false, fmt.Errorf("reading s3://%s/%s: %w", c.bucket, key, err)
	}
	pk, err1 := url.PathUnescape(head.Metadata[outbox.ClaimMetaPartitionKey])
	sk, err2 := url.PathUnescape(head.Metadata[outbox.ClaimMetaSortKey])
	if err := errors.Join(err1, err2); err != nil {
		return false, false, fmt.Errorf("s3://%s/%s names its item badly (%v): %w", c.bucket, key, head.Metadata, err)
	}
	if pk == "" || sk == "" {
		return false, false, fmt.Errorf("s3://%s/%s names no item: %v", c.bucket, key, head.Metadata)
	}
	if hasItem, err = r.exists(ctx, pk, sk); err != nil {
		return false, false, err
	}
	tags, err := c.s3.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String(c.bucket), Key: aws.String(key)})
	if err != nil {
		return false, false, fmt.Errorf("reading the tags of s3://%s/%s: %w", c.bucket, key, err)
	}
	for _, tg := range tags.TagSet {
		published = published || (aws.ToString(tg.Key) == outbox.ClaimStateTag && aws.ToString(tg.Value) == outbox.ClaimStatePublished)
	}
	return hasItem, published, nil
}

// expire moves the stack's clock past the published items' TTL and the
// lifecycle rule's following midnight, and returns how many objects are
// left once S3's lifecycle sweep has had the time to remove them all.
func (c *claimRun) expire(ctx context.Context) (int, error) {
	c.plan.clock.Store(int64(config.DefaultPublishedTTL + 48*time.Hour))
	deadline := time.Now().Add(2 * time.Minute)
	for {
		n := 0
		if err := c.eachObject(ctx, func(string) error { n++; return nil }); err != nil {
			return 0, err
		}
		if n == 0 || time.Now().After(deadline) {
			return n, nil
		}
		if !sleepUntil(ctx, time.Now().Add(time.Second)) {
			return n, ctx.Err()
		}
	}
}
