package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/outboxkit/terraform-provider-outbox/internal/relaypackage"
)

func TestPrintVersionNamesTheEmbeddedRelayPackages(t *testing.T) {
	var out bytes.Buffer
	if err := printVersion(&out); err != nil {
		t.Fatalf("printVersion: %v (the relay packages are built by make relay)", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if want := "terraform-provider-outbox " + version + " (commit " + commit + ")"; lines[0] != want {
		t.Errorf("first line %q, want %q", lines[0], want)
	}
	if len(lines) != 1+len(relaypackage.Architectures) {
		t.Fatalf("want one line per relay architecture:\n%s", out.String())
	}
	for i, arch := range relaypackage.Architectures {
		sum, err := relaypackage.SHA256(arch)
		if err != nil {
			t.Fatal(err)
		}
		if want := "relay " + arch + " CodeSha256 " + sum; lines[1+i] != want {
			t.Errorf("line %d %q, want %q", 1+i, lines[1+i], want)
		}
	}
}
