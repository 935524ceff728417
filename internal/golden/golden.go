// Package golden compares what a test produced with a golden file under the
// test's testdata directory; `go test -update` rewrites the files.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Check reports as an error of t a got that differs from the golden file
// testdata/name (surrounding space aside), or rewrites it under -update.
func Check(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update to create it): %v", err)
	}
	if strings.TrimSpace(string(want)) != got {
		t.Errorf("%s differs from the golden file %s:\n%s", name, path, got)
	}
}
