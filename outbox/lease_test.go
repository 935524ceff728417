package outbox_test

import (
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestLeaseItems: a lease item is keyed outside the stream filter and the
// pending index, and decodes to its owner, shard and expiry.
func TestLeaseItems(t *testing.T) {
	t.Parallel()
	table := outbox.Table{Name: "t"}.WithDefaults()
	key := table.LeaseKey(outbox.LeaseShard{Shard: 3})
	sk := key[table.SortKey].(*types.AttributeValueMemberS).Value
	pk := key[table.PartitionKey].(*types.AttributeValueMemberS).Value
	if table.IsOutboxSortKey(sk) || pk != "OUTBOX-LEASE#3" {
		t.Errorf("lease key %s/%s: want OUTBOX-LEASE#3, outside the prefix %q", pk, sk, table.SortKeyPrefix)
	}
	for name, in := range map[string]map[string]types.AttributeValue{
		"acquire": table.AcquireLease(outbox.LeaseShard{Shard: 3}, "a", time.UnixMilli(1000), time.UnixMilli(61000)).Key,
		"renew":   table.RenewLease(outbox.LeaseShard{Shard: 3}, "a", time.UnixMilli(61000)).Key,
		"release": table.ReleaseLease(outbox.LeaseShard{Shard: 3}, "a").Key,
	} {
		if got := in[table.PartitionKey].(*types.AttributeValueMemberS).Value; got != pk {
			t.Errorf("%s: key %s, want %s", name, got, pk)
		}
	}
	regional := table.LeaseKey(outbox.LeaseShard{Region: "eu-west-1", Shard: 3})
	if got := regional[table.PartitionKey].(*types.AttributeValueMemberS).Value; got != "OUTBOX-LEASE#eu-west-1#3" {
		t.Errorf("the lease key of a Region's shard: %s, want OUTBOX-LEASE#eu-west-1#3", got)
	}
	l, err := outbox.ParseLease(map[string]types.AttributeValue{
		outbox.AttrLeaseOwner: &types.AttributeValueMemberS{Value: "req-1"}, outbox.AttrLeaseShard: &types.AttributeValueMemberN{Value: "3"},
		outbox.AttrLeaseExpires: &types.AttributeValueMemberN{Value: "61000"},
	})
	if err != nil || l.Owner != "req-1" || l.Shard != 3 || !l.Live(time.UnixMilli(60999)) || l.Live(time.UnixMilli(61000)) {
		t.Errorf("ParseLease = %+v, %v; want req-1's lease of shard 3, live until 61000", l, err)
	}
	var re *outbox.RecordError
	if _, err := outbox.ParseLease(map[string]types.AttributeValue{outbox.AttrLeaseExpires: &types.AttributeValueMemberS{Value: "x"}}); !errors.As(err, &re) {
		t.Errorf("an expiry that is not a number: %v, want a *RecordError", err)
	}
}

// TestLeasePrefixProblem: a sort key prefix that begins the lease items'
// sort key would let the stream filter pass their insertions; the current
// prefix and a former one alike are a problem, the default is none.
func TestLeasePrefixProblem(t *testing.T) {
	t.Parallel()
	for field, table := range map[string]outbox.Table{
		"SortKeyPrefix":         {Name: "t", SortKeyPrefix: "OUTBOX-"},
		"FormerSortKeyPrefixes": {Name: "t", SortKeyPrefix: "EVT#", FormerSortKeyPrefixes: []string{"OUTBOX-L"}},
	} {
		var ce *outbox.ConfigError
		if err := table.WithDefaults().LeaseProblem(); !errors.As(err, &ce) || ce.Field != field {
			t.Errorf("prefixes %q, %q: %v, want a *ConfigError on %s", table.SortKeyPrefix, table.FormerSortKeyPrefixes, err, field)
		}
	}
	if err := (outbox.Table{Name: "t"}).WithDefaults().LeaseProblem(); err != nil {
		t.Errorf("the default prefix: %v", err)
	}
}
