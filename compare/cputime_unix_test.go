//go:build unix

package compare

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time the test process has used so far (user and
// system, every thread: the garbage collector's included). Benchmarks
// report it per op next to the wall time, because on a machine shared with
// other jobs the wall time of a run varies by tens of percent while the CPU
// it used varies much less.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
