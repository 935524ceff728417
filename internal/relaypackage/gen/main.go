// Command gen builds the relay Lambda function's deployment packages: it
// cross-compiles ./relay-lambda for linux/arm64 and linux/amd64 and writes
// internal/relaypackage/dist/relay_arm64.zip and relay_x86_64.zip, each
// holding one executable, bootstrap. The build is reproducible: the same
// source and Go version give the same zips.
//
// It also builds the naive relay (./relay-lambda/naive), the baseline that
// cmd/outbox-bench measures the relay against, into
// dist/_naive/naive_<arch>.zip. Directories starting with "_" are left out
// of go:embed, so the provider does not ship the baseline.
//
// Run it with `go generate ./internal/relaypackage` (or `make build`).
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/outboxkit/terraform-provider-outbox/internal/relaypackage"
)

func main() {
	out := flag.String("out", "", "directory of the zips (default: the dist directory of internal/relaypackage)")
	archs := flag.String("arch", strings.Join(relaypackage.Architectures, ","), "comma-separated Lambda architectures")
	flag.Parse()
	if err := run(*out, strings.Split(*archs, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "relaypackage:", err)
		os.Exit(1)
	}
}

func run(out string, archs []string) error {
	goBin := goCommand()
	root, err := moduleRoot(goBin)
	if err != nil {
		return err
	}
	if out == "" {
		out = filepath.Join(root, "internal", "relaypackage", "dist")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "relaypackage")
	if err != nil {
		return err
	}
	defer func() {
		if err := os.RemoveAll(tmp); err != nil {
			fmt.Fprintln(os.Stderr, "relaypackage: removing the build directory:", err)
		}
	}()

	for _, arch := range archs {
		name, err := relaypackage.FileName(arch)
		if err != nil {
			return err
		}
		if err := build(goBin, root, tmp, "./relay-lambda", arch, filepath.Join(out, name)); err != nil {
			return err
		}
		if err := build(goBin, root, tmp, "./relay-lambda/naive", arch, filepath.Join(out, NaiveDir, NaiveFileName(arch))); err != nil {
			return err
		}
	}
	return nil
}

// NaiveDir is the directory of the naive relay's packages, below dist.
const NaiveDir = "_naive"

// NaiveFileName is the name of the naive relay's package for a Lambda
// architecture: naive_<arch>.zip.
func NaiveFileName(arch string) string {
	if arch == "amd64" {
		arch = relaypackage.ArchX86_64
	}
	return "naive_" + arch + ".zip"
}

// build cross-compiles the main package pkg for the Lambda architecture
// arch and writes its deployment package to dst.
func build(goBin, root, tmp, pkg, arch, dst string) error {
	goarch, err := relaypackage.GOARCH(arch)
	if err != nil {
		return err
	}
	bin := filepath.Join(tmp, "bootstrap-"+goarch)
	cmd := exec.Command(goBin, "build", "-trimpath", "-buildvcs=false", "-tags", "lambda.norpc",
		"-ldflags", "-s -w -buildid=", "-o", bin, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+goarch, "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s for linux/%s: %w", pkg, goarch, err)
	}
	exe, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	var zip bytes.Buffer
	if err := relaypackage.WriteZip(&zip, exe); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := replaceFile(dst, zip.Bytes()); err != nil {
		return err
	}
	sum := sha256.Sum256(zip.Bytes())
	fmt.Fprintf(os.Stderr, "relaypackage: wrote %s (%d bytes, bootstrap %d bytes, CodeSha256 %s)\n",
		dst, zip.Len(), len(exe), base64.StdEncoding.EncodeToString(sum[:]))
	return nil
}

// replaceFile writes b to path unless path already holds b, through a
// temporary file renamed into place, so that builds running at the same time
// (a release and a test run) never read a package half written.
func replaceFile(path string, b []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// goCommand returns the go command that runs this program when it is known
// (go generate and go run set GOROOT), or the one on PATH.
func goCommand() string {
	if root := os.Getenv("GOROOT"); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

func moduleRoot(goBin string) (string, error) {
	cmd := exec.Command(goBin, "env", "GOMOD")
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	mod := strings.TrimSpace(string(b))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("finding the module root: not inside the module; run from the repository")
	}
	return filepath.Dir(mod), nil
}
