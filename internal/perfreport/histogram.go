package perfreport

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/stats"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Series is one distribution of a histogram.
type Series struct {
	Name   string
	Color  color.RGBA
	Values []time.Duration
}

// Histogram describes the latency histogram image.
type Histogram struct {
	Title string
	// Series are drawn side by side in each bin, as the share of their
	// values that fall in it.
	Series []Series
	// BinWidth is the width of a bin; values from the last edge on are
	// counted in a final overflow bin.
	BinWidth time.Duration
	// Max is the upper edge of the last regular bin; 0 takes the largest
	// 99.5th percentile of the series, rounded up to a bin.
	Max           time.Duration
	Width, Height int
}

// Bins returns, for each series, the share (0 to 1) of its values in each
// bin: len(edges)-1 regular bins [edges[i], edges[i+1]) and an overflow bin
// at the end.
func (h Histogram) Bins() (edges []time.Duration, shares [][]float64) {
	top := h.Max
	if top <= 0 {
		for _, s := range h.Series {
			top = max(top, stats.Percentile(s.Values, 99.5))
		}
	}
	n := max(1, int(math.Ceil(float64(top)/float64(h.BinWidth))))
	for i := 0; i <= n; i++ {
		edges = append(edges, time.Duration(i)*h.BinWidth)
	}
	for _, s := range h.Series {
		c := make([]float64, n+1)
		for _, v := range s.Values {
			i := int(v / h.BinWidth)
			if v < 0 {
				i = 0
			}
			c[min(i, n)]++
		}
		if len(s.Values) > 0 {
			for i := range c {
				c[i] /= float64(len(s.Values))
			}
		}
		shares = append(shares, c)
	}
	return edges, shares
}

// WritePNG draws the histogram as a PNG.
func (h Histogram) WritePNG(w io.Writer) error {
	if h.BinWidth <= 0 || len(h.Series) == 0 {
		return errors.New("histogram: no bins or no series")
	}
	if h.Width == 0 {
		h.Width = 960
	}
	if h.Height == 0 {
		h.Height = 440
	}
	edges, shares := h.Bins()
	c := newCanvas(h, shares)
	c.drawGrid()
	c.drawBars(shares)
	c.drawAxes(edges)
	c.drawMarkersAndLegend(edges)
	return png.Encode(w, c.img)
}

// Margins of the plot area in the image, in pixels.
const plotLeft, plotRight, plotTop, plotBottom = 64, 24, 84, 56

var (
	gridColor = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
	inkColor  = color.RGBA{0x22, 0x22, 0x22, 0xff}
)

// canvas is a histogram's image and the geometry of its plot area.
type canvas struct {
	h            Histogram
	img          *image.RGBA
	plotW, plotH int
	x0, y0       int // origin, bottom left
	yMax         float64
	bins         int
	binW         float64
}

// newCanvas makes a white image of the histogram's size and scales the y
// axis to the highest share.
func newCanvas(h Histogram, shares [][]float64) *canvas {
	img := image.NewRGBA(image.Rect(0, 0, h.Width, h.Height))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	c := &canvas{h: h, img: img, plotW: h.Width - plotLeft - plotRight, plotH: h.Height - plotTop - plotBottom,
		x0: plotLeft, y0: h.Height - plotBottom}
	peak := 0.0
	for _, s := range shares {
		for _, v := range s {
			peak = math.Max(peak, v)
		}
	}
	c.yMax = math.Max(0.05, math.Ceil(peak*1.1*20)/20) // a multiple of 5%, with headroom
	c.bins = len(shares[0])
	c.binW = float64(c.plotW) / float64(c.bins)
	return c
}

// drawGrid draws horizontal grid lines and y labels, every 5% (or 10%
// when tall).
func (c *canvas) drawGrid() {
	step := 0.05
	if c.yMax > 0.5 {
		step = 0.1
	}
	for v := 0.0; v <= c.yMax+1e-9; v += step {
		y := c.y0 - int(v/c.yMax*float64(c.plotH))
		hline(c.img, c.x0, c.x0+c.plotW, y, gridColor)
		label(c.img, fmt.Sprintf("%.0f%%", v*100), c.x0-8, y+4, inkColor, alignRight)
	}
}

