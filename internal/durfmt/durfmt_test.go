package durfmt

import (
	"testing"
	"time"
)

func TestShort(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		10 * time.Minute: "10m", 2 * time.Hour: "2h", 90 * time.Second: "1m30s",
		2*time.Hour + 30*time.Second: "2h0m30s", 1500 * time.Millisecond: "1.5s", 0: "0s",
	} {
		if got := Short(d); got != want {
			t.Errorf("Short(%v) = %q, want %q", d, got, want)
		}
	}
}
