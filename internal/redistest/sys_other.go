//go:build !linux

package redistest

import "syscall"

// sysProcAttr: without Pdeathsig, servers are stopped by the test cleanup
// only.
func sysProcAttr() *syscall.SysProcAttr { return nil }
