package realrun

import (
	"syscall"
	"time"
	"unsafe"
)

// workersSupported: Linux has one CLOCK_MONOTONIC for every process.
const workersSupported = true

// monoNow is CLOCK_MONOTONIC: one clock for every process of the machine,
// which neither a SIGSTOP nor a step of the wall clock moves (worker.go).
func monoNow() time.Duration {
	var ts syscall.Timespec
	const clockMonotonic = 1
	_, _, _ = syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockMonotonic, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

// workerProcAttr makes the kernel kill a worker when the coordinator's
// thread that started it dies (a crash, a kill -9): no worker outlives its
// run. The Go runtime does not end threads of goroutines that never lock
// one, as here.
func workerProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
