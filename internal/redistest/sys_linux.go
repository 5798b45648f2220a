package redistest

import "syscall"

// sysProcAttr makes the kernel kill a server when the test process dies
// (a panic, a timeout, kill -9), so that no redis-server outlives its test.
// Pdeathsig follows the thread that started the server; the Go runtime does
// not end threads of goroutines that never lock one, as here.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
