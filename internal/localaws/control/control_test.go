package control_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
)

// InRegion names its Region in every call's query, beside the route's own
// query, and leaves the client it came from on the default Region.
func TestInRegionNamesTheRegion(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.RequestURI())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	c := control.New(srv.URL, nil)
	if _, err := c.InRegion("eu-west-1").FireSchedule(ctx, "", "reconcile"); err != nil {
		t.Fatal(err)
	}
	if err := c.InRegion("eu-west-1").Do(ctx, http.MethodGet, "mappings/status?uuid=1", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.FireSchedule(ctx, "", "reconcile"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/_localaws/schedules/fire?region=eu-west-1",
		"/_localaws/mappings/status?uuid=1&region=eu-west-1",
		"/_localaws/schedules/fire",
	}
	if len(seen) != len(want) {
		t.Fatalf("calls %q, want %q", seen, want)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Errorf("call %d went to %s, want %s", i, seen[i], want[i])
		}
	}
}
