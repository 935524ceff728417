// Command modproxy writes a file-based Go module proxy (GOPROXY=file://DIR)
// holding modules of this repository at chosen versions, built from git
// revisions as the public proxy would build them from tags. It lets CI run
// `go install ...@version` against a version that is not published yet.
//
//	go run ./tools/modproxy -out DIR MODULE@VERSION=REVISION[:SUBDIR] ...
//
// For example, the root module at HEAD as v0.0.0-test and the writer module
// at the commit its pseudo-version names:
//
//	go run ./tools/modproxy -out /tmp/proxy \
//	  github.com/outboxkit/terraform-provider-outbox@v0.0.0-test=HEAD \
//	  github.com/outboxkit/terraform-provider-outbox/outbox@v0.0.0-20261201100000-0123456789ab=0123456789ab:outbox
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// spec is one module version to publish.
type spec struct {
	mod      module.Version
	revision string
	subdir   string
}

func main() {
	out := flag.String("out", "", "the proxy's directory (created)")
	repo := flag.String("repo", ".", "the git repository the modules come from")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: modproxy -out DIR [-repo DIR] MODULE@VERSION=REVISION[:SUBDIR]...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*out, *repo, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "modproxy:", err)
		os.Exit(1)
	}
}

func run(out, repo string, args []string) error {
	root, err := filepath.Abs(repo)
	if err != nil {
		return err
	}
	for _, arg := range args {
		s, err := parseSpec(arg)
		if err != nil {
			return err
		}
		if err := publish(out, root, s); err != nil {
			return fmt.Errorf("%s@%s: %w", s.mod.Path, s.mod.Version, err)
		}
		fmt.Printf("modproxy: %s@%s from %s:%s\n", s.mod.Path, s.mod.Version, s.revision, s.subdir)
	}
	return nil
}

func parseSpec(arg string) (spec, error) {
	modVer, revSub, ok := strings.Cut(arg, "=")
	path, version, ok2 := strings.Cut(modVer, "@")
	if !ok || !ok2 || revSub == "" {
		return spec{}, fmt.Errorf("%q: want MODULE@VERSION=REVISION[:SUBDIR]", arg)
	}
	rev, sub, _ := strings.Cut(revSub, ":")
	m := module.Version{Path: path, Version: version}
	if err := module.Check(path, version); err != nil {
		return spec{}, err
	}
	return spec{mod: m, revision: rev, subdir: sub}, nil
}

// publish writes the proxy's files for s: @v/list, VERSION.info, .mod, .zip.
func publish(out, repo string, s spec) error {
	escPath, err := module.EscapePath(s.mod.Path)
	if err != nil {
		return err
	}
	escVer, err := module.EscapeVersion(s.mod.Version)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, escPath, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, escVer)
	zipped, err := moduleZip(repo, s)
	if err != nil {
		return err
	}
	goMod, err := git(repo, "show", s.revision+":"+filepath.ToSlash(filepath.Join(s.subdir, "go.mod")))
	if err != nil {
		return err
	}
	when, err := commitTime(repo, s.revision)
	if err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{s.mod.Version, when})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{".zip": zipped, ".mod": goMod, ".info": info} {
		if err := os.WriteFile(base+name, data, 0o644); err != nil {
			return err
		}
	}
	return addToList(filepath.Join(dir, "list"), s.mod.Version)
}

// moduleZip zips the module at s.revision. It extracts the revision with git
// archive and zips the extracted tree (zip.CreateFromVCS does not recognise
// git worktrees), which leaves out what the go command leaves out: nested
// modules, vendor directories and files git does not track.
func moduleZip(repo string, s spec) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "modproxy-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	archive := filepath.Join(tmp, "rev.tar")
	args := []string{"-c", "core.autocrlf=input", "-c", "core.eol=lf", "archive", "--format=tar", "-o", archive, s.revision}
	if s.subdir != "" {
		args = append(args, s.subdir)
	}
	if _, err := git(repo, args...); err != nil {
		return nil, err
	}
	tree := filepath.Join(tmp, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		return nil, err
	}
	if out, err := exec.Command("tar", "-x", "-f", archive, "-C", tree).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("extracting %s: %w: %s", s.revision, err, out)
	}
	var zipped bytes.Buffer
	if err := zip.CreateFromDir(&zipped, s.mod, filepath.Join(tree, s.subdir)); err != nil {
		return nil, err
	}
	return zipped.Bytes(), nil
}

func addToList(list, version string) error {
	b, err := os.ReadFile(list)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	versions := strings.Fields(string(b))
	if !slices.Contains(versions, version) {
		versions = append(versions, version)
	}
	return os.WriteFile(list, []byte(strings.Join(versions, "\n")+"\n"), 0o644)
}

func commitTime(repo, rev string) (time.Time, error) {
	out, err := git(repo, "log", "-1", "--format=%cI", rev)
	if err != nil {
		return time.Time{}, err
	}
	t, err := time.Parse(time.RFC3339, strings.TrimSpace(string(out)))
	return t.UTC(), err
}

func git(repo string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = repo
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
