package outbox

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestFormerPrefixItems: an item written under a former prefix parses; one
// under a forgotten prefix parses only as a pending item.
func TestFormerPrefixItems(t *testing.T) {
	t.Parallel()
	old := Table{Name: "t", SortKeyPrefix: "EVT#"}.WithDefaults()
	forgotten := Table{Name: "t", SortKeyPrefix: "E#"}.WithDefaults()
	current := Table{Name: "t", FormerSortKeyPrefixes: []string{"EVT#"}}.WithDefaults()
	w, _ := NewWriter(nil, old)
	_, r, err := w.Put(Event{Source: "s", DetailType: "d", Detail: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := current.ParseItem(old.Item(r)); err != nil {
		t.Errorf("former prefix: %v", err)
	}
	r.SortKey = forgotten.SortKeyFor(r.EventID)
	var re *RecordError
	if _, err := current.ParseItem(forgotten.Item(r)); !errors.As(err, &re) {
		t.Errorf("forgotten prefix parsed as an outbox item: %v", err)
	}
	if _, err := current.ParsePendingItem(forgotten.Item(r)); err != nil {
		t.Errorf("forgotten prefix, found pending: %v", err)
	}
	r.SortKey = "E#01JDQ8Z7K5V6W3X2Y1Z0ABCDEF"
	if _, err := current.ParsePendingItem(forgotten.Item(r)); !errors.As(err, &re) || re.Attribute != AttrEventID {
		t.Errorf("sort key of another event: %v", err)
	}
}

// TestNoPendingIndex: a writer of a table without pending index writes no
// index keys; the mode needs a dedicated table.
func TestNoPendingIndex(t *testing.T) {
	t.Parallel()
	w, err := NewWriter(nil, Table{Name: "t", NoPendingIndex: true})
	if err != nil {
		t.Fatal(err)
	}
	action, r, err := w.Put(Event{Source: "s", DetailType: "d", Detail: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{AttrPendingShard, AttrPendingSince} {
		if _, ok := action.Put.Item[a]; ok {
			t.Errorf("%s written", a)
		}
	}
	if r.PendingShard != "" || r.PendingSince != 0 {
		t.Errorf("record %+v has index keys", r)
	}
	var ce *ConfigError
	if _, err := NewWriter(nil, Table{Name: "t", Layout: LayoutShared, NoPendingIndex: true}); !errors.As(err, &ce) || ce.Field != "NoPendingIndex" {
		t.Errorf("shared table without pending index: %v", err)
	}
}

func TestHoldAndPendingKeys(t *testing.T) {
	t.Parallel()
	table := Table{Name: "t"}.WithDefaults()
	r := Record{PartitionKey: "P", SortKey: "OUTBOX#1", EventID: "1", OccurredAt: time.UnixMilli(1000)}
	at := time.UnixMilli(5000)
	h := table.Hold(r, at, at.Add(time.Minute))
	if got := h.ExpressionAttributeValues[":until"].(*types.AttributeValueMemberN).Value; got != "65000" {
		t.Errorf("hold until %s, want 65000", got)
	}
	if h.ReturnValues != types.ReturnValueAllNew {
		t.Error("the hold does not return the item")
	}
	rel := table.Release(r, at.Add(time.Minute))
	if got := rel.ExpressionAttributeValues[":held"].(*types.AttributeValueMemberN).Value; got != "65000" {
		t.Errorf("release of the hold until %s, want 65000", got)
	}
	if got := *rel.ConditionExpression; !strings.Contains(got, "#next = :held") || !strings.Contains(got, "#status = :pending") {
		t.Errorf("release applies to more than its own hold of a pending item: %s", got)
	}
	if got := rel.ExpressionAttributeValues[":minusOne"].(*types.AttributeValueMemberN).Value; got != "-1" || !strings.Contains(*rel.UpdateExpression, "REMOVE #next ADD #attempts :minusOne") {
		t.Errorf("release does not end the hold and uncount the attempt: %s (%s)", *rel.UpdateExpression, got)
	}
	k := table.AddPendingKeys(r)
	if got := k.ExpressionAttributeValues[":since"].(*types.AttributeValueMemberN).Value; got != "1000" {
		t.Errorf("pending since %s, want occurredAt 1000", got)
	}
	if !(Record{NextAttemptAt: 5001}).Held(at) || (Record{NextAttemptAt: 5000}).Held(at) {
		t.Error("Held")
	}
	if got := len(table.CurrentItems([]Record{r, r}).RequestItems["t"].Keys); got != 2 {
		t.Errorf("%d keys", got)
	}
}
