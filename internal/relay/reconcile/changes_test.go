package reconcile_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/metrics"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/reconcile"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestShardDecrease: after the shard count went from 16 to 4, items still
// in shards 4 to 15 are found when the reconciler covers 16 shards, and
// stranded when it covers only the current 4.
func TestShardDecrease(t *testing.T) {
	t.Parallel()
	for _, shards := range []int{0, 16} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			t.Parallel()
			_, fake, records := setup(t, 16, 64)
			lowered := outbox.Table{Name: "outbox", PendingShards: 4}.WithDefaults()
			r := newReconciler(lowered, fake, 100)
			r.Shards = shards
			rep := r.Run(context.Background(), time.Minute, metrics.New())
			high := 0
			for _, rec := range records {
				if n := (outbox.Table{PendingShards: 16}).ShardFor(rec.EventID); n >= 4 {
					high++
				}
			}
			want := len(records)
			if shards == 0 {
				want -= high
			}
			if rep.Published != want || !rep.Complete {
				t.Errorf("report %+v: want %d published", rep, want)
			}
		})
	}
}

// TestFormerPrefixes: pending items written under a former sort key
// prefix, named or forgotten, are published, not marked FAILED.
func TestFormerPrefixes(t *testing.T) {
	t.Parallel()
	old := outbox.Table{Name: "outbox", SortKeyPrefix: "EVT#"}.WithDefaults()
	fake := relaytest.New(t, old)
	records := relaytest.Records(old, 6, 16)
	fake.PutRecords(records[:3])
	older := outbox.Table{Name: "outbox", SortKeyPrefix: "E#"}.WithDefaults()
	for _, rec := range relaytest.Records(older, 6, 16)[3:] {
		fake.Put(older.Item(rec))
	}
	current := outbox.Table{Name: "outbox", SortKeyPrefix: "OUTBOX#", FormerSortKeyPrefixes: []string{"EVT#"}}.WithDefaults()
	rep := newReconciler(current, fake, 100).Run(context.Background(), time.Minute, metrics.New())
	if rep.Found != 6 || rep.Published != 6 || rep.Poison != 0 {
		t.Errorf("report %+v: want 6 found and published, none poison", rep)
	}
	if got := len(fake.Published()); got != 6 {
		t.Errorf("%d published", got)
	}
}

// TestBackoffWhenMarkingFails: while the role may not update the table, the
// reconciler cannot hold items and publishes none of them; while only
// marking fails, an item is published once per hold, and holds lengthen
// with the attempts.
func TestBackoffWhenMarkingFails(t *testing.T) {
	t.Parallel()
	denied := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "not authorized to perform dynamodb:UpdateItem"}

	t.Run("no updates", func(t *testing.T) {
		t.Parallel()
		table, fake, records := setup(t, 2, 10)
		fake.WriteError = func(string, int) error { return denied }
		m := metrics.New()
		for range 5 {
			rep := newReconciler(table, fake, 100).Run(context.Background(), time.Minute, m)
			if rep.Failed != len(records) {
				t.Errorf("report %+v: want every event left pending", rep)
			}
		}
		if got := len(fake.Published()); got != 0 {
			t.Errorf("%d events published in 5 runs, want 0: they could never be marked", got)
		}
		if got := m.SeriesCount(metrics.Series{Name: metrics.PublishErrors, Dimension: metrics.DimensionErrorClass, Value: "environment"}); got != 50 {
			t.Errorf("PublishErrors{environment} = %v, want 50", got)
		}
	})

	t.Run("no marks", func(t *testing.T) {
		t.Parallel()
		table, fake, records := setup(t, 2, 10)
		// The first update of an item (its hold) succeeds, later ones fail.
		fake.WriteError = func(_ string, attempt int) error {
			if attempt%2 == 0 {
				return denied
			}
			return nil
		}
		at := now
		clock := func() time.Time { return at }
		published := func() int { return len(fake.Published()) }
		run := func() {
			newReconcilerAt(table, fake, 100, config.ActionMark, clock).Run(context.Background(), time.Minute, metrics.New())
		}
		run()
		if published() != len(records) {
			t.Fatalf("first run published %d, want %d", published(), len(records))
		}
		// Held for a minute (the first hold): later runs skip them.
		for _, d := range []time.Duration{0, 30 * time.Second, 59 * time.Second} {
			at = now.Add(d)
			run()
		}
		if published() != len(records) {
			t.Errorf("runs within the hold published %d more", published()-len(records))
		}
		at = now.Add(61 * time.Second)
		run()
		if published() != 2*len(records) {
			t.Errorf("after the hold: %d published, want %d", published(), 2*len(records))
		}
		// The second hold is two minutes long.
		at = now.Add(61*time.Second + 119*time.Second)
		run()
		if published() != 2*len(records) {
			t.Errorf("within the second hold: %d published, want %d", published(), 2*len(records))
		}
		item := fake.Item(records[0].PartitionKey, records[0].SortKey)
		if n, ok := item[outbox.AttrAttempts].(*types.AttributeValueMemberN); !ok || n.Value != "2" {
			t.Errorf("attempts = %v, want 2", item[outbox.AttrAttempts])
		}
	})
}

