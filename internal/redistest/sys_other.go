//go:build !linux

package redistest

import "syscall"

// sysProcAttr: without Pdeathsig, servers are stopped by the test cleanup
// only.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// exited: unknown here; a failed start is noticed at the start timeout.
func exited(int) bool { return false }
