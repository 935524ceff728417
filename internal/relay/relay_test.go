package relay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// now is the relay's clock in reconcile tests: an hour after the records
// occurred.
var now = relaytest.Clock.Add(time.Hour)

// streamNow is the relay's clock in stream tests: a second after the
// records occurred, as when the stream keeps up.
var streamNow = relaytest.Clock.Add(time.Second)

var layouts = map[string]outbox.Table{
	// Dedicated table, default names.
	"dedicated": outbox.Table{Name: "orders-outbox"}.WithDefaults(),
	// Shared table: the application's own keys, events next to aggregates.
	"shared": outbox.Table{Name: "orders", Layout: outbox.LayoutShared, PartitionKey: "pk", SortKey: "sk", SortKeyPrefix: "EVT#", TTLAttribute: "ttl"}.WithDefaults(),
}

// testConfig returns a relay configuration for table.
func testConfig(table outbox.Table, target config.Target, action config.Action) config.Config {
	return config.Config{
		Table: table, Target: targetSettings(target),
		PublishedAction: action, PublishedTTL: 720 * time.Hour, ReconcileMinAge: 5 * time.Minute,
	}
}

// targetKinds are the kinds of target, each tested.
var targetKinds = targetkind.Types()

// targetSQS is the sqs kind, for the tests whose target variable hides
// package target.
const targetSQS = targetkind.SQS

// targetSettings are the test target of each kind.
func targetSettings(t config.Target) targetkind.Settings {
	switch t {
	case targetkind.SNS:
		return targetkind.Settings{Type: t, TopicARN: "arn:aws:sns:us-east-1:123456789012:orders"}
	case targetkind.SQS:
		return targetkind.Settings{Type: t, QueueARN: "arn:aws:sqs:us-east-1:123456789012:orders"}
	}
	return targetkind.Settings{Type: t, EventBus: "orders-bus"}
}

// noSleep retries at once.
var noSleep = retry.Policy{Attempts: 3, Base: time.Millisecond, Max: time.Millisecond, Margin: 0,
	Sleep: func(context.Context, time.Duration) error { return nil }}

type harness struct {
	now     time.Time
	fake    *relaytest.AWS
	relay   *relay.Relay
	logs    *bytes.Buffer
	metrics *bytes.Buffer
}

// newHarness returns a harness whose relay's clock is streamNow.
func newHarness(t *testing.T, cfg config.Config) *harness {
	t.Helper()
	return newHarnessAt(t, cfg, streamNow)
}

// newHarnessAt returns a harness whose relay's clock is at.
func newHarnessAt(t *testing.T, cfg config.Config, at time.Time) *harness {
	t.Helper()
	h := &harness{now: at, fake: relaytest.New(t, cfg.Table), logs: &bytes.Buffer{}, metrics: &bytes.Buffer{}}
	h.relay = newRelay(t, cfg, h.fake, relay.Options{
		Log: newLogger(h.logs), Metrics: h.metrics, FunctionName: "outbox-relay",
		Now: func() time.Time { return at }, Retry: &noSleep,
	})
	return h
}

// stored returns n records of the harness's table (32-byte details),
// stored as pending items.
func (h *harness) stored(n int) []outbox.Record {
	records := relaytest.Records(h.fake.Table, n, 32)
	h.fake.PutRecords(records)
	return records
}

// handleInserts hands the relay the stream batch of the insertion of
// records, and returns the sequence numbers it reports failed.
func (h *harness) handleInserts(t *testing.T, records []outbox.Record) []string {
	t.Helper()
	table := h.fake.Table
	resp, err := h.relay.HandleStream(context.Background(), relaytest.StreamEvent(table, relaytest.Inserts(table, records)...))
	if err != nil {
		t.Fatal(err)
	}
	return failures(resp)
}

