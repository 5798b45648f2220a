package sim

// The pool of started miniredis servers that boot takes from and stop gives
// back to, instead of starting and closing one for every node of every run
// and every restart.

import (
	"sync"
	"sync/atomic"

	"github.com/alicebob/miniredis/v2"
)

// serverPool holds started miniredis servers, each indistinguishable from
// a fresh one (startServer) to everything a node can do with it. Starting
// one (NewMiniRedis, then Dial, which registers some 200 commands and
// serves a net.Pipe on a goroutine) and closing it was about 5% of a
// report's CPU; a node takes one here (takeServer) and gives it back when
// it stops (giveBackServer), which admits only a server that no command
// was ever dispatched to and that no test was handed.
//
// Why such a server, emptied, is indistinguishable from a fresh one. Its
// life, in every run that held it, was: boot set its pre-hook and its time
// (SetTime) and took database 0 (DB(0)); the node wrote and read database
// 0 through RedisDB's exported methods (Set, HSet, SetTTL, Del, ...: the
// short way of fastcmd.go, setKey, syncKey), which touch only that
// database's maps. Nothing went through Dispatch (TotalCommands is 0:
// every known command Dispatch runs counts; an unknown one only writes an
// error to its peer; one the pre-hook answers or refuses itself (PUBLISH,
// PUBSUB, another database) changes nothing in miniredis, and those it
// answers through miniredis count),
// and the node never handed the server out (exposed).
// Field by field, against NewMiniRedis + Dial:
//   - database 0's keys, values, TTLs, hash field TTLs and lru: emptied by
//     FlushAll (giveBackServer). Its keyVersion counts are kept (flush does
//     not clear them) and are only ever compared by EXEC with the count
//     WATCH read from the same map, as "has it grown since": counts that
//     start higher give the same answers. (The map grows by the keys each
//     life writes; the garbage collector's emptying of the pool bounds it.)
//   - other databases: none exist; the hook refuses SELECT, SWAPDB, MOVE
//     and COPY's DB option to one (refuseOtherDatabase), and only the
//     direct API (exposed) could make one.
//   - scripts (the EVALSHA cache), subscribers: only dispatched commands
//     (EVAL, SCRIPT LOAD, SUBSCRIBE, ...) or the direct API
//     (NewSubscriber) change them: empty, as fresh. A connection's state
//     (MULTI, WATCH, its name) is on the node's peers, one per
//     client, made anew each life.
//   - passwords, the selected database of the direct API, ClockTTL and its
//     last tick: only the direct API sets them: as fresh.
//   - the time (now): SetTime at every boot (tick, timeSet false).
//   - rand: nil, or seeded by a life that dispatched only unknown
//     commands or PUBLISH; either way seeded anew (seedRand) before the first
//     dispatch of every life, and only dispatched commands draw from it.
//   - Ctx: cancelled only by Close, never called on a pooled server.
//   - the server's commands table: never changed (the simulation registers
//     no command); its pre-hook: removed here, set at boot; its peers: none
//     (startServer waits for Dial's connection to end); connections served:
//     1, as fresh; commands served: 0 (the admission rule).
//
// All pooled servers being alike, which one a node gets (which depends on
// the worker and the order of runs) changes nothing, so a sync.Pool, which
// the garbage collector empties, holds them.
var serverPool sync.Pool

// serverReuses counts the servers takeServer took from the pool (tests
// check that recycling happened).
var serverReuses atomic.Int64

// noServerPool makes every boot start a fresh server and every stop close
// it (tests compare).
var noServerPool bool

// startServer starts a fresh miniredis without a listener: Dial starts its
// in-process server. Closing the connection and then the server (which
// waits for the goroutine serving that connection, but leaves the server
// usable through Dispatch and its databases) leaves nothing running behind
// the node.
func startServer() (*miniredis.Miniredis, error) {
	m := miniredis.NewMiniRedis()
	c, err := m.Dial()
	if err != nil {
		return nil, err
	}
	_ = c.Close()
	m.Server().Close()
	return m, nil
}

// takeServer returns a pooled server, or a fresh one.
func takeServer() (*miniredis.Miniredis, error) {
	if !noServerPool {
		if m, ok := serverPool.Get().(*miniredis.Miniredis); ok {
			serverReuses.Add(1)
			return m, nil
		}
	}
	return startServer()
}

// giveBackServer empties m and pools it if serverPool's admission rule
// holds (no command dispatched to it, never handed out: exposed tells),
// and closes it otherwise.
func giveBackServer(m *miniredis.Miniredis, exposed bool) {
	if noServerPool || exposed || m.Server().TotalCommands() != 0 {
		m.Close()
		return
	}
	m.Server().SetPreHook(nil)
	m.FlushAll()
	serverPool.Put(m)
}
