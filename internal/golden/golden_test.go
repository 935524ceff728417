package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeT records the errors Check reports.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", "doc.json"), []byte("{\"a\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, got string
		fails     bool
	}{
		{"doc.json", `{"a":1}`, false},
		{"doc.json", `{"a":2}`, true},
		{"missing.json", `{}`, true},
	} {
		f := &fakeT{TB: t}
		Check(f, c.name, c.got)
		if f.failed != c.fails {
			t.Errorf("Check(%s, %s) failed = %t, want %t", c.name, c.got, f.failed, c.fails)
		}
	}
}
