//go:build unix

package perfreport

import (
	"syscall"
	"time"
)

// processCPU is the user and system CPU time of this process (self) and
// of its children that have ended and been waited for (children): the
// local stack's Lambda processes, once stopped. ok is false where the
// system does not tell.
func processCPU() (self, children time.Duration, ok bool) {
	var s, c syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &s) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &c) != nil {
		return 0, 0, false
	}
	used := func(r syscall.Rusage) time.Duration { return time.Duration(r.Utime.Nano() + r.Stime.Nano()) }
	return used(s), used(c), true
}
