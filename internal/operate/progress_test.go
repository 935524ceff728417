package operate

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock that tests move.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time                     { return c.t }
func (c *fakeClock) advance(d time.Duration) *fakeClock { c.t = c.t.Add(d); return c }

func testProgress(w io.Writer, terminal bool) (*progress, *fakeClock) {
	clock := &fakeClock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	p := newProgress(w, terminal)
	p.now, p.start, p.last = clock.now, clock.t, clock.t
	return p, clock
}

// On a terminal, progress is one line redrawn in place: a bar with the
// counts, the rate and the time left; at most every redrawEvery.
func TestProgressOnATerminal(t *testing.T) {
	t.Parallel()
	var tty bytes.Buffer
	p, clock := testProgress(&tty, true)
	clock.advance(time.Second)
	p.count("requeueing", 10, 40)
	p.count("requeueing", 11, 40) // within redrawEvery: not drawn
	clock.advance(time.Second)
	p.count("requeueing", 20, 40)
	p.clear()
	p.clear() // nothing left to clear
	want := "\r\033[Krequeueing [======                  ] 10/40 25%, 10.0/s, about 3s left" +
		"\r\033[Krequeueing [============            ] 20/40 50%, 10.0/s, about 2s left" +
		"\r\033[K"
	if got := tty.String(); got != want {
		t.Errorf("terminal progress =\n%q\nwant\n%q", got, want)
	}
	narrow, _ := testProgress(io.Discard, true)
	var out bytes.Buffer
	narrow.w, narrow.width = &out, 20
	narrow.show(strings.Repeat("x", 30))
	if got := out.String(); got != "\r\033[K"+strings.Repeat("x", 19) {
		t.Errorf("a line wider than the terminal is drawn as %q, want it cut to 19 columns", got)
	}
}

// Off a terminal, nothing is redrawn: short work writes no progress, long
// work a plain line every plainEvery.
func TestProgressOffATerminal(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	p, clock := testProgress(&log, false)
	p.count("requeueing", 1, 49)
	clock.advance(time.Second)
	p.count("requeueing", 30, 49)
	p.clear()
	if log.Len() != 0 {
		t.Errorf("work shorter than %s wrote progress: %q", plainEvery, log.String())
	}
	clock.advance(plainEvery)
	p.count("requeueing", 40, 49)
	clock.advance(time.Second)
	p.count("requeueing", 45, 49) // within plainEvery of the last line
	clock.advance(plainEvery)
	p.show("pending 3, 1.0/s, about 3s left (12s elapsed)")
	p.clear()
	want := "requeueing: 40 of 49 (81%), 6.7/s, about 1.3s left (6s elapsed)\npending 3, 1.0/s, about 3s left (12s elapsed)\n"
	if got := log.String(); got != want {
		t.Errorf("plain progress =\n%q\nwant\n%q", got, want)
	}
	if strings.ContainsAny(log.String(), "\r\033") {
		t.Errorf("plain progress redraws: %q", log.String())
	}
}

func TestBar(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		done, total int
		want        string
	}{
		{0, 10, "[                        ]"},
		{5, 10, "[============            ]"},
		{10, 10, "[========================]"},
		{12, 10, "[========================]"}, // writers added during a drain
		{-3, 10, "[                        ]"},
		{0, 0, "[========================]"},
	} {
		if got := bar(tc.done, tc.total); got != tc.want {
			t.Errorf("bar(%d, %d) = %q, want %q", tc.done, tc.total, got, tc.want)
		}
	}
}

// IsTerminal tells a terminal from a pipe or a file, and progress on a
// real terminal takes its width.
func TestProgressOnAPseudoTerminal(t *testing.T) {
	t.Parallel()
	master, tty := openPTY(t, 40)
	if !IsTerminal(tty) {
		t.Fatal("IsTerminal(pty) = false")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close(); _ = w.Close() }()
	if IsTerminal(w) || IsTerminal(&bytes.Buffer{}) {
		t.Error("IsTerminal is true for a pipe or a buffer")
	}
	read := make(chan string, 1)
	go func() {
		var got []byte
		buf := make([]byte, 1024)
		for !bytes.Contains(got, []byte("\r\033[K\r\033[K")) {
			n, err := master.Read(buf)
			if err != nil {
				break
			}
			got = append(got, buf[:n]...)
		}
		read <- string(got)
	}()
	p, clock := testProgress(tty, IsTerminal(tty))
	if p.width != 40 {
		t.Errorf("progress on a terminal of 40 columns has width %d", p.width)
	}
	clock.advance(time.Second)
	p.count("replaying", 5, 10)
	p.clear()
	p.show("")
	p.clear()
	select {
	case got := <-read:
		if want := "\r\033[Kreplaying [============            ] 5/\r"; !strings.HasPrefix(got, want) {
			t.Errorf("the terminal shows %q, want %q (cut to 39 columns)", got, want)
		}
	case <-time.After(time.Minute):
		t.Fatal("nothing reached the terminal within a minute")
	}
}
