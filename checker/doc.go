// Package checker turns a recorded history (sim.History) into verdicts:
// mutual exclusion on belief, ground truth, fencing, reentrancy, unlock
// idempotency, liveness, and linearizability against Porcupine models.
//
// # Op records
//
// Checkers read the op records (kind "op") that workloads (package traffic)
// write with sim.Client.BeginOp, in these conventions:
//
//   - Client is the client's name and Lock the lock's name.
//   - Args[0], when present and not empty, is the owner within the client
//     (reentrant locks): the holder is "client/owner". Locks without owners
//     (SimpleLock, the spec's RedLock) leave Args empty.
//   - "acquire" takes an exclusive hold; "acquire-read" a shared one (a
//     read-write lock's read half). Outcome ok, fail (refused, or wait timed
//     out) or unknown (open return). Result is the token, if the lock gives
//     one (lease token, fencing token). Detail may carry "lease=<duration>"
//     (explicit lease) or "watchdog".
//   - "release" and "release-read" give back one hold of the same kind; the
//     call time counts. Outcome ok (Result "1" when the lock was released,
//     "0" when holds remain, "" when the lock does not say), fail (not held),
//     or unknown.
//   - "expire": the holder's own estimate of its validity ran out (its lease
//     timer fired) or the watchdog told it the lock was lost (Detail "lost");
//     its belief ends there at any depth.
//   - "write": a write to a fenced resource, Result the token it carried,
//     Outcome ok (accepted) or fail (rejected as stale).
package checker
