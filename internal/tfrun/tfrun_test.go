package tfrun

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

func TestLinkOrCopySharesTheFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "provider")
	if err := os.WriteFile(src, []byte("binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "mirror")
	if err := linkOrCopy(src, dst); err != nil {
		t.Fatal(err)
	}
	a, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(a, b) {
		t.Errorf("%s is a copy of %s, want a hard link on one file system", dst, src)
	}
}

func TestLinkOrCopyReplacesAnExistingFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "provider")
	dst := filepath.Join(dir, "mirror")
	for path, body := range map[string]string{src: "new", dst: "old"} {
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := linkOrCopy(src, dst); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "new" {
		t.Errorf("%s holds %q, want the source's %q", dst, got, "new")
	}
}

func TestLockDirWaitsForItsHolder(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "build.lock")
	unlock, err := lockDir(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := lockDir(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a second lockDir while the first holds it: %v, want it to wait until its context ends", err)
	}
	unlock()
	again, err := lockDir(context.Background(), path)
	if err != nil {
		t.Fatalf("lockDir after unlock: %v", err)
	}
	again()
}

func TestLockDirBreaksAStaleLock(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "build.lock")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * staleLock)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	unlock, err := lockDir(ctx, path)
	if err != nil {
		t.Fatalf("lockDir on a lock left %s ago: %v", 2*staleLock, err)
	}
	unlock()
}
