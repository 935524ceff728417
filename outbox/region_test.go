package outbox_test

import (
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestHeartbeatAndClaimItems: the items written are keyed outside the
// stream filter and read back as written.
func TestHeartbeatAndClaimItems(t *testing.T) {
	t.Parallel()
	tab := outbox.Table{Name: "orders"}.WithDefaults()
	at := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	h := outbox.Heartbeat{Region: "eu-west-1", At: at, Since: at.Add(-time.Hour), Pending: 12, View: map[string]time.Time{"us-east-1": at.Add(-time.Minute)}}
	put := tab.PutHeartbeat(h)
	if pk := put.Item[tab.PartitionKey].(*types.AttributeValueMemberS).Value; pk != "OUTBOX-REGION#eu-west-1" {
		t.Errorf("heartbeat partition key %q", pk)
	}
	if sk := put.Item[tab.SortKey].(*types.AttributeValueMemberS).Value; sk != outbox.RegionSortKey {
		t.Errorf("heartbeat sort key %q", sk)
	}
	got, err := outbox.ParseHeartbeat(put.Item)
	if err != nil || got.Region != h.Region || !got.At.Equal(at) || !got.Since.Equal(h.Since) || got.Pending != 12 || !got.View["us-east-1"].Equal(at.Add(-time.Minute)) {
		t.Errorf("ParseHeartbeat = %+v, %v; want %+v", got, err, h)
	}
	c := outbox.Claim{Silent: "us-east-1", Successor: "eu-west-1", Since: at, ID: "id1"}
	pc := tab.PutClaim(c, "")
	if *pc.ConditionExpression != "attribute_not_exists(#id)" || pc.Item[tab.SortKey].(*types.AttributeValueMemberS).Value != outbox.TakeoverSortKey {
		t.Errorf("PutClaim without a claim to replace: %+v", pc)
	}
	if pc := tab.PutClaim(c, "old"); pc.ExpressionAttributeValues[":replaced"].(*types.AttributeValueMemberS).Value != "old" {
		t.Errorf("PutClaim replacing a void claim: %+v", pc)
	}
	if gc, err := outbox.ParseClaim(pc.Item); err != nil || gc != (outbox.Claim{Silent: c.Silent, Successor: c.Successor, Since: at, ID: "id1"}) {
		t.Errorf("ParseClaim = %+v, %v; want %+v", gc, err, c)
	}
	if del := tab.DeleteClaim(c.Silent, c.ID); del.ExpressionAttributeValues[":id"].(*types.AttributeValueMemberS).Value != "id1" || !*tab.GetClaim(c.Silent).ConsistentRead {
		t.Errorf("DeleteClaim: %+v", del)
	}
	var re *outbox.RecordError
	if _, err := outbox.ParseClaim(map[string]types.AttributeValue{outbox.AttrRegion: &types.AttributeValueMemberS{Value: "x"}}); !errors.As(err, &re) {
		t.Errorf("a claim without successor: %v, want a *RecordError", err)
	}
	if _, err := outbox.ParseHeartbeat(map[string]types.AttributeValue{outbox.AttrRegion: &types.AttributeValueMemberS{Value: "x"}, outbox.AttrHeartbeatAt: &types.AttributeValueMemberN{Value: "1"},
		outbox.AttrHeartbeatView: &types.AttributeValueMemberS{Value: "x"}}); !errors.As(err, &re) {
		t.Errorf("a view that is not a map: %v, want a *RecordError", err)
	}
	if h, err := outbox.ParseHeartbeat(nil); err != nil || !h.At.IsZero() {
		t.Errorf("no heartbeat item: %+v, %v", h, err)
	}
}

// TestRegionItemsProblem: a sort key prefix that begins the heartbeat or
// claim items' sort key is refused.
func TestRegionItemsProblem(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"OUTBOX-", "OUTBOX-R", "OUTBOX-T"} {
		if err := (outbox.Table{Name: "t", SortKeyPrefix: prefix}).WithDefaults().RegionItemsProblem(); err == nil {
			t.Errorf("prefix %q: no problem, want one", prefix)
		}
	}
	if err := (outbox.Table{Name: "t"}).WithDefaults().RegionItemsProblem(); err != nil {
		t.Errorf("the default prefix: %v", err)
	}
}
