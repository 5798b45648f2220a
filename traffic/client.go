package traffic

import (
	"math/rand/v2"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
)

// Client is what a workload needs of the client it runs on: its name, its
// PRNG streams, its Runtime and Conns, a way to start processes, and a way
// to record operations. *sim.Client implements it; so does the real-server
// backend's client (internal/realrun), whose processes are goroutines that
// run one at a time per client, as the simulation's do.
type Client interface {
	// Name identifies the client in the history.
	Name() string
	// Rand is a PRNG stream of the client's for component.
	Rand(component string) *rand.Rand
	// Runtime is the client's clock and scheduler.
	Runtime() lock.Runtime
	// Conn is a connection to group (a master's name).
	Conn(group string) (lock.Conn, error)
	// Go starts a process of the client running f.
	Go(name string, f func())
	// BeginOp records the call of an operation and returns its handle.
	BeginOp(lock, op string, args ...string) history.Op
}
