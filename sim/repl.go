package sim

// Replication: a master's FIFO stream to each replica (delayed by the
// replica's lag, held by a partition, lost in a crash), the acknowledgements
// WAIT counts, and Failover, which promotes the replica that acknowledged
// the most.

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/locksim/locksim/history"
	"github.com/locksim/locksim/lock"
)

// replLink is the replication stream from a master to one replica: FIFO,
// delayed by the replica's lag, held while the two are partitioned, and lost
// when either side crashes.
type replLink struct {
	master, replica *Node
	rng             *rand.Rand
	queue           []replEntry
	lastDue         time.Duration
	acked           uint64 // highest offset the replica applied
	// ackedAt is when acked was last set, and ackedBefore what it was
	// before that instant: a WAIT timing out at ackedAt counts ackedBefore
	// (acks).
	ackedAt     time.Duration
	ackedBefore uint64
	pumpAt      *event // &pumpEv while the pump is scheduled
	pumpEv      event
}

type replEntry struct {
	due    time.Duration
	offset uint64
	states []keyEffect
	full   map[string]keyState // a full resync instead of states
}

// attach makes r a replica of n and starts a full resync. Any link r had
// from any node of the group (say, from before it crashed) is dropped first,
// so a replica is counted once by WAIT and never replicates from two masters.
func (n *Node) attach(r *Node) {
	for _, g := range n.group.nodes {
		g.links = slices.DeleteFunc(g.links, func(l *replLink) bool {
			if l.replica == r {
				l.reset()
				return true
			}
			return false
		})
	}
	l := &replLink{master: n, replica: r, rng: n.w.Rand("repl/" + n.name + ">" + r.name)}
	n.links = append(n.links, l)
	r.master = n
	r.upLink = l
	l.fullSync()
}

// fullSync ships the master's whole dataset, replacing the replica's.
func (l *replLink) fullSync() {
	if !l.master.up {
		return
	}
	l.send(replEntry{offset: l.master.offset, full: l.master.snapshot()})
}

func (l *replLink) send(e replEntry) {
	e.due = max(l.master.w.now+l.replica.replCfg.Lag.Sample(l.rng), l.lastDue)
	l.lastDue = e.due
	l.queue = append(l.queue, e)
	l.schedulePump(e.due)
}

func (l *replLink) schedulePump(at time.Duration) {
	if l.pumpAt != nil && l.pumpAt.pending() && l.pumpAt.at <= at {
		return
	}
	if l.pumpAt != nil {
		l.pumpAt.Cancel()
	}
	l.master.w.push(&l.pumpEv, at, (*linkPump)(l))
	l.pumpAt = &l.pumpEv
}

// linkPump runs the link's pump as an event.
type linkPump replLink

func (x *linkPump) run() { (*replLink)(x).pump() }

// pump applies every entry that is due, unless the link is cut or the
// replica is down (then entries wait for the heal; a restarted replica does a
// full resync instead).
func (l *replLink) pump() {
	w := l.master.w
	l.pumpAt = nil
	if !l.replica.up || !l.master.up || w.net.cut(l.master.name, l.replica.name) {
		return
	}
	r := l.replica
	applied := false
	for len(l.queue) > 0 && l.queue[0].due <= w.now {
		e := l.queue[0]
		l.queue[0] = replEntry{} // the applied entry's states are not kept
		if len(l.queue) == 1 {
			// Empty: the next entry reuses the slot (a link usually has
			// one write in flight), where slicing would shrink the
			// capacity until the next append allocated.
			l.queue = l.queue[:0]
		} else {
			l.queue = l.queue[1:]
		}
		r.tick()
		if e.full != nil {
			r.syncAll() // what has expired is not listed
			var effects []keyEffect
			for _, k := range r.db.Keys() {
				if _, ok := e.full[k]; !ok {
					r.setKey(k, keyState{})
					effects = append(effects, keyEffect{key: k})
				}
			}
			for _, k := range slices.Sorted(maps.Keys(e.full)) {
				r.setKey(k, e.full[k])
			}
			// The log gets the deletions too, or a persisted replica would
			// bring back at its next restart keys the resync removed.
			r.log(append(effects, fullEffects(e.full)...))
		} else {
			for _, s := range e.states {
				r.setKey(s.key, s.st)
			}
			r.log(e.states)
		}
		r.offset = e.offset
		l.ack(e.offset)
		applied = true
	}
	if applied {
		l.master.checkWaits()
	}
	if len(l.queue) > 0 {
		l.schedulePump(l.queue[0].due)
	}
}

func fullEffects(full map[string]keyState) []keyEffect {
	out := make([]keyEffect, 0, len(full))
	for _, k := range slices.Sorted(maps.Keys(full)) {
		out = append(out, keyEffect{key: k, st: full[k]})
	}
	return out
}

// reset drops everything in flight.
func (l *replLink) reset() {
	l.queue = nil
	l.lastDue = l.master.w.now
	if l.pumpAt != nil {
		l.pumpAt.Cancel()
		l.pumpAt = nil
	}
}

// kick delivers what is due after a partition heals.
func (l *replLink) kick() {
	if len(l.queue) > 0 {
		l.schedulePump(max(l.queue[0].due, l.master.w.now))
	}
}

