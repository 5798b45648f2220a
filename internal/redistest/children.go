package redistest

import (
	"os"
	"sync"
)

// live are the child processes started and not yet reaped: this package's
// servers and sentinels, and what other packages Track (realrun's worker
// processes), each with the function that kills and reaps it.
var live = struct {
	sync.Mutex
	stop map[*os.Process]func()
}{stop: map[*os.Process]func(){}}

// Track records p, a child process just started, until the returned
// untrack is called (once p is reaped); stop kills and reaps it. StopAll
// stops every tracked process.
func Track(p *os.Process, stop func()) (untrack func()) {
	live.Lock()
	live.stop[p] = stop
	live.Unlock()
	return func() {
		live.Lock()
		delete(live.stop, p)
		live.Unlock()
	}
}

// StopAll kills (SIGKILL) every tracked process at once, then reaps each
// (its stop function), and returns how many there were. It is for a
// program about to exit without its normal clean-up (a second Ctrl-C):
// without it, the servers it started would die with it (Pdeathsig, on
// Linux) or run on, and either way wait, unreaped, for a parent that no
// longer exists (zombies where the system's first process does not reap
// orphans). Every process is signalled before any is reaped, so that a
// start or a stop under way elsewhere, which holds a server's lock while
// it waits for the process, ends at once.
func StopAll() int {
	live.Lock()
	stops := make([]func(), 0, len(live.stop))
	for p, stop := range live.stop {
		_ = p.Kill()
		stops = append(stops, stop)
	}
	live.Unlock()
	for _, stop := range stops {
		stop()
	}
	return len(stops)
}
