package lambda

import (
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// output reads a process's stdout and stderr through pipes and emits their
// lines. drain waits until what the process wrote has been emitted.
type output struct {
	stdoutR, stdoutW *os.File
	stderrR, stderrW *os.File
	readers          sync.WaitGroup
	// pending counts readers holding bytes not yet emitted.
	pending atomic.Int32
}

func newOutput(emit func(string)) (*output, error) {
	o := &output{}
	var err error
	if o.stdoutR, o.stdoutW, err = os.Pipe(); err != nil {
		return nil, err
	}
	if o.stderrR, o.stderrW, err = os.Pipe(); err != nil {
		_ = o.stdoutR.Close() // unused pipe; the Pipe error is the one to report
		_ = o.stdoutW.Close()
		return nil, err
	}
	for _, r := range []*os.File{o.stdoutR, o.stderrR} {
		o.readers.Add(1)
		go o.read(r, &lineWriter{emit: emit})
	}
	return o, nil
}

func (o *output) read(r *os.File, w *lineWriter) {
	defer o.readers.Done()
	defer func() { _ = r.Close() }() // read end at end of file: nothing is lost
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			o.pending.Add(1)
			_, _ = w.Write(buf[:n])
			o.pending.Add(-1)
		}
		if err != nil {
			w.flush()
			return
		}
	}
}

// closeWriters closes the parent's copies of the write ends once the child
// has them. Closing an open pipe end cannot lose data, so errors are ignored.
func (o *output) closeWriters() {
	_ = o.stdoutW.Close()
	_ = o.stderrW.Close()
}

// wait waits for the readers to reach end of file (the process exited).
func (o *output) wait() { o.readers.Wait() }

// drain waits, at most maxWait, until both pipes are empty and no reader is
// emitting.
func (o *output) drain(maxWait time.Duration) {
	deadline := time.Now().Add(maxWait)
	for time.Now().Before(deadline) {
		if o.pending.Load() == 0 && pipeEmpty(o.stdoutR) && pipeEmpty(o.stderrR) {
			// A reader may have taken bytes out of the pipe without having
			// counted them yet: look once more after it had a chance.
			time.Sleep(100 * time.Microsecond)
			if o.pending.Load() == 0 && pipeEmpty(o.stdoutR) && pipeEmpty(o.stderrR) {
				return
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
}
