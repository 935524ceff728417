package operate

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// progress shows long work to the person watching it, on standard error.
// On a terminal it is one line redrawn in place: a bar with the counts, the
// rate and the time left. Elsewhere (a log, a pipe) nothing is redrawn: a
// plain line comes every plainEvery, the first once the work has lasted
// that long, so that short work writes none; the command's result says
// how it ended. Errors writing progress are ignored: it is a display.
type progress struct {
	mu       sync.Mutex // updates may come from several goroutines
	w        io.Writer
	terminal bool
	// width is the terminal's width; 0 when unknown.
	width int
	now   func() time.Time
	start time.Time
	// last is when the last line was written (or the start).
	last  time.Time
	drawn bool
}

const (
	// plainEvery is the time between two progress lines off a terminal.
	plainEvery = 5 * time.Second
	// redrawEvery is the least time between two redraws on a terminal.
	redrawEvery = 100 * time.Millisecond
	// barWidth is the width of the bar between its brackets.
	barWidth = 24
)

func newProgress(w io.Writer, terminal bool) *progress {
	p := &progress{w: w, terminal: terminal, now: time.Now}
	if terminal {
		p.width = terminalWidth(w)
	}
	p.start = p.now()
	p.last = p.start
	return p
}

// IsTerminal reports whether w is a terminal, as progress needs to know.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

func terminalWidth(w io.Writer) int {
	if f, ok := w.(interface{ Fd() uintptr }); ok {
		if width, _, err := term.GetSize(int(f.Fd())); err == nil {
			return width
		}
	}
	return 0
}

// count shows done of total items of the work called verb ("requeueing"),
// with the rate since the start and the time left at that rate.
func (p *progress) count(verb string, done, total int) {
	elapsed := p.now().Sub(p.start)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(done) / elapsed.Seconds()
	}
	left := "time left unknown"
	if rate > 0 {
		left = "about " + round(time.Duration(float64(total-done)/rate*float64(time.Second))).String() + " left"
	}
	pct := 100
	if total > 0 {
		pct = done * 100 / total
	}
	if p.terminal {
		p.show(fmt.Sprintf("%s %s %d/%d %d%%, %.1f/s, %s", verb, bar(done, total), done, total, pct, rate, left))
		return
	}
	p.show(fmt.Sprintf("%s: %d of %d (%d%%), %.1f/s, %s (%s elapsed)", verb, done, total, pct, rate, left, round(elapsed)))
}

// show writes line: redrawn on a terminal, at most every plainEvery
// elsewhere.
func (p *progress) show(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if !p.terminal {
		if now.Sub(p.last) >= plainEvery {
			_, _ = fmt.Fprintln(p.w, line)
			p.last = now
		}
		return
	}
	if p.drawn && now.Sub(p.last) < redrawEvery {
		return
	}
	if p.width > 0 && len(line) >= p.width {
		line = line[:p.width-1]
	}
	_, _ = fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.drawn, p.last = true, now
}

// clear erases the line drawn on a terminal, before other output.
func (p *progress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		_, _ = fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// bar draws done out of total as a bar.
func bar(done, total int) string {
	n := barWidth
	if total > 0 {
		n = min(max(done, 0)*barWidth/total, barWidth)
	}
	return "[" + strings.Repeat("=", n) + strings.Repeat(" ", barWidth-n) + "]"
}
