package outbox_test

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// TestParseCursor: a cursor item's published sequence, blocked mark and
// registered events; an item that only registers events is not started;
// a registration that is not a key is a RecordError.
func TestParseCursor(t *testing.T) {
	t.Parallel()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	key := func(pk, sk string) types.AttributeValue {
		return &types.AttributeValueMemberL{Value: []types.AttributeValue{s(pk), s(sk)}}
	}
	c, err := outbox.ParseCursor(map[string]types.AttributeValue{
		outbox.AttrPublishedSequence: n("4"), outbox.AttrBlockedSequence: n("5"), outbox.AttrStartedSequence: n("3"),
		outbox.WaitingAttributePrefix + "7": key("OUTBOX#A", "OUTBOX#A"),
	})
	if err != nil || !c.Exists || c.Published != 4 || !c.IsBlocked() || c.Next() != 5 || c.Started != 3 || c.Waiting[7] != [2]string{"OUTBOX#A", "OUTBOX#A"} {
		t.Errorf("ParseCursor = %+v, %v", c, err)
	}
	if c, err := outbox.ParseCursor(map[string]types.AttributeValue{outbox.WaitingAttributePrefix + "2": key("a", "b")}); err != nil || c.Exists || c.Next() != 1 || len(c.Waiting) != 1 {
		t.Errorf("a cursor item with only a registration: %+v, %v; want not started, next 1", c, err)
	}
	if c, err := outbox.ParseCursor(nil); err != nil || c.Exists || c.Next() != 1 {
		t.Errorf("no cursor item: %+v, %v", c, err)
	}
	var re *outbox.RecordError
	if _, err := outbox.ParseCursor(map[string]types.AttributeValue{outbox.WaitingAttributePrefix + "x": key("a", "b")}); !errors.As(err, &re) {
		t.Errorf("a registration without a sequence: %v, want a *RecordError", err)
	}
	if _, err := outbox.ParseCursor(map[string]types.AttributeValue{outbox.WaitingAttributePrefix + "3": s("a")}); !errors.As(err, &re) {
		t.Errorf("a registration that is not a key: %v, want a *RecordError", err)
	}
}

// TestOrderingProblemCoversCursor: a sort key prefix that begins the cursor
// items' sort key is refused for ordered events, like one of the sequence
// items'.
func TestOrderingProblemCoversCursor(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"OUTBOX-", "OUTBOX-C"} {
		if err := (outbox.Table{Name: "t", SortKeyPrefix: prefix}).WithDefaults().OrderingProblem(); err == nil {
			t.Errorf("prefix %q: no problem, want one: it begins %q", prefix, outbox.CursorSortKey)
		}
	}
	if err := (outbox.Table{Name: "t"}).WithDefaults().OrderingProblem(); err != nil {
		t.Errorf("the default prefix: %v", err)
	}
}