func failures(resp events.DynamoDBEventResponse) []string {
	ids := []string{}
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

// classMetric returns PublishErrors of one ErrorClass over the EMF
// documents written.
func (h *harness) classMetric(t *testing.T, class string) float64 {
	t.Helper()
	total := 0.0
	for _, line := range strings.Split(strings.TrimSpace(h.metrics.String()), "\n") {
		var doc map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		if v, ok := doc["PublishErrors"].(float64); ok && doc["ErrorClass"] == class {
			total += v
		}
	}
	return total
}

// metric returns the sum of a metric over the EMF documents written.
func (h *harness) metric(t *testing.T, name string) float64 {
	t.Helper()
	total := 0.0
	for _, line := range strings.Split(strings.TrimSpace(h.metrics.String()), "\n") {
		if line == "" {
			continue
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		switch v := doc[name].(type) {
		case float64:
			total += v
		case []any:
			total += float64(len(v))
		}
	}
	return total
}

func TestStreamMixedBatch(t *testing.T) {
	t.Parallel()
	for layoutName, table := range layouts {
		for _, target := range targetKinds {
			for _, action := range []config.Action{config.ActionMark, config.ActionDelete} {
				t.Run(fmt.Sprintf("%s/%s/%s", layoutName, target, action), func(t *testing.T) {
					t.Parallel()
					h := newHarness(t, testConfig(table, target, action))
					b := newMixedBatch(h, table)
					resp, err := h.relay.HandleStream(context.Background(), relaytest.StreamEvent(table, b.streamRecords()...))
					if err != nil {
						t.Fatal(err)
					}
					if got := failures(resp); len(got) != 0 {
						t.Errorf("batchItemFailures = %v, want none", got)
					}
					b.checkPublished(t, h, target)
					b.checkSettled(t, h, action)
					h.checkMetrics(t, map[string]float64{"EventsPublished": 3, "EventsFailed": 1, "PublishLatency": 3})
					// Writes: one publishing call, then 3 marks or 1 batch
					// delete, plus 1 FAILED mark.
					wantPublishCalls := 1
					if got := h.fake.Calls(relaytest.OpPutEvents) + h.fake.Calls(relaytest.OpPublishBatch) + h.fake.Calls(relaytest.OpSendMessageBatch); got != wantPublishCalls {
						t.Errorf("publish calls = %d, want %d", got, wantPublishCalls)
					}
				})
			}
		}
	}
}

// mixedBatch is a stream batch of every kind of record a relay meets:
// outbox inserts (records 0, 1 and 3 with images, 2 without), a malformed
// outbox item, a foreign item of a shared table, the relay's own MODIFY and
// REMOVE, and an item without the table's keys.
type mixedBatch struct {
	table   outbox.Table
	records []outbox.Record
	bad     outbox.Record
	badItem map[string]types.AttributeValue
}

// newMixedBatch stores the batch's outbox items in h's table.
func newMixedBatch(h *harness, table outbox.Table) *mixedBatch {
	b := &mixedBatch{table: table, records: relaytest.Records(table, 4, 64)}
	b.records[1].TraceHeader = "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1"
	h.fake.PutRecords(b.records)
	// A malformed outbox item: detail is not a JSON object.
	b.bad = relaytest.Records(table, 1, 10)[0]
	b.badItem = table.Item(b.bad)
	b.badItem[outbox.AttrDetail] = &types.AttributeValueMemberS{Value: "not json"}
	b.bad.PartitionKey, b.bad.SortKey = "BAD#1", table.SortKeyFor("01JDQ8Z7K5V6W3X2Y1Z0ABCDEF")
	b.badItem[table.PartitionKey] = &types.AttributeValueMemberS{Value: b.bad.PartitionKey}
	b.badItem[table.SortKey] = &types.AttributeValueMemberS{Value: b.bad.SortKey}
	b.badItem[outbox.AttrEventID] = &types.AttributeValueMemberS{Value: "01JDQ8Z7K5V6W3X2Y1Z0ABCDEF"}
	h.fake.Put(b.badItem)
	return b
}

func (b *mixedBatch) streamRecords() []relaytest.StreamRecord {
	table, records := b.table, b.records
	// A foreign item of the shared table, and an outbox item without a
	// new image (KEYS_ONLY view).
	foreign := map[string]types.AttributeValue{
		table.PartitionKey: &types.AttributeValueMemberS{Value: "ORDER#1"},
		table.SortKey:      &types.AttributeValueMemberS{Value: "ORDER#1"},
		"total":            &types.AttributeValueMemberN{Value: "42.5"},
	}
	published := table.Item(records[0])
	published[outbox.AttrStatus] = &types.AttributeValueMemberS{Value: string(outbox.StatusPublished)}
	return []relaytest.StreamRecord{
		{NewImage: table.Item(records[0])},
		{NewImage: foreign},
		{EventName: "MODIFY", NewImage: published, OldImage: table.Item(records[0])},
		{NewImage: table.Item(records[1])},
		{EventName: "REMOVE", OldImage: published},
		{NewImage: b.badItem},
		{Keys: table.Key(records[2])}, // no image
		{NewImage: table.Item(records[3])},
		{NewImage: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "x"}}},
	}
}

