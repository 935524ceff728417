package outbox

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Regions of a pipeline on a global table. Every reconciler run of a Region
// puts the Region's heartbeat item (partition key
// RegionPartitionKey(region), sort key RegionSortKey): when it ran, since
// when it has run without a silent spell, what it found pending, and its
// view of its peers' heartbeats. A Region whose heartbeat is too old is
// silent, and its successor writes a takeover claim item (partition key
// TakeoverPartitionKey(silent), sort key TakeoverSortKey): the successor,
// since when, and a claim id. Like the lease and cursor items, neither
// begins with the default sort key prefix nor carries a status, so neither
// the stream filter nor a query of pending or failed events sees them. Both
// replicate to every Region; the decisions taken on them are in
// internal/relay/takeover.

// RegionSortKey is the sort key of every heartbeat item.
const RegionSortKey = "OUTBOX-REGION"

// TakeoverSortKey is the sort key of every takeover claim item.
const TakeoverSortKey = "OUTBOX-TAKEOVER"

// Attributes of heartbeat and claim items. Times are Unix milliseconds.
const (
	// AttrRegion is the Region a heartbeat is of, or the silent Region a
	// claim is on.
	AttrRegion = "outboxRegion"
	// AttrHeartbeatAt is when the Region's reconciler run began.
	AttrHeartbeatAt = "outboxHeartbeatAt"
	// AttrHeartbeatSince is when the Region's current run of fresh
	// heartbeats began: the run that found its previous heartbeat fresh
	// keeps it, the first run after a silent spell sets it.
	AttrHeartbeatSince = "outboxHeartbeatSince"
	// AttrHeartbeatPending is how many of its own events the Region's
	// reconciler found pending in its last sweep.
	AttrHeartbeatPending = "outboxPending"
	// AttrHeartbeatView maps each peer Region to the time of its heartbeat
	// as this Region read it in its local replica.
	AttrHeartbeatView = "outboxView"
	// AttrSuccessor is the Region that claims a silent one.
	AttrSuccessor = "outboxSuccessor"
	// AttrClaimedAt is when the successor wrote its claim.
	AttrClaimedAt = "outboxClaimedAt"
	// AttrClaimID tells one claim from another, so that a successor knows
	// its own claim after replication settled.
	AttrClaimID = "outboxClaimId"
)

// Heartbeat is what a heartbeat item says.
type Heartbeat struct {
	Region  string
	At      time.Time
	Since   time.Time
	Pending int64
	View    map[string]time.Time
}

// Claim is what a takeover claim item says: Successor publishes the events
// of Silent since Since.
type Claim struct {
	Silent    string
	Successor string
	Since     time.Time
	ID        string
}

// RegionPartitionKey is the partition key of the heartbeat item of region:
// OUTBOX-REGION#<region>.
func RegionPartitionKey(region string) string { return RegionSortKey + "#" + region }

// TakeoverPartitionKey is the partition key of the claim item on the
// silent Region: OUTBOX-TAKEOVER#<region>.
func TakeoverPartitionKey(silent string) string { return TakeoverSortKey + "#" + silent }

// HeartbeatKey returns the primary key of the heartbeat item of region.
func (t Table) HeartbeatKey(region string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{t.PartitionKey: stringValue(RegionPartitionKey(region)), t.SortKey: stringValue(RegionSortKey)}
}

// TakeoverKey returns the primary key of the claim item on silent.
func (t Table) TakeoverKey(silent string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{t.PartitionKey: stringValue(TakeoverPartitionKey(silent)), t.SortKey: stringValue(TakeoverSortKey)}
}

// RegionItemsProblem reports a sort key prefix (current or former) that
// begins RegionSortKey or TakeoverSortKey: the stream filter would pass
// those items' insertions to the relay as outbox events, so such a table
// cannot serve several Regions; nil when it can.
func (t Table) RegionItemsProblem() error {
	for i, p := range t.SortKeyPrefixes() {
		for _, sk := range []string{RegionSortKey, TakeoverSortKey} {
			if strings.HasPrefix(sk, p) {
				field := "SortKeyPrefix"
				if i > 0 {
					field = "FormerSortKeyPrefixes"
				}
				return &ConfigError{Field: field, Problem: fmt.Sprintf("%q begins the sort key %q of the Regions' heartbeat and takeover items", p, sk),
					Fix: `a pipeline of several Regions needs a prefix that does not, such as the default "OUTBOX#"`}
			}
		}
	}
	return nil
}

// GetHeartbeat returns the strongly consistent read (of the local replica)
// of the heartbeat item of region.
func (t Table) GetHeartbeat(region string) *dynamodb.GetItemInput {
	return &dynamodb.GetItemInput{TableName: aws.String(t.Name), Key: t.HeartbeatKey(region), ConsistentRead: aws.Bool(true)}
}

