package reconcile

import (
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/relay/relaytest"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestReleasedLeaseIsNotRenewed: the background renewal renews the leases
// the run holds, never one it released (handed to a worker), which another
// run may take at once.
func TestReleasedLeaseIsNotRenewed(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "outbox", PendingShards: 2}.WithDefaults()
	fake := relaytest.New(t, table)
	at := time.Unix(1_000_000, 0)
	r := &Reconciler{Client: fake, Table: table, Leases: fake, Now: func() time.Time { return at }}
	lr := &leaseRun{r: r, owner: "run", others: map[string]struct{}{}}
	kept, handed := &sweeper{shard: 0, src: source{name: "shard 0"}}, &sweeper{shard: 1, src: source{name: "shard 1"}}
	for _, s := range []*sweeper{kept, handed} {
		if !lr.take(t.Context(), s) {
			t.Fatalf("shard %d not leased", s.shard)
		}
	}
	lr.release(t.Context(), []*sweeper{handed})
	at = at.Add(LeaseDuration / 2)
	lr.renewAll(t.Context())
	lease := func(s *sweeper) outbox.Lease {
		l, err := outbox.ParseLease(fake.Item(outbox.LeasePartitionKey(lr.shard(s)), outbox.LeaseSortKey))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if l := lease(kept); !l.Expires.Equal(at.Add(LeaseDuration)) {
		t.Errorf("held lease ends at %s, want renewed to %s", l.Expires, at.Add(LeaseDuration))
	}
	if l := lease(handed); l.Live(at) {
		t.Errorf("released lease renewed: %+v", l)
	}
}
