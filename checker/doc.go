// Package checker turns a recorded history (package history: the
// simulation's or a real run's) into verdicts: mutual exclusion on belief, ground truth, fencing, reentrancy, unlock
// idempotency, resurrected locks, a fair lock's order of service
// (evicted waiters, out-of-order grants, stuck queues), liveness, and
// linearizability against Porcupine models. Kinds lists every kind of violation; Kind.Safety
// separates safety violations (two holders, a holder without the lock,
// stale writes, wrong hold counts or unlock answers) from availability
// ones (liveness, a resurrected lock that everyone waits out), so that
// reports can count them apart.
//
// Judge is the one entry point: given a history and a Config (the lock
// model, the end of the run, the budget, and the bounds: liveness, each
// client's longest wait) it runs every check once and returns the whole
// Verdict, which also carries what an expectation compares besides the
// violations (the fencing counts, the clients' waits). Check is Judge
// without a model or a bound; the oracles' own functions (Fencing,
// LivenessViolations, ClientWaits, Linearizable, ...) serve tests and
// reports.
//
// Every check runs within a Budget (Config.Budget, LinearizableWithin;
// Check and Linearizable use DefaultBudget): the memory a search holds, the model
// steps of a window's search, and each check's work over the history, all
// counted by the checks themselves, so that the same history gets the same
// verdict on any machine. A check that would exceed it gives up, and the
// verdict is Unknown with a note saying which check, where, and which bound.
//
// # What each oracle needs
//
// Mutual exclusion (by belief), fencing (stale writes, token regressions),
// linearizability and liveness read op records alone, so they judge a
// history a production system logged of its own lock calls. Silent loss,
// reentrancy, the resurrected lock and unlock idempotency compare those
// calls with what the nodes held, which only truth records state
// (TruthKinds); on lock operations without a single truth record Judge
// reports their kinds as not checked (Verdict.Unchecked, NoTruthNote),
// never as passed, and Verdict.Cleared tells such a verdict without a
// violation from one that found something or gave up. The fairness
// oracle follows each fair lock's queue (Config.Queues) in the truth too:
// given queues and no truth record, Judge reports its kinds as not
// checked in the same way (NoQueueTruthNote).
//
// # Op records
//
// Checkers read the op records (kind "op") that workloads (package traffic)
// record through traffic.Client.BeginOp (a history.Op), in these conventions:
//
//   - Client is the client's name and Lock the lock's name.
//   - Args[0], when present and not empty, is the owner within the client
//     (reentrant locks): the holder is "client/owner". Locks without owners
//     (SimpleLock, the spec's RedLock) leave Args empty.
//   - "acquire" takes an exclusive hold; "acquire-read" a shared one (a
//     read-write lock's read half). Outcome ok, fail (refused, or wait timed
//     out) or unknown (open return). Result is the token, if the lock gives
//     one (lease token, fencing token). Detail may carry "lease=<duration>"
//     (explicit lease) or "watchdog=<timeout>" (the watchdog keeps the hold,
//     its renewals giving the key that TTL; plain "watchdog" when unknown).
//   - "release" and "release-read" give back one hold of the same kind; the
//     call time counts. Outcome ok (Result "1" when the lock was released,
//     "0" when holds remain, "" when the lock does not say), fail (not held),
//     or unknown.
//   - "expire": the holder's own estimate of its validity ran out (its lease
//     timer fired), the watchdog told it the lock was lost (Detail "lost"),
//     or an extension failed (Detail "extend-failed"); its belief ends there
//     at any depth. When it ends depends on the workload's belief model
//     (traffic.Belief): a lease counted from the acquire's call or its reply;
//     the until-release model records none (its belief ends at the release).
//   - "extend": the holder of a lease (the spec's RedLock) extended it while
//     holding. Outcome ok (Result the token, Detail "validity=<duration>",
//     the new validity) or fail (no majority, or its validity had run out).
//     It neither starts nor ends a holding: Holdings and the linearizability
//     models ignore it, and the holding it extends lasts until its release
//     or an "expire" (a failed extension is followed by one, unless the
//     belief had ended already or the holder believes until its release). A lease kept alive by extensions outlives
//     the acquire's own lease; the models already take a hold past its lease
//     as possibly, never certainly, gone.
//   - "write": a write to a fenced resource, Result the token it carried,
//     Outcome ok (accepted) or fail (rejected as stale).
//
// # Req records
//
// The ground-truth oracles judge an unlock's answer against the master's
// state when the unlock took effect: the Applied times of the release
// command's req records (kind "req", one per Redis command a client sent,
// Args[0] the key). A history without them (a real server's) is judged at
// the unlock's call. Fencing orders tokens the same way: by when the node
// ran the acquire request that returned the token (a history without runs
// falls back on the acquires' returns).
package checker
