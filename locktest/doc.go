// Package locktest tests a Redis lock of one's own with locksim, from a
// go test suite: the lock's code runs against simulated Redis nodes in
// virtual time, under the failures that break locks, and every run's
// history is checked for two holders, a holder without the lock, wrong
// answers, and a lock that stays unavailable.
//
// The lock is written against lock.Conn (its Redis commands and scripts)
// and lock.Runtime (its clock, timers and ids), never a Redis client or
// the wall clock of its own, so that the same code runs in production on
// go-redis (lock.NewRedisConn, lock.WallRuntime) and here:
//
//	type Lock interface {
//		Acquire(ctx context.Context, owner string) (Grant, error) // lock.ErrNotAcquired when held
//		Release(ctx context.Context, owner string, g Grant) error  // lock.ErrNotHeld when no longer held
//	}
//
// Grant.Value is what the lock wrote in its key for the holder (how the
// checkers recognise the holder on the nodes), Grant.Validity how long the
// holder may rely on it. An Impl is the lock's maker (a NewLock, which
// each simulated client calls with its connection, runtime, the lock key
// and its lease) and the model it claims (Simple, Reentrant, Fenced).
// Then:
//
//	Check(impl, opts...) ([]Result, error) // run it, one Result per seed
//	Run(t, impl, opts...) []Result         // Check, failing t on a safety violation
//	Find(impl, budget) (*Counterexample, error)
//	Search(t, impl, budget)                // rapid searches fault schedules, shrinks, saves
//
// The options choose the scenario: one of locksim's committed files by
// name (Scenario), a file (File), a text (YAML) or one built in Go (a
// Setup); the seeds (Seeds); real redis-server processes instead of the
// simulation (Redis); where failing runs' files go (Out); which kinds of
// finding fail Run (FailOn; by default every safety one). A committed
// scenario runs with the lock under test in place of its own: its
// topology, clients, faults and holding settings stay. A Result has the
// verdict, the timeline around a finding, the call that replays it, and
// writes the run's history, plots and Porcupine page (Result.Write).
//
// The lock is built with the client's lease: the checkers count a hold's
// expiry from it (a committed file's ttl or lease, a client's own where
// the file gives one, Setup.Lease), so the lock's key must live the lease
// its NewLock is given; 0 is a watchdog, a lock that keeps its key alive
// itself until the release. Runs are deterministic: one scenario and seed
// give one run, byte for byte, so every finding replays.
package locktest
