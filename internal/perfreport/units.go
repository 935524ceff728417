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

	"github.com/outboxkit/terraform-provider-outbox/internal/pipeline"
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
	// Item sizes in bytes, by DynamoDB's rules (names plus values).
	AppItemBytes, OutboxItemBytes int
}

// unitsTables are the tables of the count, apart from the pipelines'.
const (
	unitsAppTable    = appTable
	unitsPipeline    = "units"
	unitsEventSource = "bench.units"
)

// measureUnits writes events with the application's item in one
// transaction and relays them in-process with each relay and action, with
// a DynamoDB client that asks for the consumed capacity of every write.
// The relays run in-process only so that their client can be counted; it
// is the same code as in the functions.
func measureUnits(ctx context.Context, cfg aws.Config, n int) (UnitsResult, error) {
	counter := NewCapacityCounter()
	ddb := dynamodb.NewFromConfig(cfg, counter.Option)
	eb := eventbridge.NewFromConfig(cfg)
	spec := pipeline.Spec{Name: unitsPipeline}
	table := spec.OutboxTable()
	if err := createTable(ctx, ddb, table.Name, &table); err != nil {
		return UnitsResult{}, err
	}
	w, err := outbox.NewWriter(ddb, table)
	if err != nil {
		return UnitsResult{}, err
	}
	res := UnitsResult{Events: n, Settle: map[string]WriteUnits{}}
	for _, impl := range []string{ModeRelay, ModeNaive} {
		for _, action := range []config.Action{config.ActionMark, config.ActionDelete} {
			key := impl + "/" + string(action)
			counter.Reset()
			var records []outbox.Record
			for i := range n {
				pk := fmt.Sprintf("ORDER#units-%s-%d", key, i)
				e := outbox.Event{Source: unitsEventSource, DetailType: "OrderPlaced", Detail: orderDetail(pk)}
				recs, err := w.Write(ctx, []ddbtypes.TransactWriteItem{orderItem(pk)}, e)
				if err != nil {
					return res, err
				}
				records = append(records, recs...)
				if res.AppItemBytes == 0 {
					res.AppItemBytes = ItemSize(orderItem(pk).Put.Item)
					res.OutboxItemBytes = ItemSize(table.Item(recs[0]))
				}
			}
			// Every combination commits the same way; keep the last.
			res.CommitApp, res.CommitOutbox = counter.Units(unitsAppTable), counter.Units(table.Name)

			s := spec
			s.PublishedAction = action
			env := s.Environment("")
			rc, err := config.FromEnv(func(k string) string { return env[k] })
			if err != nil {
				return res, err
			}
			var handle func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)
			if impl == ModeNaive {
				handle = (&naive.Relay{DynamoDB: ddb, EventBridge: eb, Config: rc}).HandleStream
			} else {
				r, err := relay.New(rc, relay.Clients{DynamoDB: ddb, EventBridge: eb}, relay.Options{})
				if err != nil {
					return res, err
				}
				handle = r.HandleStream
			}
			counter.Reset()
			for start := 0; start < len(records); start += 100 {
				batch := records[start:min(start+100, len(records))]
				resp, err := handle(ctx, relaytest.StreamEvent(table, relaytest.Inserts(table, batch)...))
				if err != nil {
					return res, fmt.Errorf("%s: %w", key, err)
				}
				if len(resp.BatchItemFailures) > 0 {
					return res, fmt.Errorf("%s: %d batch item failures", key, len(resp.BatchItemFailures))
				}
			}
			res.Settle[key] = counter.Units(table.Name)
		}
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

// ItemSize is an item's size by DynamoDB's rules: the UTF-8 bytes of each
// attribute name and value; numbers count about one byte per two digits
// plus one.
func ItemSize(item map[string]ddbtypes.AttributeValue) int {
	n := 0
	for k, v := range item {
		n += len(k) + valueSize(v)
	}
	return n
}

func valueSize(v ddbtypes.AttributeValue) int {
	switch v := v.(type) {
	case *ddbtypes.AttributeValueMemberS:
		return len(v.Value)
	case *ddbtypes.AttributeValueMemberN:
		return (len(v.Value)+1)/2 + 1
	case *ddbtypes.AttributeValueMemberB:
		return len(v.Value)
	case *ddbtypes.AttributeValueMemberBOOL, *ddbtypes.AttributeValueMemberNULL:
		return 1
	case *ddbtypes.AttributeValueMemberM:
		return 3 + ItemSize(v.Value)
	case *ddbtypes.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *ddbtypes.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	}
	return 0
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