// checkPublished checks that records 0, 1 and 3 were published, once each.
func (b *mixedBatch) checkPublished(t *testing.T, h *harness, target config.Target) {
	t.Helper()
	records := b.records
	pub := h.fake.Published()
	var ids []string
	for _, p := range pub {
		ids = append(ids, p.EventID)
	}
	slices.Sort(ids)
	want := []string{records[0].EventID, records[1].EventID, records[3].EventID}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("published %v, want %v", ids, want)
	}
	for _, p := range pub {
		r := records[slices.IndexFunc(records, func(r outbox.Record) bool { return r.EventID == p.EventID })]
		checkPublished(t, target, p, r)
	}
}

// checkSettled checks that the published records are marked or deleted,
// the one without image is left pending and the malformed one is FAILED.
func (b *mixedBatch) checkSettled(t *testing.T, h *harness, action config.Action) {
	t.Helper()
	for _, i := range []int{0, 1, 3} {
		item := h.fake.Item(b.records[i].PartitionKey, b.records[i].SortKey)
		switch action {
		case config.ActionDelete:
			if item != nil {
				t.Errorf("record %d not deleted", i)
			}
		case config.ActionMark:
			checkMarked(t, b.table, item, h.now)
		}
	}
	if got := h.fake.Status(b.records[2]); got != string(outbox.StatusPending) {
		t.Errorf("record without image: status %q, want it left PENDING for the reconciler", got)
	}
	badNow := h.fake.Item(b.bad.PartitionKey, b.bad.SortKey)
	if s := badNow[outbox.AttrStatus].(*types.AttributeValueMemberS).Value; s != string(outbox.StatusFailed) {
		t.Errorf("malformed item status %q, want FAILED", s)
	}
	if e, _ := badNow[outbox.AttrLastError].(*types.AttributeValueMemberS); e == nil || !strings.Contains(e.Value, "detail") {
		t.Errorf("malformed item lastError = %v", badNow[outbox.AttrLastError])
	}
	if _, ok := badNow[outbox.AttrPendingShard]; ok {
		t.Error("malformed item still in the pending index")
	}
}

// checkMetrics checks the sums of metrics (the number of values of a
// list metric such as PublishLatency).
func (h *harness) checkMetrics(t *testing.T, want map[string]float64) {
	t.Helper()
	for name, w := range want {
		if got := h.metric(t, name); got != w {
			t.Errorf("%s = %v, want %v", name, got, w)
		}
	}
}

