package redistest

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// sysProcAttr makes the kernel kill a server when the test process dies
// (a panic, a timeout, kill -9), so that no redis-server outlives its test.
// Pdeathsig follows the thread that started the server; the Go runtime does
// not end threads of goroutines that never lock one, as here.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// exited reports whether process pid has exited (a zombie not yet reaped),
// so that a server that failed at start is noticed at once.
func exited(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}
