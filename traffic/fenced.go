package traffic

import (
	"fmt"
	"sync"
	"time"
)

// Resource is a fenced resource in the simulated world (a storage service
// that checks fencing tokens): it accepts a write whose token is at least
// the highest it has seen (an equal token is the same holder writing again)
// and rejects a lower one as stale.
//
// Create one per resource name and world, and give the same *Resource to
// every client's workload. It starts no processes. In the simulation every
// call happens inside a simulated process, one at a time; a mutex makes it
// safe for the real-server backend too, whose clients run concurrently.
type Resource struct {
	name               string
	remote             func(token int64) bool
	mu                 sync.Mutex
	highest            int64
	accepted, rejected int
}

// NewResource returns an empty resource named name.
func NewResource(name string) *Resource { return &Resource{name: name} }

// NewRemoteResource returns a resource named name whose writes are
// another's: Write returns write(token). A real run's client worker process
// (internal/realrun) writes through it to the run's one resource, in the
// coordinating process; its own counters stay zero.
func NewRemoteResource(name string, write func(token int64) bool) *Resource {
	return &Resource{name: name, remote: write}
}

// Name is the resource's name: the Lock of its "write" records.
func (r *Resource) Name() string { return r.name }

// Write applies a write carrying token and reports whether it was accepted.
func (r *Resource) Write(token int64) bool {
	if r.remote != nil {
		return r.remote(token)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if token < r.highest {
		r.rejected++
		return false
	}
	r.highest = token
	r.accepted++
	return true
}

// Highest is the highest token accepted so far (0 before the first write).
func (r *Resource) Highest() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.highest
}

// Accepted and Rejected count the writes taken and refused so far.
func (r *Resource) Accepted() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.accepted
}

// Rejected counts the writes refused as stale so far.
func (r *Resource) Rejected() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rejected
}

// FencedWritesConfig is a workload of one client on a FencedLock that
// writes to a fenced resource while it holds the lock.
type FencedWritesConfig struct {
	// ReentrantConfig is the lock workload; Fenced is implied. Its
	// DefaultBelief is this workload's.
	ReentrantConfig
	// Resource receives the writes; shared by the clients of one world.
	Resource *Resource
	// Writes is how many writes each holding makes. Default 1. The hold is
	// split into Writes equal slices, each starting with a write.
	Writes int
	// WriteLatency is how long after its call a write takes effect at the
	// resource (a pause of the writer during it delays it further).
	WriteLatency time.Duration
}

// KindFenced is the fenced-writes workload's kind: its name in scenario
// files (algorithm.kind) and in errors.
const KindFenced = "fenced"

// fencedNames are FencedWrites's names; its stream keeps its first name.
var fencedNames = names{kind: KindFenced, stream: "fenced-writes"}

// FencedWrites starts a process on c that loops as Reentrant does, with a
// FencedLock, and during each holding makes Writes writes to the resource
// carrying the holding's latest fencing token. Each is a "write" op record
// (Lock the resource's name, Args [owner], Result the token, Outcome ok when
// accepted, fail when rejected as stale). The writer does not check its own
// validity before writing: the resource's check is what protects it.
func FencedWrites(c Client, cfg FencedWritesConfig) error {
	const kind = KindFenced
	if c == nil {
		return fmt.Errorf("traffic: %s: nil client", kind)
	}
	if cfg.Resource == nil {
		return fmt.Errorf("traffic: %s on client %s: nil resource", kind, c.Name())
	}
	if cfg.Resource.Name() == "" {
		return fmt.Errorf("traffic: %s on client %s: resource has an empty name", kind, c.Name())
	}
	if cfg.Writes < 0 {
		return fmt.Errorf("traffic: %s on client %s: negative writes %d", kind, c.Name(), cfg.Writes)
	}
	if err := checkDurations(kind, c.Name(), dur{"write latency", cfg.WriteLatency}); err != nil {
		return err
	}
	cfg.Fenced = true
	cfg.Locks = nil
	loops, lc, err := ownerLoops(c, fencedNames, cfg.DefaultBelief(), cfg.ReentrantConfig)
	if err != nil {
		return err
	}
	for _, lp := range loops {
		lp.l = reentrantLock(lc, cfg.ReentrantConfig)
		lp.res, lp.writes, lp.writeLatency = cfg.Resource, max(cfg.Writes, 1), cfg.WriteLatency
	}
	startLoops(c, kind, loops)
	return nil
}
