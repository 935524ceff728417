package perfreport

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// benchRegions are the Regions of the multi-Region runs, the first the
// writing one (the stack's default Region).
var benchRegions = []string{"us-east-1", "eu-west-1", "ap-southeast-2"}

// RegionsOptions size the multi-Region measurement.
type RegionsOptions struct {
	// Events are written in the first Region per run; default 2,000.
	Events int
	// TakeoverEvents are pending in the Region taken down; default 200.
	TakeoverEvents int
	// Interval is the reconciler's interval in the takeover run (its
	// schedule fired by the harness); TakeoverAfter and TakeoverSettle
	// the pipelines' OUTBOX_TAKEOVER_AFTER and OUTBOX_TAKEOVER_SETTLE.
	Interval, TakeoverAfter, TakeoverSettle time.Duration
	// Deadline bounds each wait for publication; default 5 minutes.
	Deadline time.Duration
	// Log receives progress.
	Log io.Writer
}

func (o *RegionsOptions) defaults() {
	orDefault(&o.Events, 2000)
	orDefault(&o.TakeoverEvents, 200)
	orDefault(&o.Interval, 5*time.Second)
	orDefault(&o.TakeoverAfter, 20*time.Second)
	orDefault(&o.TakeoverSettle, 2*time.Second)
	orDefault(&o.Deadline, 5*time.Minute)
	if o.Log == nil {
		o.Log = io.Discard
	}
}

// regionsHarness runs the multi-Region measurement on one stack.
type regionsHarness struct {
	o     RegionsOptions
	stack *localaws.Stack
	ctl   *control.Client
}

func (h *regionsHarness) say(format string, args ...any) {
	_, _ = fmt.Fprintf(h.o.Log, format+"\n", args...)
}

// cfg is the harness's AWS configuration in a Region.
func (h *regionsHarness) cfg(region string) aws.Config {
	c := awsConfig(h.stack)
	c.Region = region
	return c
}

// MeasureRegions publishes events written in one Region of a global table
// of 1, 2 and 3 Regions, each run on a stack of its own, then times a
// takeover of two Regions on another.
func MeasureRegions(ctx context.Context, o RegionsOptions) (*RegionsResult, error) {
	o.defaults()
	res := &RegionsResult{}
	for n := 1; n <= len(benchRegions); n++ {
		var run RegionsRun
		err := withRegionsStack(ctx, o, func(h *regionsHarness) error {
			var err error
			run, err = h.costRun(ctx, benchRegions[:n])
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("the %d-Region run: %w", n, err)
		}
		res.Runs = append(res.Runs, run)
	}
	err := withRegionsStack(ctx, o, func(h *regionsHarness) error {
		var err error
		res.Takeover, err = h.takeoverRun(ctx, benchRegions[:2])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("the takeover run: %w", err)
	}
	return res, nil
}

// withRegionsStack runs f on a fresh stack.
func withRegionsStack(ctx context.Context, o RegionsOptions, f func(*regionsHarness) error) error {
	stack, err := localaws.Start(ctx, localaws.Options{Addr: "127.0.0.1:0", Region: benchRegions[0], Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("starting the local AWS stack: %w", err)
	}
	defer func() { _ = stack.Close() }()
	return f(&regionsHarness{o: o, stack: stack, ctl: control.New(stack.Endpoint(), nil)})
}

// regionPipeline is one Region's pipeline of the global table.
type regionPipeline struct {
	region string
	state  provision.State
}

// deploy creates the global table in the first Region with a replica in
// each other, and a pipeline in each Region adopting it.
func (h *regionsHarness) deploy(ctx context.Context, name string, regions []string, m provision.MultiRegionSpec) ([]regionPipeline, outbox.Table, error) {
	table := outbox.Table{Name: name + "-outbox"}.WithDefaults()
	in := table.CreateTableInput()
	in.StreamSpecification = &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewTypeNewAndOldImages}
	home := dynamodb.NewFromConfig(h.cfg(regions[0]))
	if _, err := home.CreateTable(ctx, in); err != nil {
		return nil, table, fmt.Errorf("creating table %s: %w", table.Name, err)
	}
	if err := waitTableActive(ctx, home, table.Name); err != nil {
		return nil, table, err
	}
	for _, r := range regions[1:] {
		if _, err := home.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(table.Name),
			ReplicaUpdates: []ddbtypes.ReplicationGroupUpdate{{Create: &ddbtypes.CreateReplicationGroupMemberAction{RegionName: aws.String(r)}}}}); err != nil {
			return nil, table, fmt.Errorf("adding the replica in %s: %w", r, err)
		}
		if err := waitTableActive(ctx, home, table.Name); err != nil {
			return nil, table, err
		}
		if err := waitTableActive(ctx, dynamodb.NewFromConfig(h.cfg(r)), table.Name); err != nil {
			return nil, table, err
		}
	}
	if len(regions) == 1 {
		m = provision.MultiRegionSpec{}
	}
	var out []regionPipeline
	for _, r := range regions {
		spec := provision.Spec{Name: name + "-" + r, Architecture: nativeArch(), MultiRegion: m,
			Table:      provision.TableSpec{Existing: true, Name: table.Name},
			Reconciler: provision.ReconcilerSpec{MinAge: time.Second}}
		st, err := provision.New(h.cfg(r), relayCode()).Create(ctx, spec)
		if err != nil {
			return nil, table, fmt.Errorf("creating the pipeline in %s: %w", r, err)
		}
		out = append(out, regionPipeline{region: r, state: st})
		table = spec.OutboxTable().WithDefaults()
	}
	return out, table, nil
}