// ack records that the replica applied everything up to offset, now.
func (l *replLink) ack(offset uint64) {
	if now := l.master.w.now; l.ackedAt != now {
		l.ackedBefore, l.ackedAt = l.acked, now
	}
	l.acked = offset
}

// pendingWait is a blocked WAIT.
type pendingWait struct {
	target  uint64
	want    int
	reply   func(any, error)
	timeout *event // its at is the WAIT's deadline in world time
	done    bool
}

// wait implements WAIT numreplicas timeout: it answers with the number of
// replicas that acknowledged the client's last write, as soon as that reaches
// numreplicas or when the timeout (ms of node time; 0 = forever) passes.
func (n *Node) wait(client string, args []string, reply func(any, error)) {
	if len(args) != 3 {
		reply(nil, lock.ReplyError("ERR wrong number of arguments for 'wait' command"))
		return
	}
	want, err1 := strconv.Atoi(args[1])
	ms, err2 := strconv.Atoi(args[2])
	if err1 != nil || err2 != nil || ms < 0 {
		reply(nil, lock.ReplyError(errNotInteger))
		return
	}
	if n.master != nil {
		reply(nil, lock.ReplyError("ERR WAIT cannot be used with replica instances."))
		return
	}
	pw := &pendingWait{target: n.clientOffset[client], want: want, reply: reply}
	if got := n.acks(pw.target, false); got >= want {
		reply(int64(got), nil)
		return
	}
	if ms > 0 {
		pw.timeout = n.w.after(n.clock.WorldSpan(time.Duration(ms)*time.Millisecond), func() {
			if !pw.done {
				pw.done = true
				pw.reply(int64(n.acks(pw.target, true)), nil)
			}
		})
	}
	n.waits = append(n.waits, pw)
}

// acks counts replicas that applied everything up to offset, by now, or
// with before only those that had before this instant: what a WAIT that
// times out now answers. A replica's acknowledgement is counted when it
// applies a write, but on Redis it then travels to the master (REPLCONF
// ACK), so it arrives strictly after the apply: one applied at the very
// instant a WAIT's timeout falls (a replica exactly its timeout behind,
// as Redisson's 1 s slavesSyncTimeout against a replica 1 s behind) comes
// too late for it, whatever the order in which the two events were
// scheduled (a write behind another in the replication stream has its
// apply scheduled after the timeout, one on an idle stream before).
func (n *Node) acks(offset uint64, before bool) int {
	c := 0
	for _, l := range n.links {
		acked := l.acked
		if before && l.ackedAt == n.w.now {
			acked = l.ackedBefore
		}
		if l.replica.up && acked >= offset {
			c++
		}
	}
	return c
}

// checkWaits answers the blocked WAITs that have their acknowledgements,
// but for one whose timeout falls now: the acknowledgements counted now
// came too late for it (acks), and its timeout answers it.
func (n *Node) checkWaits() {
	keep := n.waits[:0]
	for _, pw := range n.waits {
		if pw.done {
			continue
		}
		if pw.timeout != nil && pw.timeout.at <= n.w.now {
			keep = append(keep, pw)
			continue
		}
		if got := n.acks(pw.target, false); got >= pw.want {
			pw.done = true
			if pw.timeout != nil {
				pw.timeout.Cancel()
			}
			pw.reply(int64(got), nil)
			continue
		}
		keep = append(keep, pw)
	}
	n.waits = keep
}

// String describes a link for messages.
func (l *replLink) String() string { return fmt.Sprintf("%s>%s", l.master.name, l.replica.name) }

// Failover promotes replica to (or, if to is empty, the replica that has
// acknowledged the most) to master of group. The old master is crashed if it
// is still up; writes the new master had not received are lost; the other
// replicas resync from the new master; clients' next requests go to it.
func (w *World) Failover(group, to string) error {
	g, err := w.Group(group)
	if err != nil {
		return err
	}
	old := g.master
	var best *replLink
	for _, l := range old.links {
		if !l.replica.up {
			continue
		}
		if to != "" {
			if l.replica.name == to {
				best = l
			}
			continue
		}
		if best == nil || l.acked > best.acked {
			best = l
		}
	}
	if best == nil {
		if to != "" {
			return fmt.Errorf("sim: failover %s: %q is not a running replica of %s", group, to, old.name)
		}
		return fmt.Errorf("sim: failover %s: no running replica to promote", group)
	}
	nm := best.replica
	w.hist.add(history.Record{Kind: history.KindFault, T: int64(w.now), Op: history.FaultFailover, Node: group, Value: nm.name,
		Detail: fmt.Sprintf("%s -> %s, replica had offset %d of %d", old.name, nm.name, best.acked, old.offset)})
	if old.up {
		if err := old.Crash(); err != nil {
			return err
		}
	}
	others := slices.Clone(old.links)
	old.links = nil
	best.reset()
	nm.upLink = nil
	nm.master = nil
	g.master = nm
	for _, l := range others {
		if l != best && l.replica != nm && l.replica.up {
			l.reset()
			nm.attach(l.replica)
		}
	}
	return nil
}
