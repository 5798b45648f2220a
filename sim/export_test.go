package sim

import (
	"math/rand/v2"
	"time"

	"github.com/locksim/locksim/internal/scripts"
	"github.com/locksim/locksim/setup"
)

// The package's tests run with verifyTruth on: every time the truth timer
// fires, every key the truth knows is re-read and compared, so a change of a
// key that bypassed noteTruth fails the run that made it.
func init() { verifyTruth = true }

// VerifyTruth turns the truth check on or off (the benchmarks measure the
// simulation without it) and returns a function that restores the setting.
func VerifyTruth(on bool) (restore func()) {
	old := verifyTruth
	verifyTruth = on
	return func() { verifyTruth = old }
}

// DrainRecycled empties the pool of recycled history chunks, so that the
// next History starts on new memory.
func DrainRecycled() {
	for recycled.Get() != nil {
	}
}

// NativeRuns is how many scripts the node ran as their Go twins.
func (n *Node) NativeRuns() int { return n.nativeRuns }

// PlantNativeBug replaces a script's twin by a wrong one, a control for
// the differential tests, until restore is called:
//   - "unlock-publishes-elsewhere": reentrant_unlock's twin publishes its
//     release message on another channel than KEYS[2], so waiters never
//     hear of the release;
//   - "renew-anyones-lock": renew_batch's twin resets every key's TTL
//     without checking the holder;
//   - "fair-keeps-due-head": fair_acquire's twin reads its clock one ms
//     behind, so a queue head whose timeout is now stays (it evicts with
//     timeout >= now kept, the text with timeout > now);
//   - "fair-unlock-tells-nobody": fair_unlock's twin publishes to the next
//     waiter on another channel than KEYS[4]'s;
//   - "fair-dequeue-gives-no-time-back": fair_dequeue's twin takes no
//     wait off the timeouts of the waiters behind the one leaving.
func PlantNativeBug(bug string) (restore func()) {
	var sc, run = "", (func(e *luaEngine, keys, argv []string) (any, error))(nil)
	switch bug {
	case "unlock-publishes-elsewhere":
		sc, run = scripts.ReentrantUnlock.SHA, func(e *luaEngine, keys, argv []string) (any, error) {
			elsewhere := append([]string(nil), keys...)
			elsewhere[1] += "-elsewhere"
			return nativeReentrantUnlock(e, elsewhere, argv)
		}
	case "renew-anyones-lock":
		sc, run = scripts.RenewBatch.SHA, func(e *luaEngine, keys, argv []string) (any, error) {
			out := make([]any, len(keys))
			for i, k := range keys {
				r, err := e.callN("PEXPIRE", k, argv[0])
				if err != nil {
					return nil, err
				}
				out[i] = luaReply(r)
			}
			return out, nil
		}
	case "fair-keeps-due-head":
		sc, run = scripts.FairAcquire.SHA, func(e *luaEngine, keys, argv []string) (any, error) {
			behind := append([]string(nil), argv...)
			now, _ := luaDecimal(argv[3])
			behind[3] = luaFormat(now - 1)
			return nativeFairAcquire(e, keys, behind)
		}
	case "fair-unlock-tells-nobody":
		sc, run = scripts.FairUnlock.SHA, func(e *luaEngine, keys, argv []string) (any, error) {
			elsewhere := append([]string(nil), keys...)
			elsewhere[3] += "-elsewhere"
			return nativeFairUnlock(e, elsewhere, argv)
		}
	case "fair-dequeue-gives-no-time-back":
		sc, run = scripts.FairDequeue.SHA, func(e *luaEngine, keys, argv []string) (any, error) {
			return nativeFairDequeue(e, keys, []string{argv[0], "0"})
		}
	default:
		panic("PlantNativeBug: unknown bug " + bug)
	}
	for _, t := range twins { // the pinned SHA1: after an edit of the text, the twin that no longer runs
		if t.sc.SHA == sc {
			sc = t.sha
		}
	}
	old := natives[sc]
	natives[sc] = &nativeScript{name: old.name + " (planted bug)", fits: old.fits, run: run}
	return func() { natives[sc] = old }
}

// TwinPins lists each twin's script name, the SHA1 it is pinned to, and
// its script's current SHA1.
func TwinPins() (out [][3]string) {
	for _, t := range twins {
		out = append(out, [3]string{t.sc.Name, t.sha, t.sc.SHA})
	}
	return out
}

// FreeProcs is how many ended processes wait to be reused (recycle).
func (w *World) FreeProcs() int { return len(w.freeProcs) }

// Backoff is p's pause before retry i, drawn from a PCG seeded with seed.
func Backoff(p setup.RetryPolicy, i int, seed uint64) time.Duration {
	return p.Backoff(i, rand.New(rand.NewPCG(seed, 1)))
}

// CallsOnCarriers makes CallAll run its tasks as Parallel's (the
// reference of calltask_test.go) when on, until restore is called.
func CallsOnCarriers(on bool) (restore func()) {
	old := onCarriers
	onCarriers = on
	return func() { onCarriers = old }
}

// PlantCallRetryBug makes a lock.Caller task whose first attempt timed
// out give up without its retries, a control for the differential test,
// until restore is called.
func PlantCallRetryBug() (restore func()) {
	retryFrom = 1 << 30
	return func() { retryFrom = 1 }
}

// CallTasks counts the lock.Caller tasks of w that ended without a carrier
// (stepped) and those handed to one (carried).
func (w *World) CallTasks() (stepped, carried int) { return w.stepped, w.carried }

// SetMaxBulkLen sets the simulated nodes' proto-max-bulk-len (512 MiB) and
// returns a function that restores it.
func SetMaxBulkLen(n int64) (restore func()) {
	old := protoMaxBulkLen
	protoMaxBulkLen = n
	return func() { protoMaxBulkLen = old }
}

// SetMaxReplyBytes sets the longest reply the simulated nodes build and
// returns a function that restores it.
func SetMaxReplyBytes(n int64) (restore func()) {
	old := maxReplyBytes
	maxReplyBytes = n
	return func() { maxReplyBytes = old }
}
