package batch

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/retry"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// fakePublisher gives each record the result named by its source.
type fakePublisher struct{ calls int }

func (f *fakePublisher) Publish(_ context.Context, records []outbox.Record) []publish.Result {
	f.calls++
	res := make([]publish.Result, len(records))
	for i, r := range records {
		switch r.Source {
		case "rejected":
			res[i] = publish.Result{Status: publish.Rejected, Reason: "MalformedDetail", Class: retry.ClassPoison}
		case "throttled":
			res[i] = publish.Result{Status: publish.Failed, Reason: "ThrottlingException", Retries: 4, Class: retry.ClassThrottling}
		case "denied":
			res[i] = publish.Result{Status: publish.Failed, Reason: "AccessDeniedException", Class: retry.ClassEnvironment, Hint: "grant events:PutEvents"}
		default:
			res[i] = publish.Result{Status: publish.Published, Retries: 1}
		}
	}
	return res
}

// fakeStore fails the writes of records whose detail type says so.
type fakeStore struct {
	marked, deleted, failed, indexed, released []string
}

func (f *fakeStore) Release(_ context.Context, rs []outbox.Record) []error {
	for _, r := range rs {
		f.released = append(f.released, r.EventID)
	}
	return make([]error, len(rs))
}

func (f *fakeStore) AddPendingKeys(_ context.Context, rs []outbox.Record) []error {
	for _, r := range rs {
		f.indexed = append(f.indexed, r.EventID)
	}
	return make([]error, len(rs))
}

func errFor(r outbox.Record) error {
	if r.DetailType == "unwritable" {
		return errors.New("ProvisionedThroughputExceededException")
	}
	return nil
}

// record appends the ids of rs to list and fails the unwritable ones.
func record(list *[]string, rs []outbox.Record, label func(int) string) []error {
	errs := make([]error, len(rs))
	for i, r := range rs {
		*list = append(*list, r.EventID+label(i))
		errs[i] = errFor(r)
	}
	return errs
}

func noLabel(int) string { return "" }

func (f *fakeStore) MarkPublished(_ context.Context, rs []outbox.Record) []error {
	return record(&f.marked, rs, noLabel)
}

func (f *fakeStore) Delete(_ context.Context, rs []outbox.Record) []error {
	return record(&f.deleted, rs, noLabel)
}

func (f *fakeStore) MarkFailed(_ context.Context, rs []outbox.Record, reasons []string) []error {
	return record(&f.failed, rs, func(i int) string { return ": " + reasons[i] })
}

func rec(id, source, detailType string, status outbox.Status) outbox.Record {
	return outbox.Record{PartitionKey: "P#" + id, SortKey: "OUTBOX#" + id, EventID: id, Source: source, DetailType: detailType,
		Detail: []byte(`{}`), Status: status, OccurredAt: time.Unix(100, 0)}
}

func indexed(r outbox.Record) outbox.Record {
	r.PendingShard, r.PendingSince = outbox.PendingShardKey(0), 1
	return r
}

