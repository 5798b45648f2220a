package sim

// The spin memo: a queued fair-lock waiter's fair_acquire answered
// without its redis.calls when nothing it reads can have changed.
//
// A waiter behind a queue head that does not take a free lock (paused, or
// dead and not yet timed out) runs fair_acquire once per round trip, and
// each run is the same reads: the queue's head and its timeout, the lock's
// existence, the head again, the waiter's hold, the waiter's timeout, the
// lock's PTTL. Such a run writes nothing, and its answer, max(0, PTTL),
// depends only on the three keys' contents, on ARGV (the clock, ARGV[4],
// only through the eviction loop's "timeout > now"), and on the lock's
// PTTL at the node's clock, -2 while there is no lock key: the answer 0.
// So the node keeps, for the last few such runs (by KEYS and ARGV but the
// clock), the node's write count after the run and the head's timeout the
// loop compared, and answers a repeat with 0, doing only what the run
// would do besides: its keys' expiry checked at the node's clock
// (expireKey, which deletes a key whose expiry is due), and the reads'
// mark on the keys' last use (miniredis's LRU clock, which OBJECT IDLETIME
// reads).
//
// The memo answers only what the run would answer, with the same effects:
//
//   - A run is kept only if it wrote nothing (the node's write count,
//     Node.writes, unchanged across it: no eviction, no key expired as it
//     was touched), every one of its redis.calls took the short way
//     (fastcmd.go: a call through Dispatch leaves a trace of its own,
//     miniredis's count of commands for INFO, which skipping it would
//     lose), and it found no lock key (PTTL -2). A waiter behind a held
//     lock is never kept (its PTTL is the lock's); it waits for that
//     PTTL, while behind a free lock it tries again at once.
//   - A repeat is answered only while the write count is the kept one:
//     any write on the node since (a command, another script, a key
//     expired, the replication stream, a restart's data) ends it, and no
//     lock key can have appeared. Node.writes is counted where every change
//     passes, not per key, and only grows (no ABA). miniredis's own per-key
//     version cannot serve: it is not exported, and any TTL rewritten (a
//     Dispatch command's syncCommand) raises it.
//   - Nor when checking one of the three keys at the node's clock would
//     delete it (its expiry due, a write the run would make and then see):
//     that is read before anything is done, since the run, taking another
//     path, might not look at every key.
//   - The head's timeout must still be after the new clock (clock jumps
//     move it either way); a head not compared (an empty queue, a head
//     without a timeout) does not depend on it.
//   - What else a run does is the same either way or invisible: no key is
//     written, so nothing is replicated, logged or recorded in the truth; the
//     reply reaches the req record by the same path; the script cache was
//     consulted before (EVALSHA's NOSCRIPT), and the twin was chosen by
//     its SHA1 and shape as always; the Lua state exists if the kept run
//     needed it (the node's engine, and its memo, live and die together).
//     What differs is bookkeeping no output reads: the count of commands
//     that took the short way (tests), ZSCORE's kept score texts, the
//     engine's command-name cache.
//   - A node that ran a command outside the commands table (exotic: MULTI's
//     queued commands reach miniredis without the hook) or handed its
//     database out (Miniredis, exposed) keeps no memo until it restarts.
//
// TestSpinMemoMatchesRuns runs random fair-lock sequences (spins, unlocks,
// dequeues, plain writes, interpreted scripts, time passing, clock jumps,
// restarts, failovers, a script cache flush, FLUSHALL) on a node with the
// memo and on one without, and requires equal replies, databases (values,
// TTLs as miniredis keeps them, the LRU clock, the per-key versions),
// truth, replication and histories after every step;
// TestSpinMemoMeetsDueKey a spin that meets a key whose expiry is due.

// spinSlots is how many runs the memo keeps: one per waiter spinning at
// once on a node (a fair lock's waiters each ask with their own field).
const spinSlots = 8

