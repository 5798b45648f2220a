//go:build !linux

package realrun

import (
	"syscall"
	"time"
)

// workersSupported: worker processes need one monotonic clock shared by
// processes (Linux's CLOCK_MONOTONIC, worker_linux.go).
const workersSupported = false

var monoStart = time.Now()

func monoNow() time.Duration { return time.Since(monoStart) }

func workerProcAttr() *syscall.SysProcAttr { return nil }
