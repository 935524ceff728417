package acctest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/hashicorp/go-version"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"
)

// Gating a test by the CLI it runs on: a TestCase lists the checks in its
// TerraformVersionChecks, and terraform-plugin-testing skips the test (it
// passes) when one of them says so.
//
//   - A feature added by a Terraform version: tfversion.SkipBelow with the
//     version that added it (tfversion.Version1_12_0 for resource identity,
//     tfversion.Version1_14_0 for actions and list resources, Version1_16_0
//     below for the before_destroy and after_destroy action triggers).
//   - A feature OpenTofu does not have (actions, list resources and query):
//     SkipOpenTofu beside it. OpenTofu reports its own version to the checks
//     (OpenTofu 1.12.6 reports 1.12.6), so a version alone would let a later
//     OpenTofu run a test of something it lacks.

// Version1_16_0 is Terraform 1.16.0, the first with the before_destroy and
// after_destroy action triggers (tfversion's constants stop at 1.15.0).
var Version1_16_0 = version.Must(version.NewVersion("1.16.0"))

// SkipOpenTofu skips the test when the CLI under test (TF_ACC_TERRAFORM_PATH,
// else terraform on PATH) is OpenTofu, whose `version` prints "OpenTofu vX.Y.Z".
var SkipOpenTofu tfversion.TerraformVersionCheck = skipOpenTofu{cli: sync.OnceValue(func() string {
	path := os.Getenv("TF_ACC_TERRAFORM_PATH")
	if path == "" {
		path = "terraform"
	}
	return cliName(path)
})}

// skipOpenTofu skips unless cli, the name of the CLI under test, is Terraform.
type skipOpenTofu struct{ cli func() string }

func (s skipOpenTofu) CheckTerraformVersion(_ context.Context, req tfversion.CheckTerraformVersionRequest, resp *tfversion.CheckTerraformVersionResponse) {
	if cli := s.cli(); cli != "Terraform" {
		resp.Skip = cli + " " + req.TerraformVersion.String() + " has no actions or list resources: skipping test"
	}
}

// cliName is the first word that the CLI at path prints for `version`:
// "Terraform" or "OpenTofu". A CLI that cannot say is taken for Terraform,
// so the test runs and fails on its own terms.
func cliName(path string) string {
	cmd := exec.Command(path, "version")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	if name, _, _ := strings.Cut(strings.TrimSpace(string(out)), " "); err == nil && name != "" {
		return name
	}
	return "Terraform"
}

// CLIVersion is the version the CLI at path reports (`version -json`'s
// terraform_version; OpenTofu reports its own).
func CLIVersion(path string) (*version.Version, error) {
	cmd := exec.Command(path, "version", "-json")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, err
	}
	return version.NewVersion(v.Version)
}