// spinMemo is a kept fair_acquire run: its KEYS and ARGV (ARGV[4], the
// clock, not compared), the node's write count after it, and where its
// eviction loop stopped.
type spinMemo struct {
	keys, argv []string
	writes     uint64
	head       fairHead
	ok         bool
}

// matches reports whether keys and argv are the kept run's, the clock
// aside.
func (m *spinMemo) matches(keys, argv []string) bool {
	if len(keys) != len(m.keys) || len(argv) != len(m.argv) || argv[1] != m.argv[1] {
		return false
	}
	for i, k := range keys {
		if k != m.keys[i] {
			return false
		}
	}
	for i, a := range argv {
		if i != 3 && a != m.argv[i] {
			return false
		}
	}
	return true
}

// spinMemoOn reports whether the node may keep and use spin memos.
func (n *Node) spinMemoOn() bool { return !n.exotic && !n.exposed && !n.noSpinMemo }

// spinFind is the kept run for keys and argv, or nil; with stale, also
// an entry that no longer holds (to be kept anew in its place).
func (e *luaEngine) spinFind(keys, argv []string, stale bool) *spinMemo {
	if e.spin == nil {
		return nil
	}
	for i := range e.spin {
		if m := &e.spin[i]; (m.ok || stale) && m.matches(keys, argv) {
			return m
		}
	}
	return nil
}

// spinKeep keeps a fair_acquire run (keys, argv; head, where its eviction
// loop stopped) that wrote nothing and sent nothing through Dispatch, and
// answered a queued waiter max(0, PTTL) with no lock key (PTTL -2). A run
// whose three keys are not distinct is not kept (not the library's shape,
// and spinAnswer's checks of their expiry would not hold).
func (e *luaEngine) spinKeep(keys, argv []string, head fairHead) {
	if !e.n.spinMemoOn() || keys[0] == keys[1] || keys[0] == keys[2] || keys[1] == keys[2] {
		return
	}
	if e.spin == nil {
		e.spin = new([spinSlots]spinMemo)
	}
	m := e.spinFind(keys, argv, true)
	if m == nil {
		m = &e.spin[e.spinNext]
		e.spinNext = (e.spinNext + 1) % len(e.spin)
		m.keys = append(m.keys[:0], keys...)
		m.argv = append(m.argv[:0], argv...)
	}
	m.writes, m.head, m.ok = e.n.writes, head, true
}

// spinAnswer answers fair_acquire (keys, argv, the clock now) from a kept
// run when it still holds (ok), with what running it would answer and do;
// ok false, having changed nothing, and the twin runs, otherwise.
func (e *luaEngine) spinAnswer(keys, argv []string, now float64) (v any, ok bool, err error) {
	n := e.n
	if !n.spinMemoOn() {
		return nil, false, nil
	}
	m := e.spinFind(keys, argv, false)
	if m == nil {
		return nil, false, nil
	}
	lk, queue, timeouts := keys[0], keys[1], keys[2]
	if n.writes != m.writes || (m.head.timed && !(m.head.timeout > now)) {
		return e.spinStale(m)
	}
	if n.syncDeletes(queue) || n.syncDeletes(timeouts) || n.syncDeletes(lk) {
		return e.spinStale(m)
	}
	// The run's first look at each key finds it not due (expireKey: no
	// key deleted, no TTL rewritten; the keys are distinct, so the checks
	// hold); its reads of the queue and the timeouts mark them used now
	// (miniredis's LRU clock, as EXISTS does: when they exist). The lock
	// key is still missing (making one is a write): the PTTL, -2, would
	// change nothing, and max(0, -2) is 0.
	n.notDue = append(n.notDue, queue, timeouts, lk)
	n.db.Exists(queue)
	n.db.Exists(timeouts)
	n.spinHits++
	return luaNumber(0), true, nil
}

// spinStale drops m, found no longer holding: something has changed, or
// the run will write (evict the head, or delete a key whose expiry is
// due). Nothing has been touched (the run may not look at every key).
func (e *luaEngine) spinStale(m *spinMemo) (any, bool, error) {
	m.ok = false
	e.n.spinStale++
	return nil, false, nil
}