func checkPublished(t *testing.T, target config.Target, p relaytest.Published, r outbox.Record) {
	t.Helper()
	if p.Source != r.Source || p.DetailType != r.DetailType {
		t.Errorf("%s: source/detail type %q/%q", r.EventID, p.Source, p.DetailType)
	}
	if !p.Time.Equal(r.OccurredAt.Truncate(time.Second)) && !p.Time.Equal(r.OccurredAt) {
		t.Errorf("%s: time %v, want %v", r.EventID, p.Time, r.OccurredAt)
	}
	switch target {
	case config.TargetEventBridge:
		if p.Body != string(r.DetailJSON()) {
			t.Errorf("%s: detail %s, want %s", r.EventID, p.Body, r.DetailJSON())
		}
		if p.EventBus != "orders-bus" {
			t.Errorf("%s: bus %q", r.EventID, p.EventBus)
		}
		if p.TraceHeader != r.TraceHeader {
			t.Errorf("%s: trace header %q, want %q", r.EventID, p.TraceHeader, r.TraceHeader)
		}
	case config.TargetSNS, targetSQS:
		if p.Body != string(r.EnvelopeJSON()) {
			t.Errorf("%s: message %s, want %s", r.EventID, p.Body, r.EnvelopeJSON())
		}
		if p.Attributes["source"] != r.Source || p.Attributes["detail-type"] != r.DetailType {
			t.Errorf("%s: attributes %v", r.EventID, p.Attributes)
		}
	}
}

func checkMarked(t *testing.T, table outbox.Table, item map[string]types.AttributeValue, now time.Time) {
	t.Helper()
	if item == nil {
		t.Fatal("marked item is gone")
	}
	if s := item[outbox.AttrStatus].(*types.AttributeValueMemberS).Value; s != string(outbox.StatusPublished) {
		t.Errorf("status %q, want PUBLISHED", s)
	}
	exp, ok := item[table.TTLAttribute].(*types.AttributeValueMemberN)
	if !ok {
		t.Fatalf("no %s attribute", table.TTLAttribute)
	}
	if want := strconv.FormatInt(now.Add(720*time.Hour).Unix(), 10); exp.Value != want {
		t.Errorf("%s = %s, want %s", table.TTLAttribute, exp.Value, want)
	}
	for _, a := range []string{outbox.AttrPendingShard, outbox.AttrPendingSince} {
		if _, ok := item[a]; ok {
			t.Errorf("%s still set: the item stays in the pending index", a)
		}
	}
}

func TestStreamPublishFailures(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	// Per record: the entry error codes of successive attempts.
	scripts := [][]string{
		{"InternalFailure", ""},         // 0: retried, then published
		{"ThrottlingException"},         // 1: throttled on every attempt: left pending
		{"MalformedDetail"},             // 2: the event's own fault: poison
		{"AccessDeniedException"},       // 3: the environment's: left pending
		{""},                            // 4: published
		{"ThrottlingException", "", ""}, // 5: retried, then published
		{"InternalFailure", "InternalFailure", "InternalFailure", ""}, // 6: out of attempts (3)
	}
	for _, target := range targetKinds {
		t.Run(string(target), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, testConfig(table, target, config.ActionMark))
			records := relaytest.Records(table, len(scripts), 32)
			byID := map[string][]string{}
			for i, r := range records {
				h.fake.PutRecord(r)
				byID[r.EventID] = scripts[i]
			}
			h.fake.EntryError = func(id string, attempt int) string {
				s := byID[id]
				code := s[min(attempt, len(s))-1]
				switch target {
				case config.TargetSNS:
					// SNS's names for the same failures.
					code = map[string]string{"InternalFailure": "InternalError", "ThrottlingException": "Throttled",
						"MalformedDetail": "InvalidParameter", "AccessDeniedException": "AuthorizationError"}[code]
				case targetSQS:
					// SQS's.
					code = map[string]string{"InternalFailure": "InternalError", "ThrottlingException": "RequestThrottled",
						"MalformedDetail": "InvalidMessageContents", "AccessDeniedException": "AccessDenied"}[code]
				}
				return code
			}
			h.fake.SNSSenderFault = func(code string) bool { return code != "InternalError" }
			ev := relaytest.StreamEvent(table, relaytest.Inserts(table, records)...)
			resp, err := h.relay.HandleStream(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{relaytest.SequenceNumber(1), relaytest.SequenceNumber(3), relaytest.SequenceNumber(6)}
			if got := failures(resp); !slices.Equal(got, want) {
				t.Errorf("batchItemFailures = %v, want %v (sequence numbers, not event ids)", got, want)
			}
			for _, f := range resp.BatchItemFailures {
				for _, rec := range ev.Records {
					if f.ItemIdentifier == rec.EventID {
						t.Errorf("itemIdentifier %q is an eventID", f.ItemIdentifier)
					}
				}
			}
			wantStatus := []outbox.Status{"PUBLISHED", "PENDING", "FAILED", "PENDING", "PUBLISHED", "PUBLISHED", "PENDING"}
			for i, r := range records {
				if got := h.fake.Status(r); got != string(wantStatus[i]) {
					t.Errorf("record %d: status %s, want %s", i, got, wantStatus[i])
				}
			}
			// Retries: 1 (record 0) + 2 (1) + 1 (5) + 2 (6).
			h.checkMetrics(t, map[string]float64{"EventsRetried": 6, "EventsFailed": 1, "EventsLeftPending": 3})
			for class, want := range map[string]float64{"environment": 1, "throttling": 1, "poison": 1, "transient": 1} {
				if got := h.classMetric(t, class); got != want {
					t.Errorf("PublishErrors{ErrorClass=%s} = %v, want %v", class, got, want)
				}
			}
			hint := map[config.Target]string{
				config.TargetEventBridge: "the relay role may lack events:PutEvents on the bus orders-bus",
				config.TargetSNS:         "the relay role may lack sns:Publish on the topic arn:aws:sns:us-east-1:123456789012:orders",
				targetSQS:                "the relay role may lack sqs:SendMessage on the queue arn:aws:sqs:us-east-1:123456789012:orders",
			}[target]
			if !strings.Contains(h.logs.String(), hint) {
				t.Errorf("logs lack the hint %q:\n%s", hint, h.logs.String())
			}
		})
	}
}

