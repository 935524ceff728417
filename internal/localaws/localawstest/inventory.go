package localawstest

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
)

// Inventory returns the stack's resources as ctl lists them, each kind's
// sorted and kinds with none left out. Streams are left out too: AWS keeps
// a stream readable for 24 hours after its table is gone or its stream is
// disabled, so a stream is no leftover. An inventory taken before a test
// and one after are the same (SameInventory) when the test left nothing.
func Inventory(ctx context.Context, t testing.TB, ctl *control.Client) map[string][]string {
	t.Helper()
	inv, err := ctl.Resources(ctx)
	if err != nil {
		t.Fatalf("reading the local stack's inventory: %v", err)
	}
	for k, v := range inv {
		v = slices.DeleteFunc(v, func(r string) bool { return strings.Contains(r, "/stream/") })
		slices.Sort(v)
		inv[k] = v
		if len(v) == 0 {
			delete(inv, k)
		}
	}
	return inv
}

// SameInventory reports whether two inventories list the same resources.
func SameInventory(a, b map[string][]string) bool {
	return maps.EqualFunc(a, b, slices.Equal[[]string])
}

// RequireServices skips the test when the stack does not serve every one
// of the named services.
func RequireServices(t testing.TB, s *localaws.Stack, names ...string) {
	t.Helper()
	for _, name := range names {
		if _, ok := s.Service(name); !ok {
			t.Skipf("the local AWS stack does not serve %s yet", name)
		}
	}
}

// CheckInventory reports as an error of t a stack whose inventory is no
// longer want: what (such as "Delete") left or removed resources.
func CheckInventory(ctx context.Context, t testing.TB, ctl *control.Client, want map[string][]string, what string) {
	t.Helper()
	if got := Inventory(ctx, t, ctl); !SameInventory(got, want) {
		t.Errorf("%s changed the stack's resources:\n got %v\nwant %v", what, got, want)
	}
}