// waitTableActive waits until the table and its replicas are active.
func waitTableActive(ctx context.Context, ddb *dynamodb.Client, name string) error {
	return waitFor(ctx, 2*time.Minute, "table "+name+" to be active", func() (bool, error) {
		d, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			return false, nil //nolint:nilerr // a replica being created is not found yet
		}
		if d.Table.TableStatus != ddbtypes.TableStatusActive {
			return false, nil
		}
		for _, r := range d.Table.Replicas {
			if r.ReplicaStatus != ddbtypes.ReplicaStatusActive {
				return false, nil
			}
		}
		return true, nil
	})
}

// writeEvents writes n events in region, one per transaction, and returns
// the write units the transactions consumed.
func (h *regionsHarness) writeEvents(ctx context.Context, region string, table outbox.Table, tag string, n int) (float64, error) {
	counter := NewCapacityCounter()
	w, err := outbox.NewWriter(dynamodb.NewFromConfig(h.cfg(region), counter.Option), table)
	if err != nil {
		return 0, err
	}
	for i := range n {
		id := fmt.Sprintf("%s-%d", tag, i)
		if _, err := w.Write(ctx, nil, outbox.Event{PartitionKey: "ORDER#" + id, Source: "bench.regions", DetailType: "OrderPlaced", Detail: orderDetail(id)}); err != nil {
			return 0, fmt.Errorf("writing event %d: %w", i, err)
		}
	}
	return counter.Units(table.Name).Total(), nil
}

// published counts the outbox items PUBLISHED in a Region's replica.
func (h *regionsHarness) published(ctx context.Context, region string, table outbox.Table) (int, error) {
	ddb := dynamodb.NewFromConfig(h.cfg(region))
	p := dynamodb.NewScanPaginator(ddb, &dynamodb.ScanInput{TableName: aws.String(table.Name), ConsistentRead: aws.Bool(true),
		FilterExpression:          aws.String("#s = :p"),
		ExpressionAttributeNames:  map[string]string{"#s": outbox.AttrStatus},
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":p": &ddbtypes.AttributeValueMemberS{Value: string(outbox.StatusPublished)}},
	})
	n := 0
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, err
		}
		n += int(page.Count)
	}
	return n, nil
}

// replicated waits until no replication is waiting.
func (h *regionsHarness) replicated(ctx context.Context) error {
	return waitFor(ctx, h.o.Deadline, "replication to catch up", func() (bool, error) {
		r, err := h.ctl.Replication(ctx)
		if err != nil {
			return false, err
		}
		for _, n := range r.Pending {
			if n > 0 {
				return false, nil
			}
		}
		return true, nil
	})
}

// streamCount is what a Region's stream holds.
type streamCount struct {
	records, eventWrites, marks int64
}

// readStream reads every record of a Region's stream: all of them, the
// writes of event items (sort key prefix OUTBOX#), and the marks (MODIFY
// records of event items, PUBLISHED).
func (h *regionsHarness) readStream(ctx context.Context, region, arn string, table outbox.Table) (streamCount, error) {
	ds := dynamodbstreams.NewFromConfig(h.cfg(region))
	d, err := ds.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)})
	if err != nil {
		return streamCount{}, err
	}
	var c streamCount
	prefix, sk := table.SortKeyPrefix, table.SortKey
	for _, sh := range d.StreamDescription.Shards {
		it, err := ds.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: sh.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			return c, err
		}
		for iter := it.ShardIterator; iter != nil; {
			out, err := ds.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			if err != nil {
				return c, err
			}
			for _, r := range out.Records {
				c.records++
				key, _ := r.Dynamodb.Keys[sk].(*streamtypes.AttributeValueMemberS)
				if key == nil || !strings.HasPrefix(key.Value, prefix) {
					continue
				}
				c.eventWrites++
				if r.EventName == streamtypes.OperationTypeModify {
					if s, _ := r.Dynamodb.NewImage[outbox.AttrStatus].(*streamtypes.AttributeValueMemberS); s != nil && s.Value == string(outbox.StatusPublished) {
						c.marks++
					}
				}
			}
			if len(out.Records) == 0 {
				break
			}
			iter = out.NextShardIterator
		}
	}
	return c, nil
}
