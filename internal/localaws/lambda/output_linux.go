package lambda

import (
	"os"
	"syscall"
	"unsafe"
)

// pipeEmpty reports whether a pipe has no unread bytes (FIONREAD).
func pipeEmpty(f *os.File) bool {
	sc, err := f.SyscallConn()
	if err != nil {
		return true
	}
	var n int32
	_ = sc.Control(func(fd uintptr) {
		_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
		if errno != 0 {
			n = 0
		}
	})
	return n == 0
}
