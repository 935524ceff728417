package tfrun_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/outboxkit/terraform-provider-outbox/internal/acctest"
	"github.com/outboxkit/terraform-provider-outbox/internal/demo"
	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/localawstest"
	"github.com/outboxkit/terraform-provider-outbox/internal/tfrun"
)

// The module's registry address, as its README gives it.
const (
	moduleNamespace = "outboxkit"
	moduleName      = "outbox-pipeline"
	moduleProvider  = "outbox"
	moduleVersion   = "0.1.0"
)

// moduleRegistry serves one module version by the module registry protocol
// (https://developer.hashicorp.com/terraform/internals/module-registry-protocol):
// the versions list, the download endpoint, whose X-Terraform-Get names an
// archive, and the archive. It records the paths it served.
type moduleRegistry struct {
	archive []byte
	mu      sync.Mutex
	served  []string
}

func (reg *moduleRegistry) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reg.mu.Lock()
	reg.served = append(reg.served, r.URL.Path)
	reg.mu.Unlock()
	base := fmt.Sprintf("/modules/v1/%s/%s/%s/", moduleNamespace, moduleName, moduleProvider)
	switch r.URL.Path {
	case base + "versions":
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"modules":[{"versions":[{"version":%q}]}]}`, moduleVersion)
	case base + moduleVersion + "/download":
		w.Header().Set("X-Terraform-Get", "http://"+r.Host+"/archives/"+moduleName+"-"+moduleVersion+".tar.gz")
		w.WriteHeader(http.StatusNoContent)
	case "/archives/" + moduleName + "-" + moduleVersion + ".tar.gz":
		w.Header().Set("Content-Type", "application/gzip")
		_, _ = w.Write(reg.archive)
	default:
		http.NotFound(w, r)
	}
}

func (reg *moduleRegistry) paths() []string {
	reg.mu.Lock()
	defer reg.mu.Unlock()
	return slices.Clone(reg.served)
}

// TestAccModuleFromRegistry releases the module with
// scripts/release-module.sh, serves the result as registry.terraform.io's
// outboxkit/outbox-pipeline/outbox from a local module registry, and applies
// a configuration that uses it by that address on the local stack, with the
// provider built from this checkout: what a user of the registry does.
func TestAccModuleFromRegistry(t *testing.T) {
	tf := acctest.TerraformCLI(t, root)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	released, archive := releaseModule(ctx, t)
	reg := &moduleRegistry{archive: archive}
	srv := httptest.NewServer(reg)
	defer srv.Close()

	stack := localawstest.Start(t)
	inst, err := tfrun.Setup(ctx, tfrun.Options{
		Terraform: tf, Module: root, Dir: t.TempDir(),
		Hosts: map[string]map[string]string{"registry.terraform.io": {"modules.v1": srv.URL + "/modules/v1/"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "main.tf"), []byte(registryModuleConfig()), 0o644); err != nil {
		t.Fatal(err)
	}
	run := inst.Runner(work, tfrun.AWSEnv(stack.Endpoint(), stack.Options().Region))
	run.Log = acctest.TestLog(t)
	if err := run.Init(ctx); err != nil {
		t.Fatalf("terraform init: %v", err)
	}
	if got := reg.paths(); !slices.Contains(got, "/archives/"+moduleName+"-"+moduleVersion+".tar.gz") {
		t.Fatalf("init did not download the module from the registry; it asked for %v", got)
	}
	assertInstalledFromRegistry(t, work)

	destroyed := destroyOnFailure(t, func(ctx context.Context) error { return run.Destroy(ctx) })
	if err := run.Apply(ctx); err != nil {
		t.Fatalf("terraform apply: %v", err)
	}
	var table string
	if err := run.OutputInto(ctx, "table_name", &table); err != nil {
		t.Fatal(err)
	}
	ddb := dynamodb.NewFromConfig(demo.AWSConfig(stack.Endpoint(), stack.Options().Region))
	if out, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table}); err != nil || out.Table.LatestStreamArn == nil {
		t.Errorf("the module's table %q with its stream: %v", table, err)
	}
	if err := run.Destroy(ctx); err != nil {
		t.Fatalf("terraform destroy: %v", err)
	}
	destroyed()

	// The module repository's example refers to the module at its root.
	validateReleasedExample(ctx, t, inst, released)
}

// releaseModule runs scripts/release-module.sh, checks the repository it
// makes (the module at its root, HEAD tagged with the version) and returns
// its directory and its archive.
func releaseModule(ctx context.Context, t *testing.T) (string, []byte) {
	t.Helper()
	released := filepath.Join(t.TempDir(), "terraform-outbox-outbox-pipeline")
	script := exec.CommandContext(ctx, "bash", filepath.Join(root, "scripts", "release-module.sh"),
		"-p", tfrun.DefaultProviderVersion, "-t", moduleVersion, released)
	if out, err := script.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release-module.sh: %v\n%s", err, out)
	}
	for _, f := range []string{"main.tf", "variables.tf", "outputs.tf", "versions.tf", "README.md", "examples/basic/main.tf"} {
		if _, err := os.Stat(filepath.Join(released, f)); err != nil {
			t.Errorf("the module's repository lacks %s at its root: %v", f, err)
		}
	}
	if out, err := exec.Command("git", "-C", released, "tag", "--points-at", "HEAD").Output(); err != nil || strings.TrimSpace(string(out)) != "v"+moduleVersion {
		t.Errorf("the module's repository HEAD is tagged %q (%v), want v%s", out, err, moduleVersion)
	}
	archive, err := tarGz(released)
	if err != nil {
		t.Fatal(err)
	}
	return released, archive
}

// registryModuleConfig is a configuration that uses the module by its
// registry address.
func registryModuleConfig() string {
	return fmt.Sprintf(`module "orders" {
  source  = "%s/%s/%s"
  version = "~> %s"

  name = "regmod"
  relay = {
    architecture = "x86_64"
  }
  subscriptions = {
    billing = {
      sources = ["com.example.orders"]
    }
  }
}

output "table_name" {
  value = module.orders.table_name
}
`, moduleNamespace, moduleName, moduleProvider, moduleVersion)
}

// validateReleasedExample initialises and validates the released
// repository's examples/basic.
func validateReleasedExample(ctx context.Context, t *testing.T, inst *tfrun.Installation, released string) {
	t.Helper()
	example := inst.Runner(filepath.Join(released, "examples", "basic"), nil)
	example.Log = acctest.TestLog(t)
	if err := example.Init(ctx); err != nil {
		t.Fatalf("init of the released examples/basic: %v", err)
	}
	if err := example.Validate(ctx); err != nil {
		t.Fatalf("validate of the released examples/basic: %v", err)
	}
}

// assertInstalledFromRegistry checks Terraform's record of the installed
// module: the registry address and the version served.
func assertInstalledFromRegistry(t *testing.T, work string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(work, ".terraform", "modules", "modules.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Modules []struct{ Key, Source, Version string }
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("registry.terraform.io/%s/%s/%s", moduleNamespace, moduleName, moduleProvider)
	for _, m := range manifest.Modules {
		if m.Key == "orders" {
			if m.Source != want || m.Version != moduleVersion {
				t.Errorf("module orders installed from %s %s, want %s %s", m.Source, m.Version, want, moduleVersion)
			}
			return
		}
	}
	t.Errorf("modules.json has no module orders: %s", raw)
}

// tarGz archives dir's files (not .git) with paths relative to dir.
func tarGz(dir string) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
