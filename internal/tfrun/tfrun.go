// Package tfrun runs the real Terraform CLI against the locally built
// provider, offline.
//
// Setup builds the provider, lays it out in a filesystem mirror and writes a
// CLI configuration that installs it from there (and runs the fresh binary
// through dev_overrides), so that `terraform init` never reaches a registry:
//
//	inst, err := tfrun.Setup(ctx, tfrun.Options{Terraform: "bin/terraform", Module: "."})
//	run := inst.Runner(workDir, tfrun.AWSEnv(endpoint, "us-east-1"))
//	err = run.Init(ctx)
//	err = run.Apply(ctx)
//	outputs, err := run.Output(ctx)
//	err = run.Destroy(ctx)
package tfrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Provider identity in the registry.
const (
	ProviderHost      = "registry.terraform.io"
	ProviderNamespace = "outboxkit"
	ProviderType      = "outbox"
	// DefaultProviderVersion is the version the locally built provider is
	// mirrored as, and reports.
	DefaultProviderVersion = "0.1.0"
)

// ProviderSource is the provider's full source address.
const ProviderSource = ProviderHost + "/" + ProviderNamespace + "/" + ProviderType

// Options configure Setup.
type Options struct {
	// Terraform is the path of the Terraform CLI binary.
	Terraform string
	// Module is the root of the provider's Go module (where main.go is).
	Module string
	// Dir receives the provider binary, the mirror and the CLI
	// configuration; a new temporary directory when empty.
	Dir string
	// Version the provider is mirrored as; DefaultProviderVersion when empty.
	Version string
	// Provider is an already built provider binary to use instead of
	// building one.
	Provider string
	// Log receives the build's output; discarded when nil.
	Log io.Writer
	// Hosts overrides the service discovery of hostnames, as the CLI
	// configuration's host blocks do: hostname, then service id (such as
	// "modules.v1"), then the service's base URL (http or https). A test
	// serves a registry this way, for instance registry.terraform.io's
	// modules from a local server.
	Hosts map[string]map[string]string
}

// Installation is a built provider, its mirror and the CLI configuration
// that uses them.
type Installation struct {
	// Terraform is the CLI binary (absolute).
	Terraform string
	// Dir holds everything below.
	Dir string
	// ProviderDir holds the provider binary, for dev_overrides.
	ProviderDir string
	// Provider is the provider binary.
	Provider string
	// MirrorDir is the filesystem mirror's root.
	MirrorDir string
	// CLIConfig is the CLI configuration file (TF_CLI_CONFIG_FILE).
	CLIConfig string
	// Version is the version the provider is mirrored as.
	Version string
}

