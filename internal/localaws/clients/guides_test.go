package clients

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// A fenced code block of a guide. A comment on the line before it says
// what it is:
//
//	<!-- code: file outbox.ts -->        a module that later blocks import
//	<!-- code: not run, <why> -->        an output sample, a Terraform file...
//
// Every other block runs, in document order, in its language; a block in a
// language that does not run (json, hcl) must be declared not run.
type block struct {
	guide  string
	line   int
	lang   string
	code   string
	file   string // the module name, for "code: file"
	notRun string // the reason, for "code: not run"
}

var (
	fenceRE     = regexp.MustCompile("^```([A-Za-z0-9_+-]*)\\s*$")
	directiveRE = regexp.MustCompile(`^<!-- code: (?:file (\S+)|not run, (.+)) -->$`)
)

// languages maps a fence's language to how its blocks run.
var languages = map[string]string{
	"go": "go", "sh": "sh", "bash": "sh", "shell": "sh",
	"python": "python", "py": "python",
	"typescript": "ts", "ts": "ts", "javascript": "js", "js": "js",
}

func guides(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "docs", "guides", "*.md"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no guides in docs/guides (%v)", err)
	}
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	sort.Strings(names)
	return names
}

func parseGuide(path string) ([]block, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var blocks []block
	var cur *block
	var code strings.Builder
	prev := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if cur != nil {
			if strings.TrimSpace(line) == "```" {
				cur.code = code.String()
				blocks = append(blocks, *cur)
				cur = nil
				prev = ""
				continue
			}
			code.WriteString(line + "\n")
			continue
		}
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			cur = &block{guide: filepath.Base(path), line: n, lang: m[1]}
			code.Reset()
			if d := directiveRE.FindStringSubmatch(prev); d != nil {
				cur.file, cur.notRun = d[1], d[2]
			}
			continue
		}
		if strings.TrimSpace(line) != "" {
			prev = strings.TrimSpace(line)
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: the code block is not closed", path, cur.line)
	}
	for _, b := range blocks {
		if b.notRun == "" && languages[b.lang] == "" {
			return nil, fmt.Errorf("%s:%d: a %q block neither runs nor is declared <!-- code: not run, <why> -->", b.guide, b.line, b.lang)
		}
		if b.file != "" && languages[b.lang] == "" {
			return nil, fmt.Errorf("%s:%d: a %q block cannot be a module", b.guide, b.line, b.lang)
		}
	}
	return blocks, sc.Err()
}