// PutHeartbeat returns the write of h, which replaces the Region's
// previous heartbeat: only the Region itself writes it.
func (t Table) PutHeartbeat(h Heartbeat) *dynamodb.PutItemInput {
	item := t.HeartbeatKey(h.Region)
	item[AttrRegion] = stringValue(h.Region)
	item[AttrHeartbeatAt] = numberValue(h.At.UnixMilli())
	item[AttrHeartbeatSince] = numberValue(h.Since.UnixMilli())
	item[AttrHeartbeatPending] = numberValue(h.Pending)
	view := map[string]types.AttributeValue{}
	for region, at := range h.View {
		view[region] = numberValue(at.UnixMilli())
	}
	item[AttrHeartbeatView] = &types.AttributeValueMemberM{Value: view}
	return &dynamodb.PutItemInput{TableName: aws.String(t.Name), Item: item}
}

// ParseHeartbeat decodes a heartbeat item; nil is a Region that never ran
// (the zero Heartbeat, whose At is zero).
func ParseHeartbeat(item map[string]types.AttributeValue) (Heartbeat, error) {
	if item == nil {
		return Heartbeat{}, nil
	}
	p := itemParser{item: item}
	h := Heartbeat{Region: p.str(AttrRegion, true), At: p.millis(AttrHeartbeatAt, true), Since: p.millis(AttrHeartbeatSince, false), Pending: p.num(AttrHeartbeatPending)}
	if v, ok := item[AttrHeartbeatView]; ok {
		m, isMap := v.(*types.AttributeValueMemberM)
		if !isMap {
			p.fail(AttrHeartbeatView, "is not a map of Regions to times")
			return h, p.err
		}
		h.View = map[string]time.Time{}
		for region := range m.Value {
			h.View[region] = (&itemParser{item: m.Value}).millis(region, true)
		}
	}
	return h, p.err
}

// GetClaim returns the strongly consistent read (of the local replica) of
// the claim item on silent.
func (t Table) GetClaim(silent string) *dynamodb.GetItemInput {
	return &dynamodb.GetItemInput{TableName: aws.String(t.Name), Key: t.TakeoverKey(silent), ConsistentRead: aws.Bool(true)}
}

// PutClaim returns the write of c. It applies when the local replica holds
// no claim on c.Silent or still the claim of id replaced (the one the
// successor read and found void; "" for none). The condition is checked in
// the local replica only: a claim written meanwhile in another Region is
// settled by last writer wins, and the successor reads its claim back after
// a settle time before it acts.
func (t Table) PutClaim(c Claim, replaced string) *dynamodb.PutItemInput {
	item := t.TakeoverKey(c.Silent)
	item[AttrRegion] = stringValue(c.Silent)
	item[AttrSuccessor] = stringValue(c.Successor)
	item[AttrClaimedAt] = numberValue(c.Since.UnixMilli())
	item[AttrClaimID] = stringValue(c.ID)
	in := &dynamodb.PutItemInput{TableName: aws.String(t.Name), Item: item,
		ConditionExpression:      aws.String("attribute_not_exists(#id)"),
		ExpressionAttributeNames: map[string]string{"#id": AttrClaimID}}
	if replaced != "" {
		in.ConditionExpression = aws.String("attribute_not_exists(#id) OR #id = :replaced")
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":replaced": stringValue(replaced)}
	}
	return in
}

// DeleteClaim returns the delete by which the successor hands the silent
// Region back; it applies only while the local replica holds the claim of
// id.
func (t Table) DeleteClaim(silent, id string) *dynamodb.DeleteItemInput {
	return &dynamodb.DeleteItemInput{TableName: aws.String(t.Name), Key: t.TakeoverKey(silent),
		ConditionExpression:       aws.String("#id = :id"),
		ExpressionAttributeNames:  map[string]string{"#id": AttrClaimID},
		ExpressionAttributeValues: map[string]types.AttributeValue{":id": stringValue(id)}}
}

// ParseClaim decodes a claim item; nil is a Region without a claim (the
// zero Claim, whose ID is empty).
func ParseClaim(item map[string]types.AttributeValue) (Claim, error) {
	if item == nil {
		return Claim{}, nil
	}
	p := itemParser{item: item}
	c := Claim{Silent: p.str(AttrRegion, true), Successor: p.str(AttrSuccessor, true), Since: p.millis(AttrClaimedAt, true), ID: p.str(AttrClaimID, true)}
	return c, p.err
}

// millis reads a time kept in Unix milliseconds; zero when absent.
func (p *itemParser) millis(name string, required bool) time.Time {
	if _, ok := p.item[name]; !ok {
		if required {
			p.fail(name, "is missing")
		}
		return time.Time{}
	}
	return time.UnixMilli(p.num(name)).UTC()
}
