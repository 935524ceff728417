package pipeline

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/publish"
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
			res[i] = publish.Result{Status: publish.Rejected, Reason: "MalformedDetail"}
		case "throttled":
			res[i] = publish.Result{Status: publish.Failed, Reason: "ThrottlingException", Retries: 4}
		default:
			res[i] = publish.Result{Status: publish.Published, Retries: 1}
		}
	}
	return res
}

// fakeStore fails the writes of records whose detail type says so.
type fakeStore struct {
	marked, deleted, failed []string
}

func errFor(r outbox.Record) error {
	if r.DetailType == "unwritable" {
		return errors.New("ProvisionedThroughputExceededException")
	}
	return nil
}

func (f *fakeStore) MarkPublished(_ context.Context, rs []outbox.Record) []error {
	errs := make([]error, len(rs))
	for i, r := range rs {
		f.marked = append(f.marked, r.EventID)
		errs[i] = errFor(r)
	}
	return errs
}

func (f *fakeStore) Delete(_ context.Context, rs []outbox.Record) []error {
	errs := make([]error, len(rs))
	for i, r := range rs {
		f.deleted = append(f.deleted, r.EventID)
		errs[i] = errFor(r)
	}
	return errs
}

func (f *fakeStore) MarkFailed(_ context.Context, rs []outbox.Record, reasons []string) []error {
	errs := make([]error, len(rs))
	for i, r := range rs {
		f.failed = append(f.failed, r.EventID+": "+reasons[i])
		errs[i] = errFor(r)
	}
	return errs
}

func rec(id, source, detailType string, status outbox.Status) outbox.Record {
	return outbox.Record{PartitionKey: "P#" + id, SortKey: "OUTBOX#" + id, EventID: id, Source: source, DetailType: detailType,
		Detail: []byte(`{}`), Status: status, OccurredAt: time.Unix(100, 0)}
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
			}
			pub, st := &fakePublisher{}, &fakeStore{}
			p := &Pipeline{Publisher: pub, Store: st, Action: action, Now: func() time.Time { return time.Unix(101, 0) }}
			m := metrics.New()
			out := p.Process(context.Background(), items, m)
			want := []Status{Published, Poison, LeftPending, LeftPending, Skipped, Poison, Poison, Poison}
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
			for name, v := range map[string]float64{metrics.EventsPublished: 1, metrics.EventsFailed: 4, metrics.EventsLeftPending: 2, metrics.EventsRetried: 4 + 1 + 1} {
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
