package relay_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestReconcilePublishesOnlyItsRegionsEvents: in a multi-Region pipeline
// the reconciler publishes the pending events of its own Region, and the
// primary's those without origin too (written before the writer stamped
// it); every other Region's events stay pending, theirs to publish.
func TestReconcilePublishesOnlyItsRegionsEvents(t *testing.T) {
	t.Parallel()
	peers := []string{"us-east-1", "eu-west-1"}
	origins := []string{"us-east-1", "eu-west-1", "", "ap-south-1"}
	for region, published := range map[string][]string{
		"us-east-1": {"us-east-1", ""},
		"eu-west-1": {"eu-west-1"},
	} {
		t.Run(region, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(layouts["dedicated"], config.TargetEventBridge, config.ActionMark)
			cfg.Regions = peers
			fake := relaytest.New(t, cfg.Table)
			records := relaytest.Records(fake.Table, len(origins), 32)
			for i := range records {
				records[i].Origin = origins[i]
			}
			fake.PutRecords(records)
			r := newRelay(t, cfg, fake, relay.Options{Now: func() time.Time { return now }, Retry: &noSleep, Region: region})
			rep, err := r.Reconcile(context.Background(), relay.ReconcileRequest{Action: relay.ActionReconcile})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Found != len(published) || rep.Published != len(published) {
				t.Errorf("report %+v, want %d found and published", rep.Report, len(published))
			}
			for _, rec := range records {
				want := string(outbox.StatusPending)
				if slices.Contains(published, rec.Origin) {
					want = string(outbox.StatusPublished)
				}
				if got := fake.Status(rec); got != want {
					t.Errorf("event of origin %q: %s, want %s", rec.Origin, got, want)
				}
			}
		})
	}
}

// TestNewRefusesARegionOutsideItsPeers: a relay whose own Region is not one
// of OUTBOX_REGIONS would publish no event at all; it stops at cold start,
// naming the variable and the fix.
func TestNewRefusesARegionOutsideItsPeers(t *testing.T) {
	t.Parallel()
	cfg := testConfig(layouts["dedicated"], config.TargetEventBridge, config.ActionMark)
	cfg.Regions = []string{"us-east-1", "eu-west-1"}
	for _, region := range []string{"ap-south-1", ""} {
		_, err := relay.New(cfg, relay.Clients{DynamoDB: &relaytest.AWS{}, Target: &relaytest.AWS{}}, relay.Options{Region: region})
		if err == nil || !strings.Contains(err.Error(), config.EnvRegions) {
			t.Errorf("New in Region %q with peers %q = %v, want an error naming %s", region, cfg.Regions, err, config.EnvRegions)
		}
	}
}
