//go:build !linux

package bench

import "os/exec"

// setDeathSignal does nothing where there is no parent-death signal: a
// benchmark binary killed before TestMain's cleanup leaves its servers.
func setDeathSignal(*exec.Cmd) {}
