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

func TestHostBlocks(t *testing.T) {
	t.Parallel()
	got := HostBlocks(map[string]map[string]string{
		"registry.terraform.io": {"modules.v1": "http://127.0.0.1:1/modules/v1/", "providers.v1": "http://127.0.0.1:1/providers/v1/"},
		"a.example":             {"modules.v1": "https://a.example/m/"},
	})
	want := `host "a.example" {
  services = {
    "modules.v1" = "https://a.example/m/"
  }
}
host "registry.terraform.io" {
  services = {
    "modules.v1" = "http://127.0.0.1:1/modules/v1/"
    "providers.v1" = "http://127.0.0.1:1/providers/v1/"
  }
}
`
	if got != want {
		t.Errorf("HostBlocks:\n%s\nwant\n%s", got, want)
	}
	if HostBlocks(nil) != "" {
		t.Error("no hosts must give no blocks")
	}
}