func TestProcess(t *testing.T) {
	t.Parallel()
	for _, action := range []config.Action{config.ActionMark, config.ActionDelete} {
		t.Run(string(action), func(t *testing.T) {
			t.Parallel()
			items := []Item{
				{Record: rec("a", "ok", "t", outbox.StatusPending)},
				{Record: rec("b", "rejected", "t", outbox.StatusPending)},
				{Record: rec("c", "throttled", "t", outbox.StatusPending)},
				{Record: rec("d", "ok", "unwritable", outbox.StatusPending)},
				{Record: rec("e", "ok", "t", outbox.StatusPublished)},
				{Record: outbox.Record{PartitionKey: "P#f", SortKey: "OUTBOX#f", EventID: "f"}, Malformed: &outbox.RecordError{Attribute: "detail", Problem: "is not a JSON object"}},
				{Malformed: &outbox.RecordError{Attribute: "SK", Problem: "is missing"}}, // no key: cannot be marked
				{Record: rec("h", "rejected", "unwritable", outbox.StatusPending)},       // marking FAILED fails
				{Record: indexed(rec("i", "denied", "t", outbox.StatusPending))},         // left pending, already indexed
				{Record: rec("j", "ok", "t", outbox.StatusPending), Skip: "held by another relay"},
				{Record: rec("k", "ok", "t", outbox.StatusPending), Unavailable: &smithy.GenericAPIError{Code: "AccessDeniedException"}},
				{Record: rec("l", "ok", "t", outbox.StatusPending), Busy: "held by another invocation"},
			}
			pub, st := &fakePublisher{}, &fakeStore{}
			p := &Processor{Publisher: pub, Store: st, Action: action, Now: func() time.Time { return time.Unix(101, 0) }}
			m := metrics.New()
			out := p.Process(context.Background(), items, m)
			want := []Status{Published, Poison, LeftPending, LeftPending, Skipped, Poison, Poison, Poison, LeftPending, Skipped, LeftPending, LeftPending}
			for i, o := range out {
				if o.Status != want[i] {
					t.Errorf("item %d: %v (%s), want %v", i, o.Status, o.Reason, want[i])
				}
			}
			if !out[3].EventPublished || out[2].EventPublished {
				t.Errorf("EventPublished: %+v %+v", out[2], out[3])
			}
			settled := st.marked
			if action == config.ActionDelete {
				settled = st.deleted
				if len(st.marked) != 0 {
					t.Errorf("marked %v in delete mode", st.marked)
				}
			}
			if len(settled) != 2 {
				t.Errorf("settled %v, want a and d", settled)
			}
			if len(st.failed) != 3 || st.failed[0] != "f: malformed outbox item: attribute detail is not a JSON object" {
				t.Errorf("marked FAILED: %q", st.failed)
			}
			if pub.calls != 1 {
				t.Errorf("%d publish calls", pub.calls)
			}
			if out[8].Class != retry.ClassEnvironment || out[8].Hint == "" || out[10].Class != retry.ClassEnvironment || out[2].Class != retry.ClassThrottling {
				t.Errorf("classes: %+v %+v %+v", out[2], out[8], out[10])
			}
			// Only c failed to publish without the pending index keys.
			if len(st.indexed) != 1 || st.indexed[0] != "c" {
				t.Errorf("pending index keys added to %v, want [c]", st.indexed)
			}
			for class, v := range map[retry.Class]float64{retry.ClassPoison: 4, retry.ClassThrottling: 1, retry.ClassEnvironment: 2, retry.ClassTransient: 0} {
				if got := m.SeriesCount(metrics.Series{Name: metrics.PublishErrors, Dimension: metrics.DimensionErrorClass, Value: string(class)}); got != v {
					t.Errorf("PublishErrors{%s} = %v, want %v", class, got, v)
				}
			}
			for name, v := range map[string]float64{metrics.EventsPublished: 1, metrics.EventsFailed: 4, metrics.EventsLeftPending: 5, metrics.EventsRetried: 4 + 1 + 1} {
				if got := m.Count(name); got != v {
					t.Errorf("%s = %v, want %v", name, got, v)
				}
			}
			if lat := m.Values(metrics.PublishLatency); len(lat) != 2 || lat[0] != 1000 {
				t.Errorf("latencies %v, want two of 1000 ms", lat)
			}
		})
	}
}