func TestStreamWholeCallErrors(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	throttle := &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate exceeded"}
	denied := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "not authorized to perform events:PutEvents"}
	tests := []struct {
		name         string
		callErr      func(op string, n int) error
		wantFailures int
		wantStatus   outbox.Status
	}{
		{"throttled once", func(op string, n int) error {
			if op == relaytest.OpPutEvents && n == 1 {
				return throttle
			}
			return nil
		}, 0, outbox.StatusPublished},
		{"throttled always", func(op string, n int) error {
			if op == relaytest.OpPutEvents {
				return throttle
			}
			return nil
		}, 3, outbox.StatusPending},
		// An error for the whole call is not the events' fault: they stay
		// pending instead of being marked FAILED.
		{"access denied", func(op string, n int) error {
			if op == relaytest.OpPutEvents {
				return denied
			}
			return nil
		}, 3, outbox.StatusPending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, testConfig(table, config.TargetEventBridge, config.ActionMark))
			h.fake.CallError = tt.callErr
			records := h.stored(3)
			if got := len(h.handleInserts(t, records)); got != tt.wantFailures {
				t.Errorf("%d failures, want %d", got, tt.wantFailures)
			}
			for i, r := range records {
				if got := h.fake.Status(r); got != string(tt.wantStatus) {
					t.Errorf("record %d: %s, want %s", i, got, tt.wantStatus)
				}
			}
		})
	}
}

