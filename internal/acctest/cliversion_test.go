package acctest

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

// TestSkipOpenTofu runs the check against stand-in CLIs that print what
// Terraform's and OpenTofu's `version` print, or fail.
func TestSkipOpenTofu(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, script, wantSkip string
	}{
		{"terraform", "echo 'Terraform v1.16.0'; echo 'on linux_amd64'", ""},
		// A later OpenTofu reporting a version at or above Terraform's
		// gate is skipped all the same.
		{"opentofu", "echo 'OpenTofu v1.14.0'; echo 'on linux_amd64'", "OpenTofu 1.14.0 has no actions or list resources: skipping test"},
		{"failing", "echo 'OpenTofu v1.14.0'; exit 1", ""},
		{"silent", "true", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cli := filepath.Join(dir, c.name)
			if err := os.WriteFile(cli, []byte("#!/bin/sh\n"+c.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			check := skipOpenTofu{cli: func() string { return cliName(cli) }}
			resp := &tfversion.CheckTerraformVersionResponse{}
			check.CheckTerraformVersion(context.Background(),
				tfversion.CheckTerraformVersionRequest{TerraformVersion: version.Must(version.NewVersion("1.14.0"))}, resp)
			if resp.Skip != c.wantSkip || resp.Error != nil {
				t.Errorf("skip %q, error %v; want skip %q and no error", resp.Skip, resp.Error, c.wantSkip)
			}
		})
	}
}

// TestCLINameOfAMissingCLI: a CLI that is not there is taken for Terraform,
// so the test goes on to fail where the framework runs it.
func TestCLINameOfAMissingCLI(t *testing.T) {
	if got := cliName(filepath.Join(t.TempDir(), "absent")); got != "Terraform" {
		t.Errorf("cliName = %q, want Terraform", got)
	}
}
