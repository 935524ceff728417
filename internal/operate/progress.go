package operate

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress shows the state of long work: on a terminal one line redrawn in
// place, otherwise a plain line at most every plainEvery. It is a display:
// errors writing it are ignored; the command's output reports its own.
type progress struct {
	mu       sync.Mutex // updates may come from several goroutines
	w        io.Writer
	terminal bool
	last     time.Time
	drawn    bool
	// flush, when not nil, writes out what other writers of w buffered.
	flush func()
}

// plainEvery is the least time between two progress lines off a terminal.
const plainEvery = 5 * time.Second

func (p *progress) update(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.flush != nil {
		p.flush()
	}
	if p.terminal {
		_, _ = fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.drawn = true
		return
	}
	if now := time.Now(); p.last.IsZero() || now.Sub(p.last) >= plainEvery {
		_, _ = fmt.Fprintln(p.w, line)
		p.last = now
	}
}

// done ends the progress line with a last line.
func (p *progress) done(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.flush != nil {
		p.flush()
	}
	if p.drawn {
		_, _ = fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
	_, _ = fmt.Fprintf(p.w, format+"\n", args...)
}

// bar draws a progress bar of done out of total.
func bar(done, total int) string {
	const width = 30
	if total <= 0 {
		return "[" + strings.Repeat("=", width) + "]"
	}
	n := done * width / total
	return fmt.Sprintf("[%s%s] %d/%d %3d%%", strings.Repeat("=", n), strings.Repeat(" ", width-n), done, total, done*100/total)
}