func TestStreamMarkOutcomes(t *testing.T) {
	t.Parallel()
	table := layouts["shared"]
	throughput := &types.ProvisionedThroughputExceededException{Message: new(string)}
	invalid := &smithy.GenericAPIError{Code: "ValidationException", Message: "The provided key element does not match the schema"}
	h := newHarness(t, testConfig(table, config.TargetEventBridge, config.ActionMark))
	records := h.stored(6)
	// 0: already published by another invocation: the condition fails.
	alreadyPublished := table.Item(records[0])
	alreadyPublished[outbox.AttrStatus] = &types.AttributeValueMemberS{Value: string(outbox.StatusPublished)}
	h.fake.Put(alreadyPublished)
	// 1: already deleted.
	deleted := records[1]
	h.fake.WriteError = func(sk string, attempt int) error {
		switch sk {
		case records[2].SortKey: // throttled once
			if attempt == 1 {
				return throughput
			}
		case records[3].SortKey: // throttled on every attempt
			return throughput
		case records[4].SortKey: // permanent
			return invalid
		}
		return nil
	}
	stream := relaytest.Inserts(table, records)
	// Delete record 1 before the relay sees it.
	fakeDelete(h.fake, table, deleted)

	resp, err := h.relay.HandleStream(context.Background(), relaytest.StreamEvent(table, stream...))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{relaytest.SequenceNumber(3), relaytest.SequenceNumber(4)}
	if got := failures(resp); !slices.Equal(got, want) {
		t.Errorf("batchItemFailures = %v, want %v", got, want)
	}
	// Records 0 (already published) and 1 (gone) are skipped by the status
	// check; 2 to 5 are published, and marking comes after publishing.
	if got := len(h.fake.Published()); got != 4 {
		t.Errorf("%d events published, want 4", got)
	}
	if got := h.fake.Status(records[1]); got != "" {
		t.Errorf("deleted item came back with status %q", got)
	}
	if got := h.fake.Status(records[2]); got != string(outbox.StatusPublished) {
		t.Errorf("throttled-once item: %s", got)
	}
}

func fakeDelete(f *relaytest.AWS, table outbox.Table, r outbox.Record) {
	_, _ = f.BatchWriteItem(context.Background(), batchDelete(table, r))
}

func TestStreamDeleteUnprocessed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, testConfig(layouts["dedicated"], config.TargetEventBridge, config.ActionDelete))
	records := h.stored(60)
	h.fake.Unprocessed = func(sk string, attempt int) bool {
		switch sk {
		case records[7].SortKey, records[30].SortKey:
			return attempt == 1 // unprocessed once
		case records[59].SortKey:
			return true // never processed
		}
		return false
	}
	if got, want := h.handleInserts(t, records), []string{relaytest.SequenceNumber(59)}; !slices.Equal(got, want) {
		t.Errorf("batchItemFailures = %v, want %v", got, want)
	}
	for i, r := range records {
		if gone := h.fake.Item(r.PartitionKey, r.SortKey) == nil; gone != (i != 59) {
			t.Errorf("record %d: deleted = %v", i, gone)
		}
	}
	// 60 deletes: 3 calls of at most 25, then 2 retries (records 7 and 30
	// are in different calls; 59 is retried until the attempts run out).
	if got := h.fake.Calls(relaytest.OpBatchWriteItem); got < 3 || got > 3+2+2 {
		t.Errorf("%d BatchWriteItem calls", got)
	}
	if got := h.fake.Calls(relaytest.OpPutEvents); got != 6 {
		t.Errorf("%d PutEvents calls, want 6", got)
	}
}

func TestStreamOversize(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	for _, target := range targetKinds {
		t.Run(string(target), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, testConfig(table, target, config.ActionMark))
			records := relaytest.Records(table, 3, 32)
			// Written by a writer that does not check the size: over the
			// kind's own limit.
			records[1].Detail = json.RawMessage(`{"blob":"` + strings.Repeat("a", outbox.TargetLimits[string(target)].MessageBytes) + `"}`)
			h.fake.PutRecords(records)
			if failed := h.handleInserts(t, records); len(failed) != 0 {
				t.Errorf("failures %v: a too large event must not block the shard", failed)
			}
			want := []string{"PUBLISHED", "FAILED", "PUBLISHED"}
			for i, r := range records {
				if got := h.fake.Status(r); got != want[i] {
					t.Errorf("record %d: %s, want %s", i, got, want[i])
				}
			}
			item := h.fake.Item(records[1].PartitionKey, records[1].SortKey)
			if e := item[outbox.AttrLastError].(*types.AttributeValueMemberS).Value; !strings.Contains(e, "bytes") {
				t.Errorf("lastError %q", e)
			}
		})
	}
}

