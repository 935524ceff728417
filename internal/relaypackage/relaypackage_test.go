package relaypackage

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/fstest"
)

func TestWriteZip(t *testing.T) {
	t.Parallel()
	content := bytes.Repeat([]byte("\x7fELF relay "), 1000)
	var a, b bytes.Buffer
	if err := WriteZip(&a, content); err != nil {
		t.Fatal(err)
	}
	if err := WriteZip(&b, content); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two zips of the same binary differ")
	}
	checkZip(t, a.Bytes(), content)
}

// checkZip checks that b is a deployment package holding want (or any
// executable when want is nil).
func checkZip(t *testing.T, b, want []byte) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 1 {
		t.Fatalf("%d entries, want 1", len(zr.File))
	}
	f := zr.File[0]
	if f.Name != "bootstrap" {
		t.Errorf("entry %q, want bootstrap", f.Name)
	}
	if mode := f.Mode(); mode.Perm() != 0o755 || !mode.IsRegular() {
		t.Errorf("mode %v, want -rwxr-xr-x", mode)
	}
	if !f.Modified.Equal(zipTime) {
		t.Errorf("modified %v, want %v", f.Modified, zipTime)
	}
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := rc.Close(); err != nil {
			t.Error(err)
		}
	}()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if want != nil && !bytes.Equal(got, want) {
		t.Error("content differs")
	}
	if want == nil && !bytes.HasPrefix(got, []byte("\x7fELF")) {
		t.Error("bootstrap is not an ELF executable")
	}
}

func TestZipFrom(t *testing.T) {
	t.Parallel()
	built := fstest.MapFS{
		"dist/README.md":        {Data: []byte("build output")},
		"dist/relay_arm64.zip":  {Data: []byte("arm zip")},
		"dist/relay_x86_64.zip": {Data: []byte("x86 zip")},
	}
	notBuilt := fstest.MapFS{"dist/README.md": {Data: []byte("build output")}}
	tests := []struct {
		name    string
		fsys    fstest.MapFS
		arch    string
		want    string
		wantErr string
	}{
		{"arm64", built, "arm64", "arm zip", ""},
		{"x86_64", built, "x86_64", "x86 zip", ""},
		{"amd64 alias", built, "amd64", "x86 zip", ""},
		{"missing", notBuilt, "arm64", "", "run `make build`"},
		{"unknown arch", built, "riscv64", "", `unknown architecture "riscv64"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := zipFrom(tt.fsys, tt.arch)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				if tt.name == "missing" && !errors.Is(err, ErrNotBuilt) {
					t.Errorf("error %v is not ErrNotBuilt", err)
				}
				if _, err := sha256From(tt.fsys, tt.arch); err == nil {
					t.Error("SHA256 of a missing package succeeded")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			sum := sha256.Sum256([]byte(tt.want))
			if h, err := sha256From(tt.fsys, tt.arch); err != nil || h != base64.StdEncoding.EncodeToString(sum[:]) {
				t.Errorf("SHA256 = %q, %v", h, err)
			}
		})
	}
}

// TestEmbedded checks the packages compiled into this test binary: valid
// when they were built, a clear error when not.
func TestEmbedded(t *testing.T) {
	t.Parallel()
	for _, arch := range Architectures {
		t.Run(arch, func(t *testing.T) {
			b, err := Zip(arch)
			if errors.Is(err, ErrNotBuilt) {
				if !strings.Contains(err.Error(), "make build") {
					t.Errorf("error %q does not say how to build the package", err)
				}
				t.Skipf("not built: %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			checkZip(t, b, nil)
			h, err := SHA256(arch)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			if h != base64.StdEncoding.EncodeToString(sum[:]) {
				t.Errorf("SHA256 = %s", h)
			}
		})
	}
}