// TestReleaseFailedHolds: of the items this invocation holds, only those
// whose publishing failed are released; one published but not marked keeps
// its hold as its backoff, and an item not held is never released.
func TestReleaseFailedHolds(t *testing.T) {
	t.Parallel()
	items := []Item{
		{Record: indexed(rec("a", "ok", "t", outbox.StatusPending)), Held: true},
		{Record: indexed(rec("b", "denied", "t", outbox.StatusPending)), Held: true},
		{Record: rec("c", "throttled", "t", outbox.StatusPending), Held: true}, // the hold gave it the index keys
		{Record: indexed(rec("d", "ok", "unwritable", outbox.StatusPending)), Held: true},
		{Record: indexed(rec("e", "rejected", "t", outbox.StatusPending)), Held: true},
		{Record: rec("f", "throttled", "t", outbox.StatusPending)},
		{Record: indexed(rec("g", "denied", "t", outbox.StatusPending))},
	}
	st := &fakeStore{}
	p := &Processor{Publisher: &fakePublisher{}, Store: st, Action: config.ActionMark}
	out := p.Process(context.Background(), items, metrics.New())
	want := []Status{Published, LeftPending, LeftPending, LeftPending, Poison, LeftPending, LeftPending}
	for i, o := range out {
		if o.Status != want[i] {
			t.Errorf("item %d: %v (%s), want %v", i, o.Status, o.Reason, want[i])
		}
	}
	if !slices.Equal(st.released, []string{"b", "c"}) {
		t.Errorf("released %v, want [b c]: the held items whose publishing failed", st.released)
	}
	if !slices.Equal(st.indexed, []string{"f"}) {
		t.Errorf("pending index keys added to %v, want [f]", st.indexed)
	}
}

func TestParseMalformedKeepsKey(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "t"}.WithDefaults()
	it := Parse(table, map[string]types.AttributeValue{
		"PK":      &types.AttributeValueMemberS{Value: "P#1"},
		"SK":      &types.AttributeValueMemberS{Value: "OUTBOX#1"},
		"eventId": &types.AttributeValueMemberS{Value: "1"},
	})
	var re *outbox.RecordError
	if !errors.As(it.Malformed, &re) {
		t.Fatalf("Malformed = %v", it.Malformed)
	}
	if it.Record.PartitionKey != "P#1" || it.Record.SortKey != "OUTBOX#1" || it.Record.EventID != "1" {
		t.Errorf("key not kept: %+v", it.Record)
	}
}

// TestParseMalformedKeepsOrder: a malformed item keeps its ordering key
// and sequence when both can be read, so that it holds its key (gate.go);
// with one of them only, neither.
func TestParseMalformedKeepsOrder(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "t"}.WithDefaults()
	for name, tc := range map[string]struct {
		key, seq types.AttributeValue
		wantKey  string
		wantSeq  int64
	}{
		"both":        {&types.AttributeValueMemberS{Value: "order-1"}, &types.AttributeValueMemberN{Value: "4"}, "order-1", 4},
		"no sequence": {&types.AttributeValueMemberS{Value: "order-1"}, nil, "", 0},
		"no key":      {nil, &types.AttributeValueMemberN{Value: "4"}, "", 0},
		"sequence 0":  {&types.AttributeValueMemberS{Value: "order-1"}, &types.AttributeValueMemberN{Value: "0"}, "", 0},
	} {
		item := map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "P#1"}, "SK": &types.AttributeValueMemberS{Value: "OUTBOX#1"},
			outbox.AttrEventID: &types.AttributeValueMemberS{Value: "1"}, outbox.AttrDetail: &types.AttributeValueMemberS{Value: "[]"},
			outbox.AttrPendingShard: &types.AttributeValueMemberS{Value: "3"}, outbox.AttrPendingSince: &types.AttributeValueMemberN{Value: "1700000000000"},
		}
		if tc.key != nil {
			item[outbox.AttrOrderingKey] = tc.key
		}
		if tc.seq != nil {
			item[outbox.AttrSequence] = tc.seq
		}
		it := Parse(table, item)
		if it.Malformed == nil {
			t.Fatalf("%s: not malformed: %+v", name, it.Record)
		}
		if r := it.Record; r.OrderingKey != tc.wantKey || r.Sequence != tc.wantSeq || r.PendingShard != "3" || r.PendingSince != 1700000000000 {
			t.Errorf("%s: record %+v, want ordering key %q, sequence %d and the pending index keys", name, r, tc.wantKey, tc.wantSeq)
		}
	}
}