func TestPutEventsChunking(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	tests := []struct {
		name        string
		n, bytes    int
		wantCalls   int
		wantPublish int
		// wantCalls are the calls of the kinds of 1 MiB a call
		// (EventBridge, SQS); wantSNSCalls of SNS's 256 KiB.
		wantSNSCalls int
	}{
		{"by count", 25, 100, 3, 25, 3},
		{"exactly ten", 10, 100, 1, 10, 1},
		{"by bytes", 10, 120 * 1024, 2, 10, 5},          // eight ~120 KB entries per call in 1 MiB, two in 256 KiB
		{"by bytes and count", 23, 30 * 1024, 3, 23, 3}, // 8 entries of ~30 KB fit in 256 KiB, 10 in 1 MiB
	}
	for _, tt := range tests {
		for _, target := range targetKinds {
			t.Run(tt.name+"/"+string(target), func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, testConfig(table, target, config.ActionDelete))
				records := relaytest.Records(table, tt.n, tt.bytes)
				h.fake.PutRecords(records)
				if failed := h.handleInserts(t, records); len(failed) != 0 {
					t.Fatalf("failures %v", failed)
				}
				if got := len(h.fake.Published()); got != tt.wantPublish {
					t.Errorf("published %d, want %d", got, tt.wantPublish)
				}
				calls := h.fake.Calls(relaytest.OpPutEvents) + h.fake.Calls(relaytest.OpPublishBatch) + h.fake.Calls(relaytest.OpSendMessageBatch)
				want := tt.wantCalls
				if target == targetkind.SNS {
					want = tt.wantSNSCalls
				}
				if calls != want {
					t.Errorf("%d calls, want %d", calls, want)
				}
			})
		}
	}
}

func TestHandleDispatch(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	h := newHarness(t, testConfig(table, config.TargetEventBridge, config.ActionMark))
	records := h.stored(2)
	h.fake.EntryError = relaytest.FailEvent(records[1].EventID, "ThrottlingException")
	tests := []struct {
		name    string
		payload string
		want    string // JSON of the response, or the start of the error
		wantErr bool
	}{
		{"stream", string(relaytest.StreamJSON(table, relaytest.Inserts(table, records)...)),
			`{"batchItemFailures":[{"itemIdentifier":"` + relaytest.SequenceNumber(1) + `"}]}`, false},
		{"empty stream", `{"Records":[]}`, `{"batchItemFailures":[]}`, false},
		{"reconcile", `{"action":"reconcile"}`, `"complete":true`, false},
		{"reconcile with min age", `{"action":"reconcile","minAgeSeconds":60}`, `"minAgeSeconds":60`, false},
		{"unknown action", `{"action":"publish"}`, `unknown action "publish"`, true},
		{"negative min age", `{"action":"reconcile","minAgeSeconds":-1}`, "minAgeSeconds is -1", true},
		{"min age past a year", `{"action":"reconcile","minAgeSeconds":1e300}`, "minAgeSeconds is 1e+300: expected a number of seconds from 0 to 31536000", true},
		{"empty object", `{}`, "unsupported payload", true},
		{"array", `[1,2]`, "unsupported payload", true},
		{"string", `"reconcile"`, "unsupported payload", true},
		{"sqs batch", `{"Records":[{"messageId":"1","eventSource":"aws:sqs","body":"{}"}]}`, "unsupported payload", true},
		{"scheduler event", `{"version":"0","detail-type":"Scheduled Event","source":"aws.scheduler","detail":{}}`, "unsupported payload", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := h.relay.Handle(context.Background(), json.RawMessage(tt.payload))
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("error %v, want one containing %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(got)
			if !strings.Contains(string(b), tt.want) {
				t.Errorf("response %s, want %s", b, tt.want)
			}
		})
	}
}

