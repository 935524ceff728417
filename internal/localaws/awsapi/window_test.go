package awsapi_test

import (
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
)

func TestWindow(t *testing.T) {
	t.Parallel()
	var w awsapi.Window[int]
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const d = 5 * time.Minute
	w.Put("a", 1, start)
	w.Put("b", 2, start.Add(time.Minute))
	if v, ok := w.Get("a", start.Add(d-time.Second), d); !ok || v != 1 {
		t.Fatalf("a inside the window: %d %v", v, ok)
	}
	if _, ok := w.Get("a", start.Add(d), d); ok {
		t.Fatal("a at the end of its window")
	}
	if w.Len() != 1 {
		t.Fatalf("%d keys after a expired, want 1", w.Len())
	}
	w.Put("b", 3, start.Add(5*time.Minute)) // put again: its first entry must not expire it
	if v, ok := w.Get("b", start.Add(7*time.Minute), d); !ok || v != 3 {
		t.Fatalf("b put again: %d %v", v, ok)
	}
	w.Delete("b")
	if _, ok := w.Get("b", start.Add(7*time.Minute), d); ok {
		t.Fatal("b after Delete")
	}
}
