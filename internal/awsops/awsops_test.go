package awsops

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

func TestTagDiffKeepsReservedKeys(t *testing.T) {
	t.Parallel()
	set, remove := TagDiff(
		map[string]string{"b": "1", "a": "1", "aws:x": "1", "AWS:y": "1", "keep": "old"},
		map[string]string{"keep": "new", "add": "1"},
	)
	if len(set) != 2 || set["keep"] != "new" || set["add"] != "1" {
		t.Errorf("set = %v", set)
	}
	if !slices.Equal(remove, []string{"a", "b"}) {
		t.Errorf("remove = %v, want [a b]", remove)
	}
}

func TestWaiterFor(t *testing.T) {
	t.Parallel()
	w := Waiter{Timeout: time.Second, MaxDelay: 10 * time.Millisecond}
	n := 0
	if err := w.For(t.Context(), "three polls", func(context.Context) (bool, error) { n++; return n == 3, nil }); err != nil || n != 3 {
		t.Errorf("For = %v after %d polls, want nil after 3", err, n)
	}
	w.Timeout = 50 * time.Millisecond
	err := w.For(t.Context(), "never", func(context.Context) (bool, error) { return false, nil })
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "waiting for never") {
		t.Errorf("For = %v, want a deadline error naming the condition", err)
	}
}

func TestCreateCleansUp(t *testing.T) {
	t.Parallel()
	applyErr := errors.New("apply failed")
	apply := func(_ context.Context, st *[]string) error { *st = append(*st, "queue"); return applyErr }
	st, err := Create(t.Context(), time.Second, apply, func(context.Context, []string) ([]string, error) { return nil, nil })
	if !errors.Is(err, applyErr) || st != nil {
		t.Errorf("Create = %v, %v; want an empty state and the apply error", st, err)
	}
	delErr := errors.New("delete failed")
	st, err = Create(t.Context(), time.Second, apply, func(_ context.Context, st []string) ([]string, error) { return st, delErr })
	if !errors.Is(err, applyErr) || !errors.Is(err, delErr) || !slices.Equal(st, []string{"queue"}) {
		t.Errorf("Create = %v, %v; want what remains and both errors", st, err)
	}
}

func TestDriftAddMissingOnce(t *testing.T) {
	t.Parallel()
	var d Drift
	d.AddMissing("queue")
	d.AddMissing("queue")
	d.AddChanged("rule")
	d.AddChanged("target", "arn")
	if got := d.String(); got != "queue is missing; target changed (arn)" {
		t.Errorf("String = %q", got)
	}
}

func TestPositiveOr(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ d, want time.Duration }{{0, time.Minute}, {-time.Second, time.Minute}, {time.Second, time.Second}} {
		if got := PositiveOr(c.d, time.Minute); got != c.want {
			t.Errorf("PositiveOr(%s, 1m) = %s, want %s", c.d, got, c.want)
		}
	}
}

func TestSyncTagsCallsOnlyWhatIsNeeded(t *testing.T) {
	t.Parallel()
	var untagged []string
	var tagged map[string]string
	untag := func(_ context.Context, keys []string) error { untagged = keys; return nil }
	tag := func(_ context.Context, set map[string]string) error { tagged = set; return nil }
	if err := SyncTags(t.Context(), map[string]string{"a": "1", "b": "1"}, map[string]string{"b": "2"}, untag, tag); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(untagged, []string{"a"}) || len(tagged) != 1 || tagged["b"] != "2" {
		t.Errorf("untagged %v, tagged %v; want [a] and b=2", untagged, tagged)
	}
	fail := func(context.Context, map[string]string) error { return errors.New("called") }
	failUntag := func(context.Context, []string) error { return errors.New("called") }
	if err := SyncTags(t.Context(), map[string]string{"b": "2"}, map[string]string{"b": "2"}, failUntag, fail); err != nil {
		t.Errorf("SyncTags of equal tags made a call: %v", err)
	}
}

