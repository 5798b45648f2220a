package difftest_test

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/locksim/locksim/internal/scripts"
)

// The fair lock's scripts take the caller's wall clock as an argument and
// keep waiters' timeouts, wall-clock times, as sorted-set scores: a score
// is the lock's PTTL (or the previous waiter's score minus the caller's
// clock) plus a wait plus the caller's clock. run passes each script the
// virtual time of its step (wallBase plus the advances so far) plus the
// step's clock offset, a multiple of grid drawn from clocks, as a client
// whose clock is ahead or behind. So a timeout's distance to a later
// caller's clock is, like a TTL on the grid, a multiple of grid minus n
// skews: never within 0.78 s of 0 on the positive side, and a score on
// redis-server, derived from a PTTL that real time has shortened, is only
// ever lower than miniredis's: whether a waiter counts as timed out is the
// same on every backend. Scores are compared as PTTLs are.
const wallBase int64 = 1_767_225_600_000 // 2026-01-01 UTC, in ms

var (
	clocks    = []time.Duration{0, 0, 0, 2 * time.Second, 5 * time.Second, -3 * time.Second}
	fairName  = "fair"
	fairQueue = "redisson_lock_queue:{fair}"
	fairTimes = "redisson_lock_timeout:{fair}"
)

// fairChannels are the waiters' own channels, on which fair_unlock and
// fair_force_unlock publish.
func fairChannels() []string {
	out := make([]string, len(owners))
	for i, o := range owners {
		out[i] = chanOf(fairName) + ":" + o
	}
	return out
}

// fair drives the fair lock's scripts (fair_acquire in both modes,
// reentrant and not; fair_unlock with and without the latch;
// fair_force_unlock; fair_dequeue) by three holders on one lock, each
// step with a clock offset, plus the reentrant lock's acquire on the same
// key (a Lock and a FairLock of one name share it) and plain SET NX PX,
// which gives the scripts a key of the wrong type.
var fair = family{
	channels: fairChannels(),
	draw: func(t *rapid.T) op {
		kind := rapid.SampledFrom([]string{"queue", "queue", "queue", "once", "unlock", "unlock", "unlock",
			"dequeue", "force", "reentrant", "advance", "advance", "advance", "set-nx-px"}).Draw(t, "kind")
		if kind == "advance" {
			return drawAdvance(t)
		}
		owner := rapid.SampledFrom(owners).Draw(t, "owner")
		lease := drawLease(t)
		clock := rapid.SampledFrom(clocks).Draw(t, "clock")
		keys := []string{fairName, fairQueue, fairTimes}
		var o op
		switch kind {
		case "queue", "once":
			reentrant := rapid.SampledFrom([]string{"1", "1", "0"}).Draw(t, "reentrant")
			o = op{script: scripts.FairAcquire, keys: keys, nowAt: 4, ttl: true,
				args: []any{lease, owner, drawLease(t), "now", kind, reentrant}}
		case "unlock":
			req := rapid.SampledFrom(unlReqs).Draw(t, "req")
			latch := rapid.SampledFrom([]string{"0", "1"}).Draw(t, "latch")
			o = op{script: scripts.FairUnlock, nowAt: 4,
				keys: append(keys, chanOf(fairName), "redisson_unlock_latch:{fair}:"+req),
				args: []any{"unlock", lease, owner, "now", drawLease(t), latch}}
		case "dequeue":
			o = op{script: scripts.FairDequeue, keys: []string{fairQueue, fairTimes}, args: []any{owner, drawLease(t)}}
		case "force":
			o = op{script: scripts.FairForceUnlock, keys: append(keys, chanOf(fairName)), nowAt: 2, args: []any{"force", "now"}}
		case "reentrant":
			o = op{script: scripts.ReentrantAcquire, keys: []string{fairName}, args: []any{lease, owner}, ttl: true}
		default: // set-nx-px
			return setNXPX(fairName, owner, lease)
		}
		if o.nowAt > 0 {
			o.clock = clock
			o.desc = fmt.Sprintf("%s %v %v (clock %+v)", o.script.Name, o.keys, o.args, clock)
		} else {
			o.desc = fmt.Sprintf("%s %v %v", o.script.Name, o.keys, o.args)
		}
		return o
	},
}

// TestDiffFairScripts: every fair lock script, with clocks that disagree.
func TestDiffFairScripts(t *testing.T) {
	rapid.Check(t, newEnv(t, fair).check)
}