// TestReleaseWhenPublishingFails: when publishing fails (the role may not
// put events), the reconciler gives back the holds it took without counting
// the attempts, so that the next run, once the cause is fixed, publishes the
// events at once rather than after a hold that grew with every failure.
func TestReleaseWhenPublishingFails(t *testing.T) {
	t.Parallel()
	table, fake, records := setup(t, 2, 10)
	fake.EntryError = func(string, int) string { return "AccessDeniedException" }
	for run := range 3 {
		rep := newReconciler(table, fake, 100).Run(context.Background(), time.Minute, metrics.New())
		if rep.Failed != len(records) {
			t.Fatalf("run %d: report %+v, want every event left pending", run, rep)
		}
	}
	for i, rec := range records {
		item := fake.Item(rec.PartitionKey, rec.SortKey)
		if next, ok := item[outbox.AttrNextAttemptAt]; ok {
			t.Errorf("record %d still held until %v", i, next)
		}
		if n, ok := item[outbox.AttrAttempts].(*types.AttributeValueMemberN); ok && n.Value != "0" {
			t.Errorf("record %d: attempts = %s after 3 failed publishes, want 0", i, n.Value)
		}
	}
	fake.EntryError = nil
	rep := newReconciler(table, fake, 100).Run(context.Background(), time.Minute, metrics.New())
	if rep.Published != len(records) {
		t.Errorf("report %+v: want every event published once the cause is fixed", rep)
	}
	if got := len(fake.Published()); got != len(records) {
		t.Errorf("%d events published, want %d", got, len(records))
	}
}

// TestScanWithoutPendingIndex: a dedicated delete-mode table without the
// pending index is swept with a parallel Scan sized to the table; every old
// pending event is published once and deleted, young ones and failed ones
// stay.
func TestScanWithoutPendingIndex(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "outbox", NoPendingIndex: true}.WithDefaults()
	fake := relaytest.New(t, table)
	records := relaytest.Records(table, 2500, 16)
	if records[0].PendingShard != "" {
		t.Fatal("a record of a table without pending index has the index keys")
	}
	fake.PutRecords(records)
	failed := relaytest.Records(table, 1, 16)[0]
	failed.Status = outbox.StatusFailed
	failed.EventID = "01JDQ9ZZZZZZZZZZZZZZZZZZZZ"
	failed.SortKey = table.SortKeyFor(failed.EventID)
	failed.PartitionKey = failed.SortKey
	fake.PutRecord(failed)
	young := relaytest.Records(table, 1, 16)[0]
	young.EventID = "01JDQ9YYYYYYYYYYYYYYYYYYYY"
	young.SortKey, young.PartitionKey = table.SortKeyFor(young.EventID), table.SortKeyFor(young.EventID)
	young.OccurredAt = now.Add(-time.Second)
	fake.PutRecord(young)

	r := newReconcilerAt(table, fake, 100, config.ActionDelete, func() time.Time { return now })
	r.Concurrency = 8
	rep := r.Run(context.Background(), time.Minute, metrics.New())
	if rep.Found != len(records) || rep.Published != len(records) || !rep.Complete {
		t.Errorf("report %+v: want %d found and published", rep, len(records))
	}
	if want := reconcile.ScanSegments(int64(len(records)+2), 0); rep.Segments != want || want != 3 {
		t.Errorf("%d segments, want %d (3)", rep.Segments, want)
	}
	if got := len(fake.Published()); got != len(records) {
		t.Errorf("%d published, want %d: each once", got, len(records))
	}
	if fake.Calls(relaytest.OpQuery) != 0 {
		t.Error("queried an index that does not exist")
	}
	for _, rec := range []outbox.Record{failed, young} {
		if fake.Status(rec) != string(rec.Status) {
			t.Errorf("%s: %s", rec.EventID, fake.Status(rec))
		}
	}
}

func TestScanSegments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		items, bytes int64
		want         int
	}{
		{0, 0, 1}, {1, 100, 1}, {1000, 0, 1}, {1001, 0, 2}, {0, 65 << 20, 2}, {10_000_000, 0, reconcile.MaxScanSegments},
	}
	for _, tt := range tests {
		if got := reconcile.ScanSegments(tt.items, tt.bytes); got != tt.want {
			t.Errorf("ScanSegments(%d, %d) = %d, want %d", tt.items, tt.bytes, got, tt.want)
		}
	}
}