func TestTagMap(t *testing.T) {
	t.Parallel()
	type tag struct{ k, v *string }
	k, v := "team", "billing"
	got := TagMap([]tag{{&k, &v}}, func(t tag) (*string, *string) { return t.k, t.v })
	if len(got) != 1 || got["team"] != "billing" {
		t.Errorf("TagMap = %v", got)
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	calls := 0
	del := func(_ context.Context, id string) error {
		calls++
		if id == "gone" {
			return &smithy.GenericAPIError{Code: "ResourceNotFoundException"}
		}
		if id == "locked" {
			return errors.New("denied")
		}
		return nil
	}
	if err := Delete(t.Context(), "queue", "", del); err != nil || calls != 0 {
		t.Errorf("Delete of nothing recorded = %v after %d calls", err, calls)
	}
	if err := Delete(t.Context(), "queue", "gone", del); err != nil {
		t.Errorf("Delete of a queue already gone = %v", err)
	}
	if err := Delete(t.Context(), "queue", "locked", del); err == nil || !strings.Contains(err.Error(), "deleting queue (locked): denied") {
		t.Errorf("Delete = %v, want the resource named", err)
	}
}

func TestTagList(t *testing.T) {
	t.Parallel()
	type tag struct{ k, v string }
	got := TagList(map[string]string{"b": "2", "a": "1"}, func(k, v *string) tag { return tag{*k, *v} })
	if !slices.Equal(got, []tag{{"a", "1"}, {"b", "2"}}) {
		t.Errorf("TagList = %v, want a=1, b=2 in key order", got)
	}
	if TagList(nil, func(k, v *string) tag { return tag{} }) != nil {
		t.Error("TagList of no tags is not nil")
	}
}

func TestWithTagCopies(t *testing.T) {
	t.Parallel()
	user := map[string]string{"team": "billing"}
	got := WithTag(user, "outbox:pipeline", "orders")
	if len(got) != 2 || got["outbox:pipeline"] != "orders" || got["team"] != "billing" || len(user) != 1 {
		t.Errorf("WithTag = %v (user's tags now %v)", got, user)
	}
	if got := WithTag(nil, "k", "v"); len(got) != 1 || got["k"] != "v" {
		t.Errorf("WithTag(nil) = %v", got)
	}
}

func TestFieldsAddsOnlyChanged(t *testing.T) {
	t.Parallel()
	var f Fields
	add := f.Add
	add(true, "batch_size")
	add(false, "function")
	add(true, "state")
	if !slices.Equal(f, Fields{"batch_size", "state"}) {
		t.Errorf("Fields = %v, want [batch_size state]", f)
	}
}

func TestTableActiveNeedsTheTableAndEveryIndex(t *testing.T) {
	t.Parallel()
	index := func(s types.IndexStatus) types.GlobalSecondaryIndexDescription {
		return types.GlobalSecondaryIndexDescription{IndexStatus: s}
	}
	for name, tc := range map[string]struct {
		d    types.TableDescription
		want bool
	}{
		"active, no index":  {types.TableDescription{TableStatus: types.TableStatusActive}, true},
		"updating":          {types.TableDescription{TableStatus: types.TableStatusUpdating}, false},
		"index creating":    {types.TableDescription{TableStatus: types.TableStatusActive, GlobalSecondaryIndexes: []types.GlobalSecondaryIndexDescription{index(types.IndexStatusActive), index(types.IndexStatusCreating)}}, false},
		"table and indexes": {types.TableDescription{TableStatus: types.TableStatusActive, GlobalSecondaryIndexes: []types.GlobalSecondaryIndexDescription{index(types.IndexStatusActive)}}, true},
	} {
		if got := tableActive(&tc.d); got != tc.want {
			t.Errorf("%s: tableActive = %t, want %t", name, got, tc.want)
		}
	}
}
