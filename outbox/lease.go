package outbox

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Leases of the reconciler. A reconciler run sweeps only the shards of the
// pending index (or segments of a Scan) it leases: one lease item per shard
// in the outbox table, partition key LeasePartitionKey(shard), sort key
// LeaseSortKey, holding the owner (the invocation's request id), the shard
// and the expiry. A lease is taken by a conditional update (AcquireLease)
// that applies when the item is absent, expired or already the owner's, so
// that of two runs only one sweeps a shard; it is renewed as the run goes
// (RenewLease) and released when it is done (ReleaseLease). A crashed run's
// leases expire, and another run takes them.

// LeaseSortKey is the sort key of every lease item. Like CursorSortKey it
// does not begin with the default sort key prefix and carries no status, so
// neither the stream filter nor a query of pending or failed events sees it.
const LeaseSortKey = "OUTBOX-LEASE"

// Attributes of a lease item.
const (
	// AttrLeaseOwner is the id of the invocation that holds the lease.
	AttrLeaseOwner = "outboxLeaseOwner"
	// AttrLeaseExpires is when the lease ends, in Unix milliseconds; 0 for
	// a released lease.
	AttrLeaseExpires = "outboxLeaseExpires"
	// AttrLeaseShard is the shard (or Scan segment) the lease is for.
	AttrLeaseShard = "outboxLeaseShard"
)

// Lease is what a lease item says.
type Lease struct {
	Owner   string
	Shard   int
	Expires time.Time
}

// Live reports whether the lease is held at now.
func (l Lease) Live(now time.Time) bool { return l.Owner != "" && l.Expires.After(now) }

// LeaseShard names a leased shard: the shard, and on a pipeline of several
// Regions (a global table) the Region whose reconciler sweeps it. Lease
// items replicate to every Region like any item, and each Region's
// reconciler sweeps only its own events, so each Region leases its shards
// under keys of its own; a single-Region pipeline leaves Region empty.
type LeaseShard struct {
	Region string
	Shard  int
}

// LeasePartitionKey is the partition key of the lease item of s:
// OUTBOX-LEASE#<shard>, or OUTBOX-LEASE#<region>#<shard>.
func LeasePartitionKey(s LeaseShard) string {
	if s.Region == "" {
		return LeaseSortKey + "#" + strconv.Itoa(s.Shard)
	}
	return LeaseSortKey + "#" + s.Region + "#" + strconv.Itoa(s.Shard)
}

// LeaseKey returns the primary key of the lease item of shard.
func (t Table) LeaseKey(shard LeaseShard) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		t.PartitionKey: stringValue(LeasePartitionKey(shard)),
		t.SortKey:      stringValue(LeaseSortKey),
	}
}

// LeaseProblem reports a sort key prefix (current or former) that begins
// LeaseSortKey: the stream filter would pass the lease items' insertions to
// the relay as outbox events, so the reconciler of such a table takes no
// leases; nil when it may.
func (t Table) LeaseProblem() error {
	for i, p := range t.SortKeyPrefixes() {
		if strings.HasPrefix(LeaseSortKey, p) {
			field := "SortKeyPrefix"
			if i > 0 {
				field = "FormerSortKeyPrefixes"
			}
			return &ConfigError{Field: field, Problem: fmt.Sprintf("%q begins the sort key %q of the reconciler's lease items", p, LeaseSortKey),
				Fix: `use a prefix that does not, such as the default "OUTBOX#"`}
		}
	}
	return nil
}

// ParseLease decodes a lease item; nil is a shard without one.
func ParseLease(item map[string]types.AttributeValue) (Lease, error) {
	if item == nil {
		return Lease{}, nil
	}
	p := itemParser{item: item}
	owner, _ := item[AttrLeaseOwner].(*types.AttributeValueMemberS)
	l := Lease{Shard: int(p.num(AttrLeaseShard)), Expires: time.UnixMilli(p.num(AttrLeaseExpires))}
	if owner != nil {
		l.Owner = owner.Value
	}
	return l, p.err
}

// AcquireLease returns the update by which owner takes the lease of shard
// until until: it applies when the lease item is absent, expired or
// released at now, or already owner's. A failed condition returns the lease
// as it is (its holder), for the caller to count the live holders.
func (t Table) AcquireLease(shard LeaseShard, owner string, now, until time.Time) *dynamodb.UpdateItemInput {
	return t.leaseUpdate(shard, owner, "SET #owner = :owner, #expires = :until, #shard = :shard",
		"attribute_not_exists(#owner) OR #expires <= :now OR #owner = :owner",
		map[string]types.AttributeValue{
			":until": numberValue(until.UnixMilli()), ":now": numberValue(now.UnixMilli()), ":shard": numberValue(int64(shard.Shard)),
		})
}

// RenewLease returns the update that extends owner's lease of shard to
// until; it applies only while owner holds it (no other run took it over).
func (t Table) RenewLease(shard LeaseShard, owner string, until time.Time) *dynamodb.UpdateItemInput {
	return t.leaseUpdate(shard, owner, "SET #expires = :until", "#owner = :owner",
		map[string]types.AttributeValue{":until": numberValue(until.UnixMilli())})
}

// ReleaseLease returns the update by which owner gives the lease of shard
// up (its expiry becomes 0, the owner stays for inspection); it applies only
// while owner holds it.
func (t Table) ReleaseLease(shard LeaseShard, owner string) *dynamodb.UpdateItemInput {
	return t.leaseUpdate(shard, owner, "SET #expires = :released", "#owner = :owner",
		map[string]types.AttributeValue{":released": numberValue(0)})
}

func (t Table) leaseUpdate(shard LeaseShard, owner, update, condition string, values map[string]types.AttributeValue) *dynamodb.UpdateItemInput {
	names := map[string]string{"#owner": AttrLeaseOwner, "#expires": AttrLeaseExpires}
	if _, ok := values[":shard"]; ok {
		names["#shard"] = AttrLeaseShard
	}
	values[":owner"] = stringValue(owner)
	return &dynamodb.UpdateItemInput{
		TableName:                           aws.String(t.Name),
		Key:                                 t.LeaseKey(shard),
		UpdateExpression:                    aws.String(update),
		ConditionExpression:                 aws.String(condition),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}
