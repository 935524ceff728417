package tfrun

import (
	"strings"
	"testing"
)

func TestCLIConfig(t *testing.T) {
	t.Parallel()
	got := CLIConfig("/p", "/m")
	for _, want := range []string{
		`"registry.terraform.io/outboxkit/outbox" = "/p"`,
		`path    = "/m"`,
		`include = ["registry.terraform.io/outboxkit/*"]`,
		`exclude = ["registry.terraform.io/outboxkit/*"]`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("CLI config lacks %q:\n%s", want, got)
		}
	}
}