// drawBars draws each bin's bars, the series side by side.
func (c *canvas) drawBars(shares [][]float64) {
	barW := math.Max(1, (c.binW-2)/float64(len(shares)))
	for b := range c.bins {
		for si, s := range shares {
			bx := c.x0 + int(float64(b)*c.binW) + 1 + int(float64(si)*barW)
			bh := int(s[b] / c.yMax * float64(c.plotH))
			fill(c.img, image.Rect(bx, c.y0-bh, bx+int(math.Ceil(barW)), c.y0), c.h.Series[si].Color)
		}
	}
}

// drawAxes draws the x labels, the axes and the titles.
func (c *canvas) drawAxes(edges []time.Duration) {
	x0, y0, ink := c.x0, c.y0, inkColor
	// X labels: every few bins, so that they do not overlap.
	every := max(1, int(math.Ceil(56/c.binW)))
	for i, e := range edges {
		if i%every != 0 && i != len(edges)-1 {
			continue
		}
		x := x0 + int(float64(i)*c.binW)
		vline(c.img, x, y0, y0+4, ink)
		label(c.img, fmt.Sprint(e.Milliseconds()), x, y0+18, ink, alignCenter)
	}
	label(c.img, "overflow", x0+int(float64(c.bins-1)*c.binW+c.binW/2), y0+32, ink, alignCenter)
	label(c.img, "latency from commit to arrival on the subscription queue (ms); bins of "+fmt.Sprint(c.h.BinWidth.Milliseconds())+" ms", x0+c.plotW/2, c.h.Height-8, ink, alignCenter)
	hline(c.img, x0, x0+c.plotW, y0, ink)
	vline(c.img, x0, plotTop, y0, ink)
	label(c.img, "share of events", 8, plotTop-10, ink, alignLeft)
	label(c.img, c.h.Title, c.h.Width/2, 20, ink, alignCenter)
}

// drawMarkersAndLegend draws, per series, dashed lines at its p50 and p99
// (inside the regular bins) and its legend line.
func (c *canvas) drawMarkersAndLegend(edges []time.Duration) {
	for si, s := range c.h.Series {
		for _, p := range []float64{50, 99} {
			v := stats.Percentile(s.Values, p)
			x := c.x0 + int(float64(v)/float64(c.h.BinWidth)*c.binW)
			if v >= edges[len(edges)-1] {
				continue
			}
			dashed(c.img, x, plotTop, c.y0, s.Color)
			boxed(c.img, fmt.Sprintf("%s p%.0f", s.Name, p), x+3, plotTop+14+16*si, s.Color)
		}
		ly := 42 + 18*si
		lx := c.x0 + 8
		fill(c.img, image.Rect(lx, ly-9, lx+14, ly+3), s.Color)
		label(c.img, fmt.Sprintf("%s: p50 %s, p99 %s, n=%d (dashed lines: p50 and p99)", s.Name,
			roundMs(stats.Percentile(s.Values, 50)), roundMs(stats.Percentile(s.Values, 99)), len(s.Values)), lx+20, ly+2, inkColor, alignLeft)
	}
}

func roundMs(d time.Duration) string {
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

type align int

const (
	alignLeft align = iota
	alignCenter
	alignRight
)

func label(img draw.Image, s string, x, y int, c color.Color, a align) {
	d := &font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13}
	w := d.MeasureString(s).Round()
	switch a {
	case alignCenter:
		x -= w / 2
	case alignRight:
		x -= w
	}
	d.Dot = fixed.P(x, y)
	d.DrawString(s)
}

// boxed draws a left-aligned label on a white box.
func boxed(img draw.Image, s string, x, y int, c color.Color) {
	d := &font.Drawer{Face: basicfont.Face7x13}
	w := d.MeasureString(s).Round()
	fill(img, image.Rect(x-1, y-11, x+w+2, y+3), color.White)
	label(img, s, x, y, c, alignLeft)
}

func fill(img draw.Image, r image.Rectangle, c color.Color) {
	draw.Draw(img, r, image.NewUniform(c), image.Point{}, draw.Over)
}

func hline(img *image.RGBA, x1, x2, y int, c color.Color) {
	for x := x1; x <= x2; x++ {
		img.Set(x, y, c)
	}
}

func vline(img *image.RGBA, x, y1, y2 int, c color.Color) {
	for y := y1; y <= y2; y++ {
		img.Set(x, y, c)
	}
}

func dashed(img *image.RGBA, x, y1, y2 int, c color.Color) {
	for y := y1; y <= y2; y++ {
		if (y/4)%2 == 0 {
			img.Set(x, y, c)
		}
	}
}
