package perfreport

import (
	"bytes"
	"image/png"
	"math"
	"testing"
	"time"
)

func TestHistogramBins(t *testing.T) {
	h := Histogram{
		BinWidth: 10 * time.Millisecond,
		Max:      30 * time.Millisecond,
		Series: []Series{{Name: "a", Values: []time.Duration{
			1 * time.Millisecond, 9 * time.Millisecond, 10 * time.Millisecond, 29 * time.Millisecond, 30 * time.Millisecond, time.Second,
		}}},
	}
	edges, shares := h.Bins()
	if len(edges) != 4 || edges[3] != 30*time.Millisecond {
		t.Fatalf("edges %v", edges)
	}
	want := []float64{2, 1, 1, 2} // [0,10) [10,20) [20,30) overflow
	for i, w := range want {
		if math.Abs(shares[0][i]-w/6) > 1e-9 {
			t.Errorf("bin %d share %v, want %v", i, shares[0][i], w/6)
		}
	}
}

func TestHistogramPNG(t *testing.T) {
	h := Histogram{
		Title:    "test",
		BinWidth: 25 * time.Millisecond,
		Series: []Series{
			{Name: "relay", Color: ColorRelay, Values: []time.Duration{20 * time.Millisecond, 120 * time.Millisecond, 240 * time.Millisecond}},
			{Name: "naive", Color: ColorNaive, Values: []time.Duration{80 * time.Millisecond, 300 * time.Millisecond}},
		},
	}
	var buf bytes.Buffer
	if err := h.WritePNG(&buf); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 960 || b.Dy() != 440 {
		t.Errorf("size %v", b)
	}
	// Both series' colours are drawn.
	seen := map[[3]uint32]bool{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			seen[[3]uint32{r >> 8, g >> 8, b >> 8}] = true
		}
	}
	for _, c := range []struct{ r, g, b uint8 }{{ColorRelay.R, ColorRelay.G, ColorRelay.B}, {ColorNaive.R, ColorNaive.G, ColorNaive.B}} {
		if !seen[[3]uint32{uint32(c.r), uint32(c.g), uint32(c.b)}] {
			t.Errorf("colour %v not drawn", c)
		}
	}
	if err := (Histogram{}).WritePNG(&buf); err == nil {
		t.Error("an empty histogram was drawn")
	}
}
