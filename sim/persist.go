package sim

// What a node keeps across a crash (Persistence: appendfsync always,
// everysec, or nothing), and the crash and restart that use it.

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/setup"
)

type logEntry struct {
	t      time.Duration
	states []keyEffect
}

// log makes effects durable according to the persistence mode.
func (n *Node) log(effects []keyEffect) {
	switch n.cfg.Persistence {
	case setup.PersistAlways:
		for _, e := range effects {
			n.durable[e.key] = e.st
		}
	case setup.PersistEverySec:
		n.fsync()
		n.pending = append(n.pending, logEntry{t: n.w.now, states: effects})
	}
}

// fsync moves into the durable state every logged write made before the last
// whole-second fsync instant (appendfsync everysec).
func (n *Node) fsync() {
	last := n.w.now - n.w.now%time.Second
	i := 0
	for ; i < len(n.pending) && n.pending[i].t < last; i++ {
		for _, e := range n.pending[i].states {
			n.durable[e.key] = e.st
		}
	}
	n.pending = n.pending[i:]
}

// Crash stops the node at once. In-flight replication from it is lost,
// blocked WAITs never answer, subscriptions end, and what a restart will load
// is fixed by the persistence mode.
func (n *Node) Crash() error {
	if !n.up {
		return fmt.Errorf("sim: crash %s: node is already down", n.name)
	}
	n.w.recordFault(history.FaultCrash, n.name, "", "persistence "+n.cfg.Persistence.String())
	switch n.cfg.Persistence {
	case setup.PersistAlways:
		n.saved = n.snapshot()
	case setup.PersistEverySec:
		n.fsync()
		n.saved = maps.Clone(n.durable)
	default:
		n.saved = nil
	}
	// What the crash destroys is gone from this instant, not from the
	// restart: a holder that believes in a key the crash lost has lost its
	// lock now, however long the node stays down. What the persistence
	// kept is the node's from this instant too, as it will say it again:
	// the version of the last fsync, where everysec's log had not yet
	// synced the newest write (an older holder's token or count, or a key
	// deleted since, which comes back).
	keys := append(slices.Sorted(maps.Keys(n.truth)), slices.Sorted(maps.Keys(n.saved))...)
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		n.noteTruth(k, n.saved[k]) // the zero keyState (gone) when not kept
	}
	n.up = false
	n.crashes++
	for _, l := range n.links {
		l.reset()
	}
	if n.upLink != nil {
		n.upLink.reset()
	}
	for _, pw := range n.waits { // a crashed node answers no WAIT, ever
		pw.done = true
		if pw.timeout != nil {
			pw.timeout.Cancel()
		}
	}
	n.waits = nil
	n.dropBlocked()
	for _, ch := range slices.Sorted(maps.Keys(n.subs)) {
		for _, s := range n.subs[ch] {
			s.lost(n)
		}
	}
	n.subs = map[string][]*simSub{}
	n.stop()
	if n.truthTimer != nil {
		n.truthTimer.Cancel()
		n.truthTimer = nil
	}
	return nil
}

// Restart starts a crashed node with what its persistence kept. If its group
// failed over meanwhile it comes back as a replica of the new master (as
// Sentinel reconfigures it); if it is still the master, its replicas resync
// from it, so a master restarted empty empties its replicas too, as in Redis.
func (n *Node) Restart() error {
	if n.up {
		return fmt.Errorf("sim: restart %s: node is up", n.name)
	}
	n.w.recordFault(history.FaultRestart, n.name, "", fmt.Sprintf("loaded %d keys", len(n.saved)))
	n.durable = maps.Clone(n.saved)
	if n.durable == nil {
		n.durable = map[string]keyState{}
	}
	n.pending = nil
	if err := n.boot(n.saved); err != nil {
		return err
	}
	// The truth has been what the node loads since the crash (Crash).
	n.saved = nil
	g := n.group
	if g.master == n {
		for _, l := range n.links {
			l.fullSync()
		}
	} else {
		n.master = nil
		n.links = nil
		g.master.attach(n)
	}
	n.armTruth()
	return nil
}
