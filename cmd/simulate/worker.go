package main

import "github.com/locksim/locksim/internal/realrun"

// init runs the process as a client worker of a real run, and exits, when
// the run started it as one (internal/realrun/worker.go: a scenario that
// pauses a client runs each client as this executable started again, so
// that a pause is a real SIGSTOP). It is an init so that no flag parsing,
// and no test of this package, comes first.
func init() { realrun.MaybeWorker() }
