package clients

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relaypackage"
)

// The stack's administrator credentials and region.
const (
	accessKeyID     = "AKIDLOCALADMIN"
	secretAccessKey = "localadminsecret"
	region          = "us-east-1"
)

// Clients installed by scripts/install-clients.sh. Debian's python and CLI
// are named by path: the python3 on PATH may be another one.
const (
	debianPython = "/usr/bin/python3"
	debianAWS    = "/usr/bin/aws"
)

var (
	root    = mustRoot()
	jsDir   = filepath.Join(root, "internal", "localaws", "clients", "js")
	binDir  string
	buildMu sync.Mutex
	built   string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "localaws-clients-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func mustRoot() string {
	dir, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		panic(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		panic("the repository root has no go.mod: " + dir)
	}
	return dir
}

// requireClient fails the test when a client is missing under CI and skips
// it, loudly, elsewhere; the message names the install script.
func requireClient(t *testing.T, name string, check func() error) {
	t.Helper()
	err := check()
	if err == nil {
		return
	}
	msg := fmt.Sprintf("%s is not installed (%v): run scripts/install-clients.sh (make testclients does)", name, err)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip("SKIPPING, outside CI only: " + msg)
}

func requirePython(t *testing.T) {
	requireClient(t, "Debian's python3-boto3", func() error {
		return exec.Command(debianPython, "-c", "import boto3").Run()
	})
}

func requireAWSCLI(t *testing.T) {
	requireClient(t, "Debian's awscli", func() error { return exec.Command(debianAWS, "--version").Run() })
}

func requireNode(t *testing.T) {
	requireClient(t, "the AWS SDK for JavaScript v3 (npm ci)", func() error {
		if _, err := exec.LookPath("node"); err != nil {
			return err
		}
		for _, p := range []string{"@aws-sdk/client-dynamodb", "@aws-sdk/lib-dynamodb", "@aws-sdk/client-sqs", "@aws-sdk/client-eventbridge", "typescript"} {
			if _, err := os.Stat(filepath.Join(jsDir, "node_modules", p, "package.json")); err != nil {
				return err
			}
		}
		return nil
	})
}

// localawsBinary builds cmd/localaws once per test binary.
func localawsBinary(t *testing.T) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if built != "" {
		return built
	}
	out := filepath.Join(binDir, "localaws")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/localaws")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building cmd/localaws: %v\n%s", err, b)
	}
	built = out
	return out
}

// startLocalaws runs cmd/localaws on a free port until the test ends and
// returns its endpoint.
func startLocalaws(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(localawsBinary(t), "--port", "0", "--log-level", "warn")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &strings.Builder{}
	cmd.Stderr = &lockedWriter{w: logs}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() {
			_ = cmd.Wait() // a stopped stack exits non-zero on SIGTERM only if Close failed; its log shows why
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("localaws log:\n%s", logs)
		}
	})
	select {
	case ep, ok := <-lines:
		if !ok || !strings.HasPrefix(ep, "http://") {
			t.Fatalf("localaws printed no endpoint (%q)", ep)
		}
		return ep
	case <-time.After(60 * time.Second):
		t.Fatal("localaws did not print its endpoint within 60s")
	}
	return ""
}

type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// clientEnv is the environment of a client process: the stack's endpoint in
// AWS_ENDPOINT_URL, its credentials and region, and no shared files.
func clientEnv(endpoint string, extra ...string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"AWS_ENDPOINT_URL="+endpoint,
		"AWS_ACCESS_KEY_ID="+accessKeyID,
		"AWS_SECRET_ACCESS_KEY="+secretAccessKey,
		"AWS_REGION="+region,
		"AWS_DEFAULT_REGION="+region,
		"AWS_CONFIG_FILE=/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_PAGER=",
		// The locked SDK supports the machine's Node 20; later ones will not.
		"AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true",
	)
	return append(env, extra...)
}

// deployPipeline creates a pipeline on the stack with the real relay, as the
// provider does, and returns its state.
func deployPipeline(t *testing.T, endpoint string, spec provision.Spec) provision.State {
	t.Helper()
	if _, err := relaypackage.Zip(string(provision.ArchX86_64)); err != nil {
		t.Fatalf("the relay package is not built (%v): run make relay", err)
	}
	cfg := aws.Config{
		Region:       region,
		Credentials:  credentials.NewStaticCredentialsProvider(accessKeyID, secretAccessKey, ""),
		BaseEndpoint: aws.String(endpoint),
	}
	c := provision.New(cfg, provision.RelayCode{Zip: relaypackage.Zip, SHA256: relaypackage.SHA256})
	c.PropagationTimeout = 30 * time.Second
	c.WaitTimeout = 60 * time.Second
	c.PollInterval = 200 * time.Millisecond
	if spec.Architecture == "" {
		spec.Architecture = provision.ArchX86_64
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	st, err := c.Create(ctx, spec)
	if err != nil {
		t.Fatalf("creating pipeline %s: %v", spec.Name, err)
	}
	return st
}

// run runs a client process with a deadline and fails the test with its
// output when it fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
