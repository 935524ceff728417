package perfreport

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/naive"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// UnitsResult is the DynamoDB write request units per event, counted from
// the consumed capacity of every write request.
type UnitsResult struct {
	Events int
	// Commit is the application's transaction (its item and the outbox
	// item); App the application's item, Outbox the outbox table.
	CommitApp, CommitOutbox WriteUnits
	// Settle is what each relay writes after publishing, by relay and
	// action ("relay/mark").
	Settle map[string]WriteUnits
	// DualWrite is the naive dual write's PutItem of the application's
	// item (its event goes straight to EventBridge).
	DualWrite WriteUnits
	// CommitOutboxGSIFree is the outbox item's write in a table without
	// the pending index; Settle[UnitsGSIFree] is its delete by the relay.
	CommitOutboxGSIFree WriteUnits
	// Item sizes in bytes, by DynamoDB's rules (names plus values).
	AppItemBytes, OutboxItemBytes int
}

// UnitsGSIFree is the Settle key of the relay in delete mode on a
// dedicated table without the pending index.
const UnitsGSIFree = "relay/delete/gsi-free"

// Total is the write units per event of the combination key of Settle:
// the application's item and the outbox item in one transaction, then the
// relay's settle write.
func (u UnitsResult) Total(key string) float64 {
	commit := u.CommitOutbox
	if key == UnitsGSIFree {
		commit = u.CommitOutboxGSIFree
	}
	return perEvent(u.CommitApp, u.Events) + perEvent(commit, u.Events) + perEvent(u.Settle[key], u.Events)
}

// unitsTables are the tables of the count, apart from the pipelines'.
const (
	unitsAppTable    = appTable
	unitsPipeline    = "units"
	unitsEventSource = "bench.units"
)

// unitsRun is one combination of the count: a relay with an action on a
// pipeline's table.
type unitsRun struct {
	key    string
	impl   string
	spec   provision.Spec
	index  bool
	extras map[string]string
}

// table is the run's outbox table; without the index, the writer leaves
// out the pending index keys.
func (u unitsRun) table() outbox.Table {
	t := u.spec.OutboxTable()
	t.NoPendingIndex = !u.index
	return t
}

// unitsRuns are the combinations counted: each relay with each action on a
// table with the pending index, and the relay deleting on a table without.
func unitsRuns() []unitsRun {
	var runs []unitsRun
	for _, impl := range []string{ModeRelay, ModeNaive} {
		for _, action := range []config.Action{config.ActionMark, config.ActionDelete} {
			spec := provision.Spec{Name: unitsPipeline, PublishedAction: action}
			runs = append(runs, unitsRun{key: impl + "/" + string(action), impl: impl, spec: spec, index: true})
		}
	}
	free := provision.Spec{Name: unitsPipeline + "-gsi-free", PublishedAction: config.ActionDelete}
	return append(runs, unitsRun{key: UnitsGSIFree, impl: ModeRelay, spec: free,
		extras: map[string]string{config.EnvPendingIndexEnabled: "false"}})
}

// measureUnits writes events with the application's item in one
// transaction and relays them in-process with each relay and action, with
// a DynamoDB client that asks for the consumed capacity of every write.
// The relays run in-process only so that their client can be counted; it
// is the same code as in the functions.
func measureUnits(ctx context.Context, cfg aws.Config, n int) (UnitsResult, error) {
	counter := NewCapacityCounter()
	ddb := dynamodb.NewFromConfig(cfg, counter.Option)
	eb := eventbridge.NewFromConfig(cfg)
	res := UnitsResult{Events: n, Settle: map[string]WriteUnits{}}
	created := map[string]bool{}
	for _, run := range unitsRuns() {
		table := run.table()
		if !created[table.Name] {
			if err := createTable(ctx, ddb, table); err != nil {
				return res, err
			}
			created[table.Name] = true
		}
		counter.Reset()
		records, err := writeUnitsEvents(ctx, ddb, table, run.key, n, &res)
		if err != nil {
			return res, err
		}
		if run.key == UnitsGSIFree {
			res.CommitOutboxGSIFree = counter.Units(table.Name)
		} else {
			// Every combination with the index commits the same way; keep the last.
			res.CommitApp, res.CommitOutbox = counter.Units(unitsAppTable), counter.Units(table.Name)
		}
		counter.Reset()
		if err := relayUnits(ctx, ddb, eb, run, records); err != nil {
			return res, err
		}
		res.Settle[run.key] = counter.Units(table.Name)
	}
	counter.Reset()
	for i := range n {
		pk := fmt.Sprintf("ORDER#units-dual-%d", i)
		if _, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(unitsAppTable), Item: orderItem(pk).Put.Item}); err != nil {
			return res, err
		}
		if _, err := eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
			Source: aws.String(unitsEventSource), DetailType: aws.String("OrderPlaced"),
			Detail: aws.String(string(orderDetail(pk))), Time: aws.Time(time.Now()),
		}}}); err != nil {
			return res, err
		}
	}
	res.DualWrite = counter.Units(unitsAppTable)
	return res, nil
}

// writeUnitsEvents commits n events, each with an application item, and
// records the item sizes in res.
func writeUnitsEvents(ctx context.Context, ddb *dynamodb.Client, table outbox.Table, key string, n int, res *UnitsResult) ([]outbox.Record, error) {
	w, err := outbox.NewWriter(ddb, table)
	if err != nil {
		return nil, err
	}
	var records []outbox.Record
	for i := range n {
		pk := fmt.Sprintf("ORDER#units-%s-%d", key, i)
		e := outbox.Event{Source: unitsEventSource, DetailType: "OrderPlaced", Detail: orderDetail(pk)}
		recs, err := w.Write(ctx, []ddbtypes.TransactWriteItem{orderItem(pk)}, e)
		if err != nil {
			return nil, err
		}
		records = append(records, recs...)
		if res.AppItemBytes == 0 {
			res.AppItemBytes = relaytest.ItemSize(orderItem(pk).Put.Item)
			res.OutboxItemBytes = relaytest.ItemSize(table.Item(recs[0]))
		}
	}
	return records, nil
}

// relayUnits relays records in batches of 100 with the run's relay.
func relayUnits(ctx context.Context, ddb *dynamodb.Client, eb *eventbridge.Client, run unitsRun, records []outbox.Record) error {
	env := run.spec.Environment("")
	for k, v := range run.extras {
		env[k] = v
	}
	rc, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		return err
	}
	var handle func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)
	if run.impl == ModeNaive {
		handle = (&naive.Relay{DynamoDB: ddb, EventBridge: eb, Config: rc}).HandleStream
	} else {
		r, err := relay.New(rc, relay.Clients{DynamoDB: ddb, Target: eb}, relay.Options{})
		if err != nil {
			return err
		}
		handle = r.HandleStream
	}
	table := run.table()
	for start := 0; start < len(records); start += 100 {
		batch := records[start:min(start+100, len(records))]
		resp, err := handle(ctx, relaytest.StreamEvent(table, relaytest.Inserts(table, batch)...))
		if err != nil {
			return fmt.Errorf("%s: %w", run.key, err)
		}
		if len(resp.BatchItemFailures) > 0 {
			return fmt.Errorf("%s: %d batch item failures", run.key, len(resp.BatchItemFailures))
		}
	}
	return nil
}

// bootstrapSize is the uncompressed size of a package's bootstrap.
func bootstrapSize(b []byte) int64 {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return 0
	}
	for _, f := range zr.File {
		if f.Name == "bootstrap" {
			return int64(f.UncompressedSize64)
		}
	}
	return 0
}
