package perfreport

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// checkGolden compares got with testdata/name, or rewrites the file when
// -update is given.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (%d bytes, want %d)", path, len(got), len(want))
	}
}

// TestWriteMarkdownGolden renders a fixed report, every branch of the
// deployment section included, and compares it byte for byte.
func TestWriteMarkdownGolden(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Report)
	}{
		{"report-no-terraform.md", func(*Report) {}},
		{"report-full.md", func(r *Report) {
			r.Machine.CPU, r.Machine.OS, r.Machine.Arch, r.Machine.Go = "Test CPU", "linux", "amd64", "go1.25"
			r.BenchDuration = 90 * time.Second
			r.Stack.Duration = 150 * time.Second
			r.Stack.Options.ColdStarts = 2
			r.Stack.Apply = ApplyResult{
				Terraform: []time.Duration{3 * time.Second, 4 * time.Second}, Destroy: []time.Duration{2 * time.Second},
				TerraformVersion: "Terraform v1.5.7", Create: []time.Duration{time.Second, 1500 * time.Millisecond},
			}
			r.Stack.Zips = []ZipSize{{Name: "relay_arm64.zip", Bytes: 5 << 20, Bootstrap: 12 << 20}, {Name: "naive_relay_arm64.zip", Bytes: 4 << 20, Bootstrap: 11 << 20}}
			r.Stack.ColdStarts = []ColdStart{
				{Arch: "x86_64", First: []time.Duration{80 * time.Millisecond, 90 * time.Millisecond}, Init: []time.Duration{40 * time.Millisecond}, Warm: []time.Duration{2 * time.Millisecond}},
				{Arch: "arm64", Emulated: true, First: []time.Duration{300 * time.Millisecond}, Init: []time.Duration{200 * time.Millisecond}, Warm: []time.Duration{5 * time.Millisecond}},
			}
			r.Recovery = sampleRecovery()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sampleReport(t)
			tc.change(&r)
			var b bytes.Buffer
			if err := r.WriteMarkdown(&b); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.name, b.Bytes())
		})
	}
}

// TestHistogramPNGGolden draws fixed histograms, with the default and a
// given size, and compares the PNG bytes.
func TestHistogramPNGGolden(t *testing.T) {
	relay := []time.Duration{20 * time.Millisecond, 120 * time.Millisecond, 240 * time.Millisecond, 260 * time.Millisecond, 2 * time.Second}
	naive := []time.Duration{80 * time.Millisecond, 300 * time.Millisecond, 310 * time.Millisecond}
	for _, tc := range []struct {
		name string
		h    Histogram
	}{
		{"histogram-default.png", Histogram{Title: "golden", BinWidth: 25 * time.Millisecond, Series: []Series{
			{Name: "relay", Color: ColorRelay, Values: relay}, {Name: "naive", Color: ColorNaive, Values: naive}}}},
		{"histogram-tall.png", Histogram{Title: "tall bins", BinWidth: 100 * time.Millisecond, Max: 400 * time.Millisecond, Width: 640, Height: 300,
			Series: []Series{{Name: "relay", Color: ColorRelay, Values: relay[:2]}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tc.h.WritePNG(&b); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.name, b.Bytes())
		})
	}
}
