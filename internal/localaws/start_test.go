package localaws_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
)

func BenchmarkStackStart(b *testing.B) {
	for b.Loop() {
		s, err := localaws.Start(context.Background(), localaws.Options{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestStartStopsOnContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := localaws.Start(ctx, localaws.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Port() == 0 || s.Endpoint() == "" {
		t.Fatalf("endpoint %q port %d", s.Endpoint(), s.Port())
	}
	cancel()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestStartFailsOnBusyPort(t *testing.T) {
	t.Parallel()
	s, err := localaws.Start(context.Background(), localaws.Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	}()
	if _, err := localaws.Start(context.Background(), localaws.Options{Addr: s.Endpoint()[len("http://"):]}); err == nil {
		t.Fatal("second stack on the same port started")
	}
}
