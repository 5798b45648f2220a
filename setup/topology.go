package setup

// The topology and client configuration: what a run's nodes and clients
// are, whichever backend runs them.

import (
	"fmt"
	"time"
)

// MaxDriftPPM bounds a clock's rate error, either way, in parts per
// million: a clock at half or one and a half times the true rate, far
// beyond any real machine's (NTP corrects a few hundred ppm), so that any
// drift a file may ask for is covered. A clock almost stopped (-999,999
// ppm) turned every span of its time into a million times as much world
// time, and a TTL of hours overflowed the simulation's durations (a run
// that panicked, or one that never ended).
const MaxDriftPPM = 500_000

// NodeConfig describes one Redis server of a run. The zero value but Name
// is the default server: no persistence, no drift, the fast script runner.
type NodeConfig struct {
	// Name identifies the node; a master's name is also its group's name.
	Name string
	// Persistence decides what survives Crash + Restart. Default PersistNone.
	Persistence Persistence
	// DriftPPM is the node clock's rate error in parts per million; TTLs on
	// this node run by that clock. Default 0; at most MaxDriftPPM either
	// way.
	DriftPPM int64
	// Lua chooses the script runner. Default LuaFast.
	Lua LuaMode
}

// ReplicaConfig describes how a replica follows its master. The zero value
// is a replica that applies every write at once.
type ReplicaConfig struct {
	// Lag is the delay between a write on the master and its application on
	// this replica (the replication stream is FIFO). Acknowledgements reach
	// the master when the write is applied. Default: fixed 0.
	Lag Dist
}

// ClientConfig describes one client process of a run. Its zero fields but
// Name take the backend's defaults (the simulation's are given with each
// field).
type ClientConfig struct {
	// Name identifies the client in the history.
	Name string
	// DriftPPM is the client clock's rate error; its sleeps, timers and
	// timeouts run by that clock. Default 0; at most MaxDriftPPM either
	// way.
	DriftPPM int64
	// Latency is the one-way network latency to every node, drawn per
	// message. Default: uniform 100-500 µs.
	Latency Dist
	// Timeout is how long one attempt waits for a reply (go-redis's
	// ReadTimeout, Redisson's timeout). Default 3 s.
	Timeout time.Duration
	// Retry is the retry policy after a timeout. Default NoRetry.
	Retry RetryPolicy
}

// Persistence is what a node keeps across a crash. Its values are ordered
// from keeping nothing to keeping every write, and PersistNone is the zero
// value, so that an unset field means a node that restarts empty.
type Persistence int

const (
	// PersistNone restarts empty (no RDB, no AOF).
	PersistNone Persistence = iota
	// PersistEverySec keeps writes made before the last whole-second fsync
	// (appendfsync everysec): up to a second of writes is lost.
	PersistEverySec
	// PersistAlways keeps every write the node applied (appendfsync always).
	PersistAlways
)

// persistenceNames are the Persistence values' names, by value: what a
// scenario file writes and String prints.
var persistenceNames = []string{"none", "everysec", "always"}

func (p Persistence) String() string {
	if int(p) >= 0 && int(p) < len(persistenceNames) {
		return persistenceNames[p]
	}
	return fmt.Sprintf("Persistence(%d)", int(p))
}

// ParsePersistence parses "none", "everysec" or "always", the names String
// prints, so that a mode read back from its name is the same mode.
func ParsePersistence(s string) (Persistence, error) {
	for i, n := range persistenceNames {
		if s == n {
			return Persistence(i), nil
		}
	}
	return 0, fmt.Errorf("setup: unknown persistence %q (want none, everysec or always)", s)
}

// LuaMode chooses how a simulated node runs EVAL and EVALSHA. Every mode
// gives the same replies and effects (pinned by the simulation's
// differential tests); they differ in speed and in whose code runs the
// script. LuaFast is the zero value, the default.
type LuaMode int

const (
	// LuaFast keeps one Lua state per node and compiles each script once,
	// as Redis does, and runs the lock library's hot scripts as their Go
	// twins, which give the same replies and effects as their text.
	// redis.call still goes through miniredis's own commands, so the data
	// semantics are miniredis's; only the script runner is locksim's.
	// About an order of magnitude faster than LuaMiniredis, because
	// miniredis builds a new Lua state for every EVAL.
	LuaFast LuaMode = iota
	// LuaMiniredis runs scripts with miniredis's own EVAL.
	LuaMiniredis
	// LuaInterpreted is LuaFast without the Go twins: every script is
	// interpreted by the node's Lua state. It replays a run with the lock
	// scripts' own text, to check a finding against it.
	LuaInterpreted
)

func (m LuaMode) String() string {
	switch m {
	case LuaFast:
		return "fast"
	case LuaMiniredis:
		return "miniredis"
	case LuaInterpreted:
		return "interpreted"
	}
	return fmt.Sprintf("LuaMode(%d)", int(m))
}
