package bench

import (
	"os/exec"
	"syscall"
)

// setDeathSignal kills the server when the benchmark binary dies without
// reaching TestMain's cleanup (a test timeout, Ctrl-C).
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
