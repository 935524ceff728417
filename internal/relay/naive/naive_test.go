package naive_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/naive"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

func TestNaive(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "outbox"}.WithDefaults()
	for _, action := range []config.Action{config.ActionMark, config.ActionDelete} {
		t.Run(string(action), func(t *testing.T) {
			t.Parallel()
			fake := relaytest.New(t, table)
			records := relaytest.Records(table, 5, 16)
			fake.PutRecords(records)
			fake.EntryError = relaytest.FailEvent(records[2].EventID, "MalformedDetail")
			recs := append(relaytest.Inserts(table, records), relaytest.StreamRecord{EventName: "REMOVE", OldImage: table.Item(records[0])})
			r := &naive.Relay{DynamoDB: fake, EventBridge: fake, Config: config.Config{
				Table: table, Target: targetkind.Settings{Type: targetkind.EventBridge, EventBus: "default"}, PublishedAction: action, PublishedTTL: time.Hour}}
			resp, err := r.HandleStream(context.Background(), relaytest.StreamEvent(table, recs...))
			if err != nil {
				t.Fatal(err)
			}
			// The naive relay reports a rejected event as a failure.
			if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != relaytest.SequenceNumber(2) {
				t.Errorf("failures %+v", resp.BatchItemFailures)
			}
			if got := fake.Calls(relaytest.OpPutEvents); got != 5 {
				t.Errorf("%d PutEvents calls, want 5", got)
			}
			for i, rec := range records {
				want := string(outbox.StatusPublished)
				if action == config.ActionDelete {
					want = ""
				}
				if i == 2 {
					want = string(outbox.StatusPending)
				}
				if got := fake.Status(rec); got != want {
					t.Errorf("record %d: %q, want %q", i, got, want)
				}
			}
			ids := []string{}
			for _, p := range fake.Published() {
				ids = append(ids, p.EventID)
			}
			if slices.Contains(ids, records[2].EventID) || len(ids) != 4 {
				t.Errorf("published %v", ids)
			}
		})
	}
}
