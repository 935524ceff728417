package differential_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
)

// motoCommand is the independent emulator the suite compares against.
const motoCommand = "moto_server"

// motoStartTimeout bounds moto_server's start (about 3 s when idle).
const motoStartTimeout = 60 * time.Second

// servers are the two endpoints, started on first use and stopped by TestMain.
var servers struct {
	once    sync.Once
	err     error
	absent  bool
	ours    *localaws.Stack
	moto    *exec.Cmd
	motoURL string
	motoLog bytes.Buffer
	cancel  context.CancelFunc
}

func TestMain(m *testing.M) {
	code := m.Run()
	stopServers()
	os.Exit(code)
}

// endpoints returns the local stack's and moto's endpoints, starting both
// on first use. Without moto_server the test is skipped loudly, or fails
// under CI=true (CI's image ships moto).
func endpoints(t *testing.T) (ours, moto string) {
	t.Helper()
	servers.once.Do(startServers)
	if servers.absent {
		msg := fmt.Sprintf("DIFFERENTIAL TESTS NOT RUN: %s is neither on PATH nor among pyenv's shims (moto 5.2.1 in the image's Python; pip install 'moto[server]==5.2.1')", motoCommand)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		fmt.Fprintln(os.Stderr, "*** "+msg+" ***")
		t.Skip(msg)
	}
	if servers.err != nil {
		t.Fatalf("starting the servers: %v\nmoto_server output:\n%s", servers.err, servers.motoLog.String())
	}
	return servers.ours.Endpoint(), servers.motoURL
}

// findMoto looks for moto_server on PATH, then among pyenv's shims (the
// image's Python), which a shell without the profile lacks on PATH.
func findMoto() (string, bool) {
	if p, err := exec.LookPath(motoCommand); err == nil {
		return p, true
	}
	roots := []string{os.Getenv("PYENV_ROOT")}
	if home, err := os.UserHomeDir(); err == nil {
		roots = append(roots, filepath.Join(home, ".pyenv"))
	}
	for _, root := range roots {
		if root == "" {
			continue
		}
		p := filepath.Join(root, "shims", motoCommand)
		if info, err := os.Stat(p); err == nil && info.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

func startServers() {
	path, ok := findMoto()
	if !ok {
		servers.absent = true
		return
	}
	var err error
	ctx, cancel := context.WithCancel(context.Background())
	servers.cancel = cancel
	servers.ours, err = localaws.Start(ctx, localaws.Options{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		servers.err = fmt.Errorf("local stack: %w", err)
		return
	}
	servers.err = startMoto(path)
}

func startMoto(path string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	cmd := exec.Command(path, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.Stdout = &servers.motoLog
	cmd.Stderr = &servers.motoLog
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", motoCommand, err)
	}
	servers.moto = cmd
	servers.motoURL = "http://127.0.0.1:" + strconv.Itoa(port)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(motoStartTimeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			servers.moto = nil
			return fmt.Errorf("%s exited at start: %w", motoCommand, err)
		default:
		}
		resp, err := http.Get(servers.motoURL + "/moto-api/data.json")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New(motoCommand + " did not answer within " + motoStartTimeout.String())
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, fmt.Errorf("unexpected listener address %v", l.Addr())
	}
	return addr.Port, nil
}

func stopServers() {
	if servers.moto != nil && servers.moto.Process != nil {
		// The process group: moto_server may run under a pyenv shim.
		_ = syscall.Kill(-servers.moto.Process.Pid, syscall.SIGKILL)
	}
	if servers.ours != nil {
		_ = servers.ours.Close()
	}
	if servers.cancel != nil {
		servers.cancel()
	}
}
