// Package lambdatest builds Go test functions for the local Lambda service:
// a main package compiled for Linux and packaged as bootstrap.
package lambdatest

import (
	"archive/zip"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

type build struct{ dir, goarch string }

var (
	mu     sync.Mutex
	built  = map[build][]byte{}
	failed = map[build]error{}
)

// Zip builds the Go main package dir (a path such as "./testdata/fn",
// relative to the test's package) for linux/goarch, once per test binary,
// and returns a deployment package with it as bootstrap.
func Zip(t testing.TB, dir, goarch string) []byte {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	b := build{dir, goarch}
	if z, ok := built[b]; ok {
		return z
	}
	if err, ok := failed[b]; ok {
		t.Fatal(err)
	}
	bin, err := b.run()
	if err != nil {
		failed[b] = err
		t.Fatal(err)
	}
	z := ZipOf(t, map[string][]byte{"bootstrap": bin})
	built[b] = z
	return z
}

// run compiles the function and returns the binary.
func (b build) run() ([]byte, error) {
	dir, err := os.MkdirTemp("", "lambdatest-bootstrap-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	out := filepath.Join(dir, "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-o", out, b.dir)
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+b.goarch, "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, errors.New("building the test function: " + err.Error() + "\n" + string(msg))
	}
	return os.ReadFile(out)
}

// ZipOf returns a zip of files, each executable.
func ZipOf(t testing.TB, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, b := range files {
		h := &zip.FileHeader{Name: name, Method: zip.Deflate}
		h.SetMode(0o755)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