// Setup builds the provider (unless Options.Provider names one), lays out
// the filesystem mirror and writes the CLI configuration.
func Setup(ctx context.Context, o Options) (*Installation, error) {
	if o.Terraform == "" {
		return nil, errors.New("tfrun: Options.Terraform is empty: build the CLI with make tools")
	}
	tf, err := filepath.Abs(o.Terraform)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(tf); err != nil {
		return nil, fmt.Errorf("terraform CLI: %w (build it with make tools)", err)
	}
	if o.Version == "" {
		o.Version = DefaultProviderVersion
	}
	if o.Dir == "" {
		if o.Dir, err = os.MkdirTemp("", "tfrun-"); err != nil {
			return nil, err
		}
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	inst := &Installation{
		Terraform:   tf,
		Dir:         dir,
		ProviderDir: filepath.Join(dir, "provider"),
		MirrorDir:   filepath.Join(dir, "mirror"),
		CLIConfig:   filepath.Join(dir, "terraform.rc"),
		Version:     o.Version,
	}
	inst.Provider = filepath.Join(inst.ProviderDir, "terraform-provider-"+ProviderType)
	if err := os.MkdirAll(inst.ProviderDir, 0o755); err != nil {
		return nil, err
	}
	if o.Provider != "" {
		if err := linkOrCopy(o.Provider, inst.Provider); err != nil {
			return nil, fmt.Errorf("copying the provider: %w", err)
		}
	} else if err := buildShared(ctx, o.Module, inst.Provider, o.Version, o.Log); err != nil {
		return nil, err
	}
	mirrored := inst.MirroredProvider()
	if err := os.MkdirAll(filepath.Dir(mirrored), 0o755); err != nil {
		return nil, err
	}
	if err := linkOrCopy(inst.Provider, mirrored); err != nil {
		return nil, fmt.Errorf("laying out the mirror: %w", err)
	}
	config := CLIConfig(inst.ProviderDir, inst.MirrorDir) + HostBlocks(o.Hosts)
	if err := os.WriteFile(inst.CLIConfig, []byte(config), 0o644); err != nil {
		return nil, fmt.Errorf("writing the CLI configuration: %w", err)
	}
	return inst, nil
}

// MirroredProvider is the provider binary in the filesystem mirror, where
// terraform init installs it from.
func (i *Installation) MirroredProvider() string {
	platform := runtime.GOOS + "_" + runtime.GOARCH
	return filepath.Join(i.MirrorDir, ProviderHost, ProviderNamespace, ProviderType, i.Version, platform,
		fmt.Sprintf("terraform-provider-%s_v%s", ProviderType, i.Version))
}

// CLIConfig returns a CLI configuration that runs the provider binary in
// providerDir (dev_overrides), installs it from mirrorDir during init, and
// never contacts a registry for it.
func CLIConfig(providerDir, mirrorDir string) string {
	ns := ProviderHost + "/" + ProviderNamespace + "/*"
	return fmt.Sprintf(`provider_installation {
  dev_overrides {
    %q = %q
  }
  filesystem_mirror {
    path    = %q
    include = [%q]
  }
  direct {
    exclude = [%q]
  }
}
`, ProviderSource, providerDir, mirrorDir, ns, ns)
}

// HostBlocks returns the CLI configuration's host blocks for hosts
// (hostname, service id, URL), in a stable order.
func HostBlocks(hosts map[string]map[string]string) string {
	var b strings.Builder
	for _, host := range slices.Sorted(maps.Keys(hosts)) {
		fmt.Fprintf(&b, "host %q {\n  services = {\n", host)
		services := hosts[host]
		for _, id := range slices.Sorted(maps.Keys(services)) {
			fmt.Fprintf(&b, "    %q = %q\n", id, services[id])
		}
		b.WriteString("  }\n}\n")
	}
	return b.String()
}

// sharedBuildDir, below the module, keeps the provider binary that every
// installation of the module links to, one per version.
const sharedBuildDir = "bin/tfrun"

// staleLock is the age after which a build lock is taken to be left by a
// process that died holding it.
const staleLock = 30 * time.Minute

// buildShared builds the provider into the module's shared build
// directory and links out to it. go build leaves an up-to-date binary
// alone, so the installations of a suite, in one process or several, link
// the provider once instead of once each (about 15 s of CPU a time). A
// lock directory keeps another process from linking to a binary go build
// is still writing.
func buildShared(ctx context.Context, module, out, version string, log io.Writer) error {
	dir, err := filepath.Abs(filepath.Join(module, filepath.FromSlash(sharedBuildDir)))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	unlock, err := lockDir(ctx, filepath.Join(dir, "v"+version+".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	shared := filepath.Join(dir, fmt.Sprintf("terraform-provider-%s_v%s", ProviderType, version))
	if err := BuildProvider(ctx, module, shared, version, log); err != nil {
		return err
	}
	return linkOrCopy(shared, out)
}

// lockDir takes the lock that the directory path is (creating a directory
// is atomic on every file system), waiting while another holds it and
// breaking one older than staleLock; the returned function releases it.
func lockDir(ctx context.Context, path string) (func(), error) {
	for {
		err := os.Mkdir(path, 0o755)
		if err == nil {
			return func() { _ = os.Remove(path) }, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("taking the build lock %s: %w", path, err)
		}
		if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > staleLock {
			_ = os.Remove(path)
			continue
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the build lock %s: %w", path, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// BuildProvider builds the provider of the Go module at module into out,
// reporting version. The relay packages it embeds must have been built
// (make relay).
func BuildProvider(ctx context.Context, module, out, version string, log io.Writer) error {
	if module == "" {
		return errors.New("tfrun: the provider's module directory is empty")
	}
	for _, zip := range []string{"relay_arm64.zip", "relay_x86_64.zip"} {
		if _, err := os.Stat(filepath.Join(module, "internal", "relaypackage", "dist", zip)); err != nil {
			return fmt.Errorf("the provider embeds the relay packages: %w (build them with make relay)", err)
		}
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-X main.version="+version, "-o", out, ".")
	cmd.Dir = module
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = teeTo(&buf, log), teeTo(&buf, log)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the provider: %w\n%s", err, buf.String())
	}
	return nil
}

// AWSEnv is the environment that points the provider (and the AWS SDK
// generally) at an AWS-compatible endpoint with static credentials.
func AWSEnv(endpoint, region string) map[string]string {
	return map[string]string{
		"AWS_ENDPOINT_URL":          endpoint,
		"AWS_REGION":                region,
		"AWS_DEFAULT_REGION":        region,
		"AWS_ACCESS_KEY_ID":         "AKIDLOCALADMIN",
		"AWS_SECRET_ACCESS_KEY":     "localadminsecret",
		"AWS_EC2_METADATA_DISABLED": "true",
	}
}

// Runner runs Terraform commands in one working directory.
type Runner struct {
	inst *Installation
	// Dir is the working directory (the root module).
	Dir string
	// Env is added to the command's environment (after the runner's own
	// settings, so it may override them).
	Env map[string]string
	// Log receives every command's output as it runs; nil discards it.
	Log io.Writer
	// Interrupt is how long a cancelled command gets to stop after SIGINT
	// before it is killed; default 30s.
	Interrupt time.Duration
}

// Runner returns a Runner for the root module in dir with the extra
// environment env.
func (inst *Installation) Runner(dir string, env map[string]string) *Runner {
	return &Runner{inst: inst, Dir: dir, Env: env}
}

// Result is a finished command.
type Result struct {
	Args     []string
	Stdout   string
	Stderr   string
	Duration time.Duration
}

// CommandError is a command that failed; it carries the output.
type CommandError struct {
	Result
	Err error
}

func (e *CommandError) Error() string {
	out := strings.TrimSpace(e.Stderr)
	if out == "" {
		out = tail(strings.TrimSpace(e.Stdout), 4000)
	}
	return fmt.Sprintf("terraform %s: %v\n%s", strings.Join(e.Args, " "), e.Err, out)
}

func (e *CommandError) Unwrap() error { return e.Err }

// Environ returns the command environment: the process's own with any
// TF_* and AWS_* variables removed, then the runner's settings and Env.
func (r *Runner) Environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "TF_") || strings.HasPrefix(k, "AWS_") || k == "CHECKPOINT_DISABLE" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"TF_CLI_CONFIG_FILE="+r.inst.CLIConfig,
		"TF_IN_AUTOMATION=1",
		"TF_INPUT=0",
		"CHECKPOINT_DISABLE=1",
	)
	for k, v := range r.Env {
		env = append(env, k+"="+v)
	}
	return env
}

// Run runs terraform with args in the working directory. When ctx is
// cancelled the command receives SIGINT (Terraform then stops cleanly and
// saves its state), and is killed if it has not exited within Interrupt.
func (r *Runner) Run(ctx context.Context, args ...string) (Result, error) {
	cmd := exec.CommandContext(ctx, r.inst.Terraform, args...)
	cmd.Dir = r.Dir
	cmd.Env = r.Environ()
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = r.Interrupt
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = 30 * time.Second
	}
	var stdout, stderr bytes.Buffer
	var mu sync.Mutex // the log receives both streams
	log := r.Log
	if log != nil {
		log = &lockedWriter{mu: &mu, w: log}
	}
	cmd.Stdout, cmd.Stderr = teeTo(&stdout, log), teeTo(&stderr, log)
	start := time.Now()
	err := cmd.Run()
	res := Result{Args: args, Stdout: stdout.String(), Stderr: stderr.String(), Duration: time.Since(start)}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		return res, &CommandError{Result: res, Err: err}
	}
	return res, nil
}

// Init runs terraform init, installing the provider from the mirror.
func (r *Runner) Init(ctx context.Context) error {
	_, err := r.Run(ctx, "init", "-input=false", "-no-color")
	return err
}

// Validate runs terraform validate.
func (r *Runner) Validate(ctx context.Context) error {
	_, err := r.Run(ctx, "validate", "-no-color")
	return err
}

// Apply runs terraform apply with the given variables.
func (r *Runner) Apply(ctx context.Context, vars ...Var) error {
	_, err := r.Run(ctx, append([]string{"apply", "-input=false", "-no-color", "-auto-approve"}, varArgs(vars)...)...)
	return err
}

// Destroy runs terraform destroy with the given variables.
func (r *Runner) Destroy(ctx context.Context, vars ...Var) error {
	_, err := r.Run(ctx, append([]string{"destroy", "-input=false", "-no-color", "-auto-approve"}, varArgs(vars)...)...)
	return err
}

// Output returns the root module's outputs, by name, as JSON values.
func (r *Runner) Output(ctx context.Context) (map[string]json.RawMessage, error) {
	res, err := r.Run(ctx, "output", "-json", "-no-color")
	if err != nil {
		return nil, err
	}
	var outs map[string]struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal([]byte(res.Stdout), &outs); err != nil {
		return nil, fmt.Errorf("decoding terraform output -json: %w", err)
	}
	values := make(map[string]json.RawMessage, len(outs))
	for k, v := range outs {
		values[k] = v.Value
	}
	return values, nil
}

// OutputInto decodes the root module's output name into v.
func (r *Runner) OutputInto(ctx context.Context, name string, v any) error {
	outs, err := r.Output(ctx)
	if err != nil {
		return err
	}
	raw, ok := outs[name]
	if !ok {
		return fmt.Errorf("the configuration has no output %q", name)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("decoding output %s: %w", name, err)
	}
	return nil
}

// Var is a root module variable, passed with -var.
type Var struct {
	Name  string
	Value string
}

func varArgs(vars []Var) []string {
	args := make([]string, 0, len(vars))
	for _, v := range vars {
		args = append(args, "-var", v.Name+"="+v.Value)
	}
	return args
}

// Stage copies the directories rel (relative to root, such as "modules" and
// "examples/complete") into dst, keeping their relative layout so that
// relative module sources still resolve, and skipping Terraform's working
// files (.terraform, lock files, state). It returns dst.
func Stage(root, dst string, rel ...string) (string, error) {
	for _, r := range rel {
		src := filepath.Join(root, r)
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			name := d.Name()
			if d.IsDir() && name == ".terraform" {
				return filepath.SkipDir
			}
			if name == ".terraform.lock.hcl" || strings.HasSuffix(name, ".tfstate") || strings.Contains(name, ".tfstate.") {
				return nil
			}
			relPath, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			target := filepath.Join(dst, relPath)
			if d.IsDir() {
				return os.MkdirAll(target, 0o755)
			}
			return copyFile(p, target, 0o644)
		})
		if err != nil {
			return "", fmt.Errorf("staging %s: %w", r, err)
		}
	}
	return dst, nil
}

// linkOrCopy makes dst a hard link to the executable src, or a copy where
// the two are on different file systems. The provider binary is large
// (about 75 MB) and every installation needs it twice, the binary and its
// mirror copy, so a suite that sets up many installations at once would
// otherwise fill a small disk.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	return copyFile(src, dst, 0o755)
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		return errors.Join(err, out.Close())
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

func teeTo(buf *bytes.Buffer, log io.Writer) io.Writer {
	if log == nil {
		return buf
	}
	return io.MultiWriter(buf, log)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