func TestReconcile(t *testing.T) {
	t.Parallel()
	eachLayoutAndAction(t, func(t *testing.T, table outbox.Table, action config.Action) {
		h := newHarnessAt(t, testConfig(table, config.TargetEventBridge, action), now)
		old := h.stored(230) // occurred an hour before now
		// Young events are the stream's business.
		young := relaytest.Records(table, 5, 32)
		for i := range young {
			young[i].EventID = fmt.Sprintf("01JDQ9%020d", i)
			young[i].SortKey = table.SortKeyFor(young[i].EventID)
			if table.Layout == outbox.LayoutDedicated {
				young[i].PartitionKey = young[i].SortKey
			}
			young[i].OccurredAt = now.Add(-time.Minute)
			young[i].PendingSince = young[i].OccurredAt.UnixMilli()
			h.fake.PutRecord(young[i])
		}
		// A malformed item in the index.
		bad := table.Item(old[0])
		bad[table.SortKey] = &types.AttributeValueMemberS{Value: table.SortKeyFor("01JDQ8Z7K5V6W3X2Y1Z0ABCDEF")}
		bad[outbox.AttrSource] = &types.AttributeValueMemberS{Value: ""}
		h.fake.Put(bad)
		// One without a status: marked FAILED too, it leaves the
		// index instead of counting as poison on every run.
		noStatus := table.Item(old[1])
		noStatus[table.SortKey] = &types.AttributeValueMemberS{Value: table.SortKeyFor("01JDQ8Z7K5V6W3X2Y1Z0ABCDEG")}
		delete(noStatus, outbox.AttrStatus)
		h.fake.Put(noStatus)

		got, err := h.relay.Handle(context.Background(), json.RawMessage(`{"action":"reconcile"}`))
		if err != nil {
			t.Fatal(err)
		}
		rep := got.(relay.ReconcileReport).Report
		if rep.ReadUnits <= 0 {
			t.Errorf("report's read units %v, want them counted", rep.ReadUnits)
		}
		rep.ReadUnits = 0
		want := reconcile.Report{Found: 232, Published: 230, Poison: 2, Complete: true,
			OldestPendingAgeSeconds: time.Hour.Seconds(), MinAgeSeconds: 300, Segments: 16, ShardsLeased: 16}
		if rep != want {
			t.Errorf("report %+v\nwant   %+v", rep, want)
		}
		for _, r := range young {
			if s := h.fake.Status(r); s != string(outbox.StatusPending) {
				t.Errorf("young event %s: %s", r.EventID, s)
			}
		}
		if got := h.metric(t, "PendingFound"); got != 232 {
			t.Errorf("PendingFound = %v", got)
		}
		if !strings.Contains(h.metrics.String(), `"OldestPendingAge":3600`) {
			t.Errorf("metrics %s lack OldestPendingAge", h.metrics.String())
		}
		// A second run finds nothing.
		got, _ = h.relay.Handle(context.Background(), json.RawMessage(`{"action":"reconcile"}`))
		if rep := got.(relay.ReconcileReport); rep.Found != 0 || !rep.Complete {
			t.Errorf("second run: %+v", rep)
		}
		// With min age 0, the young events are published.
		got, _ = h.relay.Handle(context.Background(), json.RawMessage(`{"action":"reconcile","minAgeSeconds":0}`))
		if rep := got.(relay.ReconcileReport); rep.Found != 5 || rep.Published != 5 {
			t.Errorf("min age 0: %+v", rep)
		}
	})
}

func TestStreamNoSequenceNumber(t *testing.T) {
	t.Parallel()
	table := layouts["dedicated"]
	h := newHarness(t, testConfig(table, config.TargetEventBridge, config.ActionMark))
	h.fake.EntryError = func(string, int) string { return "ThrottlingException" }
	records := h.stored(1)
	recs := relaytest.Inserts(table, records)
	ev := relaytest.StreamEvent(table, recs...)
	ev.Records[0].Change.SequenceNumber = ""
	_, err := h.relay.HandleStream(context.Background(), ev)
	if err == nil || !strings.Contains(err.Error(), "no sequence number") {
		t.Errorf("error %v, want one about the missing sequence number", err)
	}
}