// writeGuideFile writes the module block named name of a guide into dir.
func writeGuideFile(t *testing.T, guide, name, dir string) {
	t.Helper()
	blocks, err := parseGuide(filepath.Join(root, "docs", "guides", guide))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if b.file == name {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(b.code), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("%s has no block <!-- code: file %s -->", guide, name)
}

// jsWorkDir is a directory inside the client tree, so that Node and
// TypeScript resolve its node_modules.
func jsWorkDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(jsDir, ".work-") //nolint:usetesting // inside the client tree, for its node_modules

	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// compileTS type-checks and compiles files in dir with tsc, as a package of
// the given type ("commonjs" or "module"), next to the sources.
func compileTS(t *testing.T, dir, pkgType string, files ...string) {
	t.Helper()
	pkg := fmt.Sprintf(`{"type": %q}`, pkgType)
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(pkg), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{filepath.Join(jsDir, "node_modules", "typescript", "bin", "tsc"),
		"--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022",
		"--strict", "--skipLibCheck", "--noEmitOnError", "--types", "node"}
	run(t, dir, os.Environ(), "node", append(args, files...)...)
}

// runGuide runs the code blocks of a guide in document order against the
// stack and returns their output. Shell blocks get an aws on PATH that adds
// --endpoint-url, as CLIs from 2.13 on do by themselves with
// AWS_ENDPOINT_URL; Debian's 2.9 does not.
func runGuide(t *testing.T, endpoint, guide, work string) string {
	t.Helper()
	blocks, err := parseGuide(filepath.Join(root, "docs", "guides", guide))
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{
		"ts-commonjs": jsWorkDir(t), "ts-module": jsWorkDir(t),
		"python": filepath.Join(work, "python"), "go": goWorkDir(t), "sh": filepath.Join(work, "sh"),
	}
	for _, d := range []string{dirs["python"], dirs["sh"]} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path := []string{awsShim(t, work), outboxCommand(t, work), os.Getenv("PATH")}
	env := clientEnv(endpoint, "PATH="+strings.Join(path, string(os.PathListSeparator)))
	var out strings.Builder
	for i, b := range blocks {
		if b.notRun != "" {
			continue
		}
		name := fmt.Sprintf("block%02d", i)
		lang := languages[b.lang]
		t.Logf("%s:%d: running the %s block", guide, b.line, b.lang)
		switch lang {
		case "ts", "js":
			for _, pkgType := range []string{"commonjs", "module"} {
				dir := dirs["ts-"+pkgType]
				file := b.file
				if file == "" {
					file = name + "." + lang
				}
				writeFile(t, dir, file, b.code)
				if b.file == "" {
					compileTS(t, dir, pkgType, file)
					out.WriteString(run(t, dir, env, "node", name+".js"))
				}
			}
		case "python":
			file := b.file
			if file == "" {
				file = name + ".py"
			}
			writeFile(t, dirs["python"], file, b.code)
			if b.file == "" {
				out.WriteString(run(t, dirs["python"], env, debianPython, file))
			}
		case "go":
			dir := filepath.Join(dirs["go"], name)
			writeFile(t, dir, "main.go", b.code)
			rel, _ := filepath.Rel(root, filepath.Join(dir, "main.go"))
			out.WriteString(run(t, root, env, "go", "run", "./"+rel))
		case "sh":
			writeFile(t, dirs["sh"], name+".sh", b.code)
			out.WriteString(run(t, dirs["sh"], env, "bash", "-euo", "pipefail", name+".sh"))
		}
	}
	t.Logf("output of %s:\n%s", guide, out.String())
	return out.String()
}

// goWorkDir is a directory inside the module, so that the guides' Go
// programs build with its go.mod; its name starts with a dot, so ./...
// patterns skip it.
func goWorkDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(root, ".guide-") //nolint:usetesting // inside the module, for its go.mod
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// awsShim writes an aws that runs Debian's CLI against AWS_ENDPOINT_URL.
func awsShim(t *testing.T, work string) string {
	t.Helper()
	dir := filepath.Join(work, "bin")
	writeFile(t, dir, "aws", "#!/bin/sh\nexec "+debianAWS+" --endpoint-url \"$AWS_ENDPOINT_URL\" \"$@\"\n")
	if err := os.Chmod(filepath.Join(dir, "aws"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// outboxCommand builds the outbox operations command (cmd/outbox), which the
// guides' shell blocks call, and returns its directory.
func outboxCommand(t *testing.T, work string) string {
	t.Helper()
	dir := filepath.Join(work, "outbox-bin")
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "outbox"), "./cmd/outbox")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building cmd/outbox: %v\n%s", err, out)
	}
	return dir
}

func writeFile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGuideBlocksAreDeclared needs no client: every block of every guide
// runs or says why not.
func TestGuideBlocksAreDeclared(t *testing.T) {
	t.Parallel()
	total := 0
	for _, g := range guides(t) {
		blocks, err := parseGuide(filepath.Join(root, "docs", "guides", g))
		if err != nil {
			t.Fatal(err)
		}
		total += len(blocks)
	}
	if total == 0 {
		t.Fatal("the guides have no code blocks")
	}
	if _, err := parseGuideText("```json\n{}\n```\n"); err == nil {
		t.Fatal("an undeclared json block was accepted")
	}
	if _, err := parseGuideText("<!-- code: not run, a sample -->\n```json\n{}\n```\n"); err != nil {
		t.Fatalf("a declared json block was refused: %v", err)
	}
}

func parseGuideText(text string) ([]block, error) {
	f, err := os.CreateTemp("", "guide-*.md")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.Remove(f.Name()) }()
	if _, err := f.WriteString(text); err != nil {
		return nil, err
	}
	_ = f.Close()
	return parseGuide(f.Name())
}
